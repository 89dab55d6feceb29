package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentty/agentty/engine"
)

// TestMain lets the test binary be a real MCP server (the go-sdk's, over
// stdio) when AGENTTY_TEST_MCP names how it should misbehave; the tests
// below start it as a stdio server.
func TestMain(m *testing.M) {
	if mode := os.Getenv("AGENTTY_TEST_MCP"); mode != "" {
		os.Exit(serveTestMCP(mode))
	}
	if dir := os.Getenv("AGENTTY_TEST_SHELL_IN"); dir != "" {
		os.Exit(shellUntilKilled(dir))
	}
	os.Exit(m.Run())
}

type appendIn struct {
	Path  string `json:"path"`
	Text  string `json:"text"`
	Sleep int    `json:"sleep_ms,omitempty"`
}

// serveTestMCP serves the tools append (writes a line to a file, then
// sleeps), look (read-only) and chatter (prints a line that is not
// JSON-RPC before it answers). mode "banner" prints a banner on stdout
// first; "fail" says why on stderr and exits.
func serveTestMCP(mode string) int {
	switch mode {
	case "fail":
		fmt.Fprintln(os.Stderr, "starting the test server")
		fmt.Fprintln(os.Stderr, "Error: None of the specified directories are accessible")
		return 1
	case "banner":
		fmt.Println("[dotenv@17.2.1] injecting env (3) from .env")
	}
	fmt.Fprintln(os.Stderr, "test server ready")
	s := mcp.NewServer(&mcp.Implementation{Name: "crashy", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "append", Description: "appends a line to a file"},
		func(_ context.Context, _ *mcp.CallToolRequest, in appendIn) (*mcp.CallToolResult, any, error) {
			f, err := os.OpenFile(in.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				return nil, nil, err
			}
			fmt.Fprintln(f, in.Text)
			f.Close()
			time.Sleep(time.Duration(in.Sleep) * time.Millisecond)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "appended"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "look", Description: "reads nothing", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pid " + strconv.Itoa(os.Getpid())}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "chatter", Description: "prints junk, then answers"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stdout, "debug: not a JSON-RPC message")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "still here"}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// testServer is the test binary as an MCP server in mode.
func testServer(mode string) MCPServer {
	return MCPServer{Command: os.Args[0], Env: map[string]string{"AGENTTY_TEST_MCP": mode}}
}

func callTool(t *testing.T, m *MCP, name, args string) (string, error) {
	t.Helper()
	tool, ok := toolNamed(m.Tools(), name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tool.Func(context.Background(), &engine.Call{Args: json.RawMessage(args)})
}

// serverPid is the pid of the server's process now.
func serverPid(m *MCP, name string) int {
	s := m.servers[name]
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd.Process.Pid
}

// TestMCPCallNotSentTwice: a server killed while a call runs (its side
// effect done, its answer not sent) does not get the call again; the call
// ends with an error saying so, and the next call starts the server again.
func TestMCPCallNotSentTwice(t *testing.T) {
	m := StartMCP(context.Background(), map[string]MCPServer{"crashy": testServer("plain")}, MCPConfig{Timeout: 20 * time.Second, LogDir: t.TempDir()})
	defer m.Close()
	if st := m.Status(); !st[0].OK {
		t.Fatalf("status %+v", st)
	}
	file := filepath.Join(t.TempDir(), "effects.txt")
	pid := serverPid(m, "crashy")
	appendTool, ok := toolNamed(m.Tools(), "crashy__append")
	if !ok {
		t.Fatal("no crashy__append")
	}
	done := make(chan error, 1)
	go func() {
		_, err := appendTool.Func(context.Background(), &engine.Call{Args: json.RawMessage(fmt.Sprintf(`{"path":%q,"text":"first","sleep_ms":60000}`, file))})
		done <- err
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, _ := os.ReadFile(file); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call never reached the server")
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not end when its server died")
	}
	if !errors.Is(err, ErrMCPServerDied) || !strings.Contains(err.Error(), "test server ready") {
		t.Errorf("the interrupted call: %v; want ErrMCPServerDied with the server's last words", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "first\n" {
		t.Fatalf("after the kill the file holds %q: the call was sent again", b)
	}
	out, err := callTool(t, m, "crashy__append", fmt.Sprintf(`{"path":%q,"text":"second"}`, file))
	if err != nil || out != "appended" {
		t.Fatalf("the next call: %q, %v", out, err)
	}
	if b, _ := os.ReadFile(file); string(b) != "first\nsecond\n" {
		t.Errorf("the file holds %q, want each call's line once", b)
	}
	if serverPid(m, "crashy") == pid {
		t.Error("the server was not started again for the next call")
	}
}

// TestMCPChatterIsSkipped: a banner before the first message and a stray
// line mid-stream are skipped with a warning; the server keeps working.
func TestMCPChatterIsSkipped(t *testing.T) {
	logs := t.TempDir()
	m := StartMCP(context.Background(), map[string]MCPServer{"noisy": testServer("banner")}, MCPConfig{Timeout: 20 * time.Second, LogDir: logs})
	defer m.Close()
	st := m.Status()
	if !st[0].OK || !strings.Contains(st[0].Warning, "[dotenv") {
		t.Fatalf("status %+v; want the server up, with a warning quoting the banner", st)
	}
	for range 3 {
		if out, err := callTool(t, m, "noisy__chatter", `{}`); err != nil || out != "still here" {
			t.Fatalf("chatter: %q, %v", out, err)
		}
	}
	if out, err := callTool(t, m, "noisy__look", `{}`); err != nil || !strings.HasPrefix(out, "pid ") {
		t.Errorf("look after the chatter: %q, %v", out, err)
	}
	if st := m.Status(); !strings.Contains(st[0].Warning, "skipped 4 line(s)") {
		t.Errorf("warning %q; want 4 lines counted", st[0].Warning)
	}
	m.Close()
	b, err := os.ReadFile(filepath.Join(logs, "noisy.log"))
	if err != nil || !strings.Contains(string(b), "test server ready") || strings.Count(string(b), "not a JSON-RPC message") != 3 {
		t.Errorf("the server's log: %v\n%s", err, b)
	}
	if fi, err := os.Stat(filepath.Join(logs, "noisy.log")); err == nil && fi.Mode().Perm() != 0o600 {
		t.Errorf("the log is %v, want 0600", fi.Mode().Perm())
	}
}

// TestMCPStartFailureSaysWhy: a server that fails to start is reported
// with what it printed on stderr, not only "EOF".
func TestMCPStartFailureSaysWhy(t *testing.T) {
	m := StartMCP(context.Background(), map[string]MCPServer{"broken": testServer("fail")}, MCPConfig{Timeout: 20 * time.Second})
	defer m.Close()
	st := m.Status()
	if st[0].OK || !strings.Contains(st[0].Error, "None of the specified directories are accessible") {
		t.Errorf("status %+v; want the server's own error", st)
	}
}

// TestMCPPolicyFollowsAnnotations: a read-only tool runs without asking,
// any other asks, and the server's entry can set one for all.
func TestMCPPolicyFollowsAnnotations(t *testing.T) {
	trusting := testServer("plain")
	trusting.Policy = engine.PolicyAllow
	m := StartMCP(context.Background(), map[string]MCPServer{"a": testServer("plain"), "b": trusting}, MCPConfig{Timeout: 20 * time.Second})
	defer m.Close()
	want := map[string]engine.Policy{
		"a__look": engine.PolicyAllow, "a__append": engine.PolicyAsk, "a__chatter": engine.PolicyAsk,
		"b__look": engine.PolicyAllow, "b__append": engine.PolicyAllow,
	}
	for name, p := range want {
		if tool, ok := toolNamed(m.Tools(), name); !ok || tool.Policy != p {
			t.Errorf("%s: policy %q (found %v), want %q", name, tool.Policy, ok, p)
		}
	}
}
