package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/internal/mcptest"
)

func TestReadFileEscapeIsRefused(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("inside\n"), 0o644)
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"read_file","arguments":{"path":"../../etc/passwd"}},{"name":"read_file","arguments":{"path":"notes.txt"}}]},{"answer":"done"}]}`)
	code, out, errs := runCLI(t, context.Background(), nil, "run", "--workspace", ws, "--json", "--model", "script:"+sc, "read it")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "root:") {
		t.Fatalf("/etc/passwd was read:\n%s", out)
	}
	if !strings.Contains(out, `refused: ../../etc/passwd is outside the workspace`) || !strings.Contains(out, `inside`) {
		t.Errorf("results:\n%s", out)
	}
}

func TestWriteNeedsApproval(t *testing.T) {
	ws := t.TempDir()
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"out.txt","content":"hi"}}]},{"answer":"done"}]}`)
	code, _, errs := runCLI(t, context.Background(), nil, "run", "--workspace", ws, "--model", "script:"+sc, "write")
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); code != 0 || err == nil || !strings.Contains(errs, "needs approval; denied") {
		t.Errorf("without --yes: exit %d, file written %v, stderr %q", code, err == nil, errs)
	}
	code, _, _ = runCLI(t, context.Background(), nil, "run", "--workspace", ws, "--yes", "--model", "script:"+sc, "write")
	if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); code != 0 || string(b) != "hi" {
		t.Errorf("with --yes: exit %d, file %q", code, b)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct{ body, want string }{
		{"{\n  \"model\": \"x\",\n  \"tools\": {\n    \"write_file\": {\"policy\": \"maybe\"}\n  }\n}", ":4: field tools.write_file.policy: \"maybe\" is not allow, ask or deny"},
		{"{\n  \"model\": 5\n}", ":2: field model: expected string, got number"},
		{"{\n  \"modle\": \"x\"\n}", `:2: unknown field "modle"`},
		{"{\n  \"model\": \"x\",,\n}", ":2: invalid character ','"},
		{"{\"mcpServers\": {\"bad\": {}}}", ":1: field mcpServers.bad: give either command"},
	}
	for _, tt := range tests {
		p := filepath.Join(t.TempDir(), "config.json")
		os.WriteFile(p, []byte(tt.body), 0o600)
		code, _, errs := runCLI(t, context.Background(), map[string]string{"AGENTTY_HOME": t.TempDir(), "AGENTTY_CONFIG": p}, "run", "hi")
		if code != 1 || !strings.Contains(errs, "config "+p+tt.want) {
			t.Errorf("config %q: exit %d, stderr %q; want %q", tt.body, code, errs, tt.want)
		}
	}
}

func TestProjectConfigOverUserConfig(t *testing.T) {
	ws := t.TempDir()
	user := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(user, []byte(`{"allow_shell": true, "tools": {"write_file": {"policy": "allow"}, "run_shell": {"policy": "deny"}}}`), 0o600)
	os.WriteFile(filepath.Join(ws, ".agentty.json"), []byte(`{"tools": {"write_file": {"policy": "deny"}}}`), 0o600)
	code, out, errs := runCLI(t, context.Background(), map[string]string{"AGENTTY_HOME": t.TempDir(), "AGENTTY_CONFIG": user}, "tools", "--workspace", ws, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rows []app.ToolRow
	json.Unmarshal([]byte(out), &rows)
	got := map[string]string{}
	for _, r := range rows {
		got[r.Name] = string(r.Policy) + "/" + r.Source
	}
	if got["write_file"] != "deny/workspace" || got["run_shell"] != "deny/shell" || got["calculator"] != "allow/builtin" || got["edit_file"] != "ask/workspace" {
		t.Errorf("policies = %v", got)
	}
}

// everythingServer is the path of the server-everything MCP server,
// installed with npm on first use (mcptest).
func everythingServer(t *testing.T) string { return mcptest.Everything(t) }

// TestToolsListsMCPServers configures a real MCP server and a broken one.
func TestToolsListsMCPServers(t *testing.T) {
	server := everythingServer(t)
	cfg := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {"everything": {"command": "node", "args": ["`+server+`", "stdio"]}, "ghost": {"command": "agentty-no-such-server"}}}`), 0o600)
	env := map[string]string{"AGENTTY_HOME": t.TempDir(), "AGENTTY_CONFIG": cfg}
	code, out, errs := runCLI(t, context.Background(), env, "tools")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"calculator", "read_file", "everything__echo", "everything__get-sum", "mcp:everything"} {
		if !strings.Contains(out, want) {
			t.Errorf("agentty tools lacks %s:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, `MCP server ghost did not start: command "agentty-no-such-server" not found; its tools are unavailable`) {
		t.Errorf("the broken server is not reported: %q", errs)
	}
	// An agent run uses the server's tools.
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"everything__get-sum","arguments":{"a":2,"b":40}}]},{"answer":"done"}]}`)
	code, out, errs = runCLI(t, context.Background(), env, "run", "--json", "--model", "script:"+sc, "add")
	if code != 0 || !strings.Contains(out, `"kind":"notice"`) || !strings.Contains(out, "42") {
		t.Errorf("run with MCP: exit %d\n%s\n%s", code, out, errs)
	}
}

func TestConfigDefaultsAndStdin(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(cfg, []byte(`{"max_steps": 2, "context_budget": 5000, "system_prompt": "You are terse."}`), 0o600)
	env := map[string]string{"AGENTTY_HOME": t.TempDir(), "AGENTTY_CONFIG": cfg}
	never := writeScript(t, `{"turns":[{"tool_calls":[{"name":"clock"}]},{"tool_calls":[{"name":"clock"}]},{"tool_calls":[{"name":"clock"}]},{"answer":"late"}]}`)
	code, out, errs := runCLI(t, context.Background(), env, "run", "--json", "--model", "script:"+never, "go")
	if code != 3 || !strings.Contains(out, `"max_steps":2`) || !strings.Contains(out, `"budget":5000`) {
		t.Errorf("config defaults: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, _ = runCLI(t, context.Background(), env, "run", "--max-steps", "4", "--model", "script:"+never, "go"); code != 0 || !strings.Contains(out, "late") {
		t.Errorf("--max-steps 4 over the config's 2: exit %d", code)
	}
	if _, _, errs = runCLI(t, context.Background(), env, "run", "--model", "script:"+never, "go"); !strings.Contains(errs, "step limit of 2 reached") {
		t.Errorf("the step limit message: %q", errs)
	}
	var outb, errb strings.Builder
	code = Execute(context.Background(), []string{"run", "--model", "offline", "-"}, strings.NewReader("what is 6*7\n"), &outb, &errb, func(k string) string { return env[k] })
	if code != 0 || !strings.Contains(outb.String(), "42") {
		t.Errorf("task from stdin: exit %d, %q %q", code, outb.String(), errb.String())
	}
}

// TestMCPJSONUnderTrust: a folder with only Claude Code's .mcp.json gets
// its servers once trusted, not before, with ${VAR} and ${VAR:-default}
// expanded; a changed file must be trusted again; the entry shapes of
// other clients (type, disabled, timeout) are accepted.
func TestMCPJSONUnderTrust(t *testing.T) {
	server := everythingServer(t)
	ws := t.TempDir()
	mcpJSON := `{"mcpServers": {
  "everything": {"type": "stdio", "command": "${AGENTTY_TEST_NODE:-node}", "args": ["${AGENTTY_TEST_SERVER}", "stdio"], "timeout": 30},
  "off": {"command": "agentty-no-such-server", "disabled": true}
}}`
	os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(mcpJSON), 0o600)
	env := agentEnv(t)
	env["AGENTTY_TEST_SERVER"] = server
	code, out, errs := runCLI(t, context.Background(), env, "tools", "--workspace", ws)
	if code != 0 || strings.Contains(out, "everything__") || !strings.Contains(errs, "mcpServers.everything") {
		t.Fatalf("untrusted: exit %d, tools %q, stderr %q; want the server ignored, and said", code, out, errs)
	}
	code, out, errs = runCLI(t, context.Background(), env, "trust", ws)
	if code != 0 || !strings.Contains(out, "everything") {
		t.Fatalf("trust: exit %d, %q, %q", code, out, errs)
	}
	code, out, errs = runCLI(t, context.Background(), env, "tools", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "everything__get-sum") || strings.Contains(out+errs, "agentty-no-such-server") {
		t.Fatalf("trusted: exit %d\n%s\n%s", code, out, errs)
	}
	os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(strings.Replace(mcpJSON, `"stdio"]`, `"stdio", "--changed"]`, 1)), 0o600)
	code, out, _ = runCLI(t, context.Background(), env, "tools", "--workspace", ws)
	if code != 0 || strings.Contains(out, "everything__") {
		t.Errorf("a changed .mcp.json kept its trust: exit %d\n%s", code, out)
	}
	// The same shapes in agentty's own config.
	cfg := env["AGENTTY_CONFIG"]
	os.WriteFile(cfg, []byte(`{"mcpServers": {"e": {"type": "stdio", "command": "node", "args": ["`+server+`", "stdio"], "timeout": "30s"}}}`), 0o600)
	code, out, errs = runCLI(t, context.Background(), env, "tools")
	if code != 0 || !strings.Contains(out, "e__get-sum") {
		t.Errorf("the user's config with type and timeout: exit %d\n%s\n%s", code, out, errs)
	}
	os.WriteFile(cfg, []byte(`{"mcpServers": {"e": {"type": "websocket", "url": "ws://x"}}}`), 0o600)
	if code, _, errs = runCLI(t, context.Background(), env, "tools"); code != 1 || !strings.Contains(errs, `mcpServers.e.type: "websocket" is not stdio, http or sse`) {
		t.Errorf("a bad type: exit %d, %q", code, errs)
	}
}
