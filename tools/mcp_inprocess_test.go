package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentty/agentty/engine"
)

type greetIn struct {
	Name string `json:"name"`
}

// TestMCPToolListChange serves MCP from the go-sdk's own server over
// streamable HTTP, adds a tool while agentty is connected, and checks that
// the new tool arrives through the change notification.
func TestMCPToolListChange(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "says hello"},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + in.Name}}}, nil, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer srv.Close()

	var changes atomic.Int32
	m := StartMCP(context.Background(), map[string]MCPServer{"local": {URL: srv.URL}}, MCPConfig{Timeout: 5 * time.Second, OnChange: func() { changes.Add(1) }})
	defer m.Close()
	if st := m.Status(); !st[0].OK || st[0].Tools != 1 {
		t.Fatalf("status %+v", st)
	}
	greet, _ := toolNamed(m.Tools(), "local__greet")
	if out, err := greet.Func(context.Background(), &engine.Call{Args: json.RawMessage(`{"name":"Ada"}`)}); err != nil || out != "hello Ada" {
		t.Errorf("greet = %q, %v", out, err)
	}
	reg, err := engine.NewRegistry(m.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	json.Unmarshal(greet.Schema, &schema)
	if props, _ := schema["properties"].(map[string]any); props["name"] == nil {
		t.Errorf("the server's schema was not kept: %s", greet.Schema)
	}

	mcp.AddTool(server, &mcp.Tool{Name: "shout", Description: "says it loudly"},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(in.Name)}}}, nil, nil
		})
	deadline := time.Now().Add(5 * time.Second)
	for changes.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no tool-list change arrived")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := reg.Replace(m.Tools()...); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Lookup("local__shout"); !ok {
		t.Errorf("the new tool is not in the registry: %v", reg.Names())
	}
}

// TestMCPHangAndExit: a server that never answers is reported in time, and
// Close ends the stdio servers it started.
func TestMCPHangAndExit(t *testing.T) {
	start := time.Now()
	m := StartMCP(context.Background(), map[string]MCPServer{"mute": {Command: "sleep", Args: []string{"30"}}}, MCPConfig{Timeout: 300 * time.Millisecond})
	st := m.Status()
	if st[0].OK || !strings.Contains(st[0].Error, "did not start") || time.Since(start) > 5*time.Second {
		t.Errorf("a hanging server: %+v after %s", st, time.Since(start))
	}
	m.Close()
}

func TestToolName(t *testing.T) {
	for _, tc := range []struct{ server, tool, want string }{
		{"everything", "get-sum", "everything__get-sum"},
		{"my.server", "read file", "my_server__read_file"},
		{"s", strings.Repeat("x", 80), "s__" + strings.Repeat("x", 61)},
	} {
		if got := ToolName(tc.server, tc.tool); got != tc.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
		}
	}
}

// TestMCPToolWithoutAnObjectSchema: a server's tool whose inputSchema is
// not an object ({"type":"string"}, which the go-sdk's server would not
// list itself: a middleware rewrites the list) is not offered, since a
// model's function takes an object of arguments and an OpenAI server
// refuses the whole request otherwise; the status warns, naming server
// and tool, and the server's other tools are offered.
func TestMCPToolWithoutAnObjectSchema(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	hello := func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + in.Name}}}, nil, nil
	}
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "says hello"}, hello)
	mcp.AddTool(server, &mcp.Tool{Name: "stringy", Description: "takes a string"}, hello)
	mcp.AddTool(server, &mcp.Tool{Name: "boolean", Description: "takes anything"}, hello)
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if list, ok := res.(*mcp.ListToolsResult); ok {
				for _, tool := range list.Tools {
					switch tool.Name {
					case "stringy":
						tool.InputSchema = map[string]any{"type": "string"}
					case "boolean":
						tool.InputSchema = true
					}
				}
			}
			return res, err
		}
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer srv.Close()

	m := StartMCP(context.Background(), map[string]MCPServer{"local": {URL: srv.URL}}, MCPConfig{Timeout: 5 * time.Second})
	defer m.Close()
	var names []string
	for _, tool := range m.Tools() {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "local__greet" {
		t.Errorf("tools %v, want local__greet alone", names)
	}
	st := m.Status()
	if len(st) != 1 || !st[0].OK || st[0].Tools != 1 {
		t.Errorf("status %+v, want 1 tool", st)
	}
	for _, want := range []string{
		`tool stringy is not offered: its inputSchema is {"type":"string"}, not an object`,
		`tool boolean is not offered: its inputSchema is true, not an object`,
	} {
		if len(st) == 1 && !strings.Contains(st[0].Warning, want) {
			t.Errorf("warning %q, want %q", st[0].Warning, want)
		}
	}
}

// TestMCPEntryKeys: an entry's enabled and disabled tools decide what is
// offered, its allow list makes a tool run without asking, its tool
// timeout bounds a call, and its headers helper's output is sent with
// every request, over the entry's own headers.
func TestMCPEntryKeys(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	for _, name := range []string{"read_entities", "create_entities", "delete_entities"} {
		mcp.AddTool(server, &mcp.Tool{Name: name, Description: name},
			func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
			})
	}
	var seen atomic.Value
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("X-Team"))
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	entry := MCPServer{URL: srv.URL, Headers: map[string]string{"X-Team": "from-entry", "Authorization": "stale"},
		EnabledTools: []string{"read_entities", "create_entities", "delete_entities"}, DisabledTools: []string{"delete_entities"},
		Allow: []string{"create_entities"}, ToolTimeout: 7 * time.Second,
		HeaderFunc: HeadersHelper(`printf '{"Authorization":"Bearer from-helper"}'`, t.TempDir(), nil)}
	m := StartMCP(context.Background(), map[string]MCPServer{"mem": entry}, MCPConfig{Timeout: 5 * time.Second})
	defer m.Close()
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "mem__create_entities,mem__read_entities" {
		t.Fatalf("offered: %v", names)
	}
	create, _ := toolNamed(m.Tools(), "mem__create_entities")
	read, _ := toolNamed(m.Tools(), "mem__read_entities")
	if create.Policy != engine.PolicyAllow || read.Policy != engine.PolicyAsk || create.Timeout != 7*time.Second {
		t.Errorf("create %s %v, read %s", create.Policy, create.Timeout, read.Policy)
	}
	if got, _ := seen.Load().(string); got != "Bearer from-helper|from-entry" {
		t.Errorf("headers sent: %q", got)
	}
	// A helper that fails keeps the server from starting, saying why.
	bad := entry
	bad.HeaderFunc = HeadersHelper("echo not json", t.TempDir(), nil)
	m2 := StartMCP(context.Background(), map[string]MCPServer{"mem": bad}, MCPConfig{Timeout: 5 * time.Second})
	defer m2.Close()
	if st := m2.Status(); st[0].OK || !strings.Contains(st[0].Error, "headers helper") || !strings.Contains(st[0].Error, "JSON object") {
		t.Errorf("status %+v", st)
	}
}

// TestMCPStdioCwd: a stdio server starts in its entry's folder.
func TestMCPStdioCwd(t *testing.T) {
	dir := t.TempDir()
	entry := testServer("plain")
	entry.Dir = dir
	m := StartMCP(context.Background(), map[string]MCPServer{"s": entry}, MCPConfig{Timeout: 20 * time.Second})
	defer m.Close()
	if st := m.Status(); !st[0].OK {
		t.Fatalf("status %+v", st)
	}
	if m.servers["s"].cmd.Dir != dir {
		t.Errorf("started in %q", m.servers["s"].cmd.Dir)
	}
}

// TestHeadersHelperIsBounded: a helper whose child keeps its output open
// past the deadline is killed with it, and the wait ends.
func TestHeadersHelperIsBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := HeadersHelper("sleep 30 & sleep 30; echo {}", t.TempDir(), nil)(ctx)
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("err %v after %v", err, time.Since(start))
	}
}

// TestMCPStartErrorHidesURLSecrets: a server that does not start is said
// without the api_key its URL carries.
func TestMCPStartErrorHidesURLSecrets(t *testing.T) {
	m := StartMCP(context.Background(), map[string]MCPServer{"remote": {URL: "http://127.0.0.1:9/mcp?api_key=sk-secret-123&x=1"}}, MCPConfig{Timeout: 2 * time.Second})
	defer m.Close()
	st := m.Status()
	if st[0].OK || strings.Contains(st[0].Error, "sk-secret-123") || !strings.Contains(st[0].Error, "api_key=[redacted]") {
		t.Errorf("status %+v", st)
	}
}

// TestHeadersHelperOutputIsCapped: a helper that prints far more than the
// cap is stopped at it and said to have printed too much; what it printed
// is not held (the cap once sat on a Write that os/exec never called,
// because an embedded bytes.Buffer lent the writer its ReadFrom).
func TestHeadersHelperOutputIsCapped(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := HeadersHelper("head -c 100000000 /dev/zero", t.TempDir(), nil)(context.Background())
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "printed more than 65536 bytes") {
		t.Errorf("err %v, want 'printed more than 65536 bytes'", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("reading the helper allocated %d MB, want it bounded by the cap", grew>>20)
	}
	// The next helper, a good one, still works.
	h, err := HeadersHelper(`printf '{"A":"b"}'`, t.TempDir(), nil)(context.Background())
	if err != nil || h["A"] != "b" {
		t.Errorf("the next helper: %v %v", h, err)
	}
}
