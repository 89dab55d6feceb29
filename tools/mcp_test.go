package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/script"
	"github.com/agentty/agentty/internal/mcptest"
)

// everything returns the path of the server-everything MCP server,
// installed with npm on first use (mcptest).
func everything(t *testing.T) string { return mcptest.Everything(t) }

func toolNamed(tools []engine.Tool, name string) (engine.Tool, bool) {
	for _, t := range tools {
		if t.Name == name {
			return t, true
		}
	}
	return engine.Tool{}, false
}

func TestMCPStdio(t *testing.T) {
	server := everything(t)
	m := StartMCP(context.Background(), map[string]MCPServer{
		"everything": {Command: "node", Args: []string{server, "stdio"}},
		"missing":    {Command: "agentty-no-such-mcp-server"},
	}, MCPConfig{Timeout: 20 * time.Second})
	st := m.Status()
	if len(st) != 2 || !st[0].OK || st[0].Tools < 5 || st[1].OK || !strings.Contains(st[1].Error, `command "agentty-no-such-mcp-server" not found`) {
		t.Fatalf("status = %+v", st)
	}
	tools := m.Tools()
	for _, name := range []string{"everything__echo", "everything__get-sum"} {
		if _, ok := toolNamed(tools, name); !ok {
			t.Errorf("no %s among %d tools", name, len(tools))
		}
	}

	// An agent run with a scripted model calls echo, get-sum, and a tool
	// that errors on the server's side; every call goes through the engine.
	reg, err := engine.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := script.Parse("mcp", []byte(`{"turns":[
		{"tool_calls":[
			{"name":"everything__echo","arguments":{"message":"hello mcp"}},
			{"name":"everything__get-sum","arguments":{"a":17,"b":25}},
			{"name":"everything__gzip-file-as-resource","arguments":{"name":"x.gz","data":"ftp://example.invalid/x"}},
			{"name":"everything__get-sum","arguments":{"a":"not a number"}}]},
		{"answer":"done"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Config{Model: sc, Tools: reg})
	var results []*engine.ToolFinished
	sink := engine.SinkFunc(func(ev engine.Event) error {
		if d, ok := ev.Data.(*engine.ToolFinished); ok {
			results = append(results, d)
		}
		return nil
	})
	if res := e.Run(context.Background(), engine.NewSession("s"), "use the server", sink); res.StopReason != engine.StopAnswered {
		t.Fatal(res.Err)
	}
	byName := map[string]*engine.ToolFinished{}
	for _, r := range results {
		byName[fmt.Sprint(r.Index)] = r
	}
	if r := byName["0"]; r.Status != "ok" || !strings.Contains(r.Result, "hello mcp") {
		t.Errorf("echo: %+v", r)
	}
	if r := byName["1"]; r.Status != "ok" || !strings.Contains(r.Result, "42") {
		t.Errorf("get-sum: %+v", r)
	}
	if r := byName["2"]; r.Status != "error" || !strings.Contains(r.Result, "Unsupported URL protocol") {
		t.Errorf("a tool that errors: %+v", r)
	}
	if r := byName["3"]; r.Status != "error" || !strings.Contains(r.Result, "arguments do not match the schema") {
		t.Errorf("bad arguments are caught before the server: %+v", r)
	}

	// Kill the server: the next call starts it again.
	s := m.servers["everything"]
	s.mu.Lock()
	pid := s.cmd.Process.Pid
	s.mu.Unlock()
	syscall.Kill(pid, syscall.SIGKILL)
	time.Sleep(100 * time.Millisecond)
	echo, _ := toolNamed(tools, "everything__echo")
	out, err := echo.Func(context.Background(), &engine.Call{Args: json.RawMessage(`{"message":"back again"}`)})
	if err != nil || !strings.Contains(out, "back again") {
		t.Errorf("after a kill: %q, %v", out, err)
	}
	s.mu.Lock()
	newPid := s.cmd.Process.Pid
	s.mu.Unlock()
	if newPid == pid {
		t.Errorf("the server was not started again")
	}
	// Close ends the server process.
	m.Close()
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(newPid, 0) == nil {
		if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", newPid)); strings.Contains(string(st), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server %d still runs after Close", newPid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMCPStreamableHTTP(t *testing.T) {
	server := everything(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("node", server, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the HTTP server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	m := StartMCP(context.Background(), map[string]MCPServer{"web": {URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}}, MCPConfig{Timeout: 20 * time.Second})
	defer m.Close()
	if st := m.Status(); !st[0].OK {
		t.Fatalf("status %+v", st)
	}
	echo, ok := toolNamed(m.Tools(), "web__echo")
	if !ok {
		t.Fatal("no web__echo")
	}
	out, err := echo.Func(context.Background(), &engine.Call{Args: json.RawMessage(`{"message":"over http"}`)})
	if err != nil || !strings.Contains(out, "over http") {
		t.Errorf("echo over HTTP: %q, %v", out, err)
	}
}
