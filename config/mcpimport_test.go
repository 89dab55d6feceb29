package config

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImportCodexRefusesAbsurdTimeouts: a startup timeout that is not a
// time limit agentty can hold (inf, NaN, negative, 1e30 ms, over a day)
// leaves its server out with a note that names the value; a sane one is
// carried over, and what is imported parses as a config.
func TestImportCodexRefusesAbsurdTimeouts(t *testing.T) {
	tests := []struct {
		line string
		want time.Duration // -1: refused
	}{
		{"startup_timeout_sec = 20", 20 * time.Second},
		{"startup_timeout_ms = 1500", 1500 * time.Millisecond},
		{"startup_timeout_sec = 0", 0},
		{"startup_timeout_sec = inf", -1},
		{"startup_timeout_sec = -inf", -1},
		{"startup_timeout_sec = nan", -1},
		{"startup_timeout_sec = -5", -1},
		{"startup_timeout_sec = 86401", -1},
		{"startup_timeout_ms = 1e30", -1},
		{"startup_timeout_ms = inf", -1},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "config.toml")
			os.WriteFile(p, []byte("[mcp_servers.slow]\ncommand = \"srv\"\n"+tt.line+"\n\n[mcp_servers.ok]\ncommand = \"ok\"\n"), 0o600)
			var im Imported
			if err := im.ImportCodex(p); err != nil {
				t.Fatal(err)
			}
			s, ok := im.Servers["slow"]
			switch {
			case tt.want < 0 && ok:
				t.Errorf("imported with timeout %v; want it refused", time.Duration(s.Timeout))
			case tt.want < 0 && !strings.Contains(strings.Join(im.Notes, "\n"), "server slow: startup_timeout"):
				t.Errorf("notes %q do not say why slow was left out", im.Notes)
			case tt.want >= 0 && (!ok || time.Duration(s.Timeout) != tt.want):
				t.Errorf("got %v (imported %v), want %v", time.Duration(s.Timeout), ok, tt.want)
			}
			if _, ok := im.Servers["ok"]; !ok {
				t.Errorf("the other server was not imported: %v", im.Notes)
			}
			b, _ := json.Marshal(map[string]any{"mcpServers": im.Servers})
			if _, err := Parse("imported", b); err != nil {
				t.Errorf("what was imported does not parse: %v\n%s", err, b)
			}
		})
	}
}

// TestImportClaudeRefusesAbsurdTimeouts: ~/.claude.json's timeout of 1e30
// seconds leaves its server out with a note, rather than a value that
// wraps.
func TestImportClaudeRefusesAbsurdTimeouts(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".claude.json")
	os.WriteFile(p, []byte(`{"mcpServers": {"slow": {"command": "srv", "timeout": 1e30}, "ok": {"command": "ok", "timeout": 30}}}`), 0o600)
	var im Imported
	if err := im.ImportClaude(p, "/nowhere"); err != nil {
		t.Fatal(err)
	}
	if _, ok := im.Servers["slow"]; ok || !strings.Contains(strings.Join(im.Notes, "\n"), "server slow") {
		t.Errorf("slow imported (%v) or not noted: %q", ok, im.Notes)
	}
	if time.Duration(im.Servers["ok"].Timeout) != 30*time.Second {
		t.Errorf("ok: %+v", im.Servers["ok"])
	}
}

// TestMergeMCPServersValidatesBeforeWriting: a server agentty could not
// read back (the wrapped timeout of the old import) is refused, and the
// config file is left as it was.
func TestMergeMCPServersValidatesBeforeWriting(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.json")
	old := []byte(`{"max_steps": 7}` + "\n")
	os.WriteFile(p, old, 0o600)
	for _, bad := range []MCPServer{
		{Command: "srv", Timeout: Seconds(math.MinInt64)},
		{Command: "srv", Timeout: Seconds(48 * time.Hour)},
		{Command: "srv", Policy: "sometimes"},
		{},
	} {
		added, err := MergeMCPServers(p, map[string]MCPServer{"good": {Command: "ok"}, "bad": bad})
		if err == nil || !strings.Contains(err.Error(), "not written") {
			t.Errorf("%+v: added %v, err %v; want an error that says nothing was written", bad, added, err)
		}
		if got, _ := os.ReadFile(p); !bytes.Equal(got, old) {
			t.Fatalf("%+v: the config was changed to %s", bad, got)
		}
	}
	if added, err := MergeMCPServers(p, map[string]MCPServer{"good": {Command: "ok", Timeout: Seconds(time.Minute)}}); err != nil || len(added) != 1 {
		t.Fatalf("a good server: %v, %v", added, err)
	}
	if c, err := Parse(p, mustReadFile(t, p)); err != nil || c.MaxSteps != 7 || c.MCPServers["good"].Command != "ok" {
		t.Errorf("after a good write: %+v, %v", c, err)
	}
}

// TestImportedShownHidesSecrets: the preview shows no credential: not in
// a value that begins with ${ (a default, text after the reference), not
// in an argument (--api-key=…, --token …), not in the url; references
// alone are shown as they are.
func TestImportedShownHidesSecrets(t *testing.T) {
	im := Imported{Servers: map[string]MCPServer{
		"a": {Command: "srv", Args: []string{"--api-key=sk-live-arg1", "--token", "sk-live-arg2", "--verbose", "-p", "7", "--auth-token", "${TOKEN}", "--secret=s"},
			Env: map[string]string{"API_KEY": "${API_KEY:-sk-live-env1}", "MY_TOKEN": "${X}sk-live-env2", "GH_TOKEN": "${GH_TOKEN}", "PLAIN": "shown"}},
		"b": {URL: "https://bob:sk-live-url1@example.com/mcp?api_key=sk-live-url2&page=2",
			Headers: map[string]string{"Authorization": "Bearer ${T}", "X-Api-Key": "${T} sk-live-hdr1", "Cookie": "sk-live-hdr2"}},
	}}
	b, _ := json.Marshal(im.Shown())
	shown := string(b)
	if strings.Contains(shown, "sk-live") {
		t.Errorf("the preview shows a secret: %s", shown)
	}
	for _, want := range []string{`"GH_TOKEN":"${GH_TOKEN}"`, `"Authorization":"Bearer ${T}"`, `"${TOKEN}"`, `"--verbose"`, `"7"`, `"PLAIN":"shown"`, `page=2`} {
		if !strings.Contains(shown, want) {
			t.Errorf("the preview lacks %s: %s", want, shown)
		}
	}
	if im.Servers["a"].Args[0] != "--api-key=sk-live-arg1" || im.Servers["b"].Headers["Cookie"] != "sk-live-hdr2" {
		t.Errorf("Shown changed the servers that --write writes: %+v", im.Servers)
	}
}

func mustReadFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportCodexKeepsEveryKey: cwd, enabled_tools, disabled_tools,
// tool_timeout_sec and default_tools_approval_mode are carried over (a
// disabled delete_entities stays disabled); an approval mode agentty
// cannot hold leaves its server out; every key agentty does not read is a
// note; what is imported parses as a config.
func TestImportCodexKeepsEveryKey(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(p, []byte(`[mcp_servers.memory]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-memory"]
cwd = "/srv/memory"
enabled_tools = ["read_graph", "create_entities", "delete_entities"]
disabled_tools = ["delete_entities"]
tool_timeout_sec = 90
default_tools_approval_mode = "prompt"
required = true
supports_parallel_tool_calls = true

[mcp_servers.trusted]
url = "https://example.test/mcp"
default_tools_approval_mode = "approve"

[mcp_servers.auto]
command = "srv"
default_tools_approval_mode = "auto"

[mcp_servers.odd]
command = "srv"
default_tools_approval_mode = "sometimes"

[mcp_servers.forever]
command = "srv"
tool_timeout_sec = inf
`), 0o600)
	var im Imported
	if err := im.ImportCodex(p); err != nil {
		t.Fatal(err)
	}
	m := im.Servers["memory"]
	if m.Cwd != "/srv/memory" || strings.Join(m.EnabledTools, ",") != "read_graph,create_entities,delete_entities" ||
		strings.Join(m.DisabledTools, ",") != "delete_entities" || time.Duration(m.ToolTimeout) != 90*time.Second || m.Policy != "ask" {
		t.Errorf("memory: %+v", m)
	}
	if im.Servers["trusted"].Policy != "allow" || im.Servers["auto"].Policy != "" {
		t.Errorf("trusted %q, auto %q", im.Servers["trusted"].Policy, im.Servers["auto"].Policy)
	}
	if _, ok := im.Servers["odd"]; ok {
		t.Error("an approval mode agentty does not know was imported")
	}
	if _, ok := im.Servers["forever"]; ok {
		t.Error("an infinite tool timeout was imported")
	}
	notes := strings.Join(im.Notes, "\n")
	for _, want := range []string{"server memory: required is not used by agentty", "server memory: supports_parallel_tool_calls is not used by agentty",
		`server odd: default_tools_approval_mode = "sometimes" is not auto, prompt, approve or writes; not imported`,
		"server trusted: default_tools_approval_mode = approve: every tool of the server runs without asking",
		"server forever: tool_timeout_sec = +Inf is not a time limit"} {
		if !strings.Contains(notes, want) {
			t.Errorf("no note %q in\n%s", want, notes)
		}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": im.Servers})
	if _, err := Parse("imported", b); err != nil {
		t.Errorf("what was imported does not parse: %v\n%s", err, b)
	}
}

// TestMCPJSONSaysWhatItDoesNotUse: every key of a .mcp.json entry agentty
// does not read is a note naming its line; Claude Code's alwaysAllow and
// headersHelper are read; a file with no mcpServers says so.
func TestMCPJSONSaysWhatItDoesNotUse(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(`{
  "mcpServers": {
    "mem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"],
      "alwaysAllow": ["read_graph"],
      "autoApprove": ["x"],
      "oauth": {"clientId": "y"}
    },
    "remote": {"type": "http", "url": "https://example.test/mcp", "headersHelper": "print-token --json"}
  }
}`), 0o600)
	w, err := ReadWorkspace(ws, &Settings{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(w.Notes, "\n")
	for _, want := range []string{".mcp.json:7: mcpServers.mem.autoApprove: not used by agentty", ".mcp.json:8: mcpServers.mem.oauth: not used by agentty"} {
		if !strings.Contains(notes, want) {
			t.Errorf("no note %q in\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "mem.alwaysAllow:") || strings.Contains(notes, "remote.headersHelper:") || strings.Contains(notes, "mem.args:") {
		t.Errorf("a key agentty reads is noted:\n%s", notes)
	}
	if s := w.Cfg.MCPServers["mem"]; strings.Join(s.AlwaysAllow, ",") != "read_graph" || w.Cfg.MCPServers["remote"].HeadersHelper != "print-token --json" {
		t.Errorf("servers: %+v", w.Cfg.MCPServers)
	}
	if _, risky := w.Risky["mcpServers.remote"]; !risky {
		t.Errorf("a headers helper is not risky untrusted: %v", w.Risky)
	}
	os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(`{"servers": {"x": {"command": "y"}}}`), 0o600)
	if w, err = ReadWorkspace(ws, &Settings{}); err != nil || !strings.Contains(strings.Join(w.Notes, "\n"), "has no mcpServers: agentty uses nothing of it") {
		t.Errorf("a file without mcpServers: %v %v", err, w.Notes)
	}
}

// TestConfigMCPEntryKeysAreNotes: a key of a config.json mcpServers entry
// that agentty does not read (an entry pasted from another client) is a
// note naming its line, as in a .mcp.json, and the config is used; a key
// agentty does not know outside an entry is still refused, and a value of
// the wrong type in an entry still names its field and line.
func TestConfigMCPEntryKeysAreNotes(t *testing.T) {
	c, err := Parse("config.json", []byte(`{
  "model": "offline",
  "mcpServers": {
    "mem": {
      "command": "npx",
      "autoApprove": ["read_graph"],
      "alwaysAllow": ["read_graph"],
      "Args": ["-y"]
    }
  }
}`))
	if err != nil {
		t.Fatalf("an entry with another client's key refuses the config: %v", err)
	}
	if want := "config.json:6: mcpServers.mem.autoApprove: not used by agentty"; len(c.Notes) != 1 || !strings.Contains(c.Notes[0], want) {
		t.Errorf("notes %q, want one with %q", c.Notes, want)
	}
	if s := c.MCPServers["mem"]; s.Command != "npx" || strings.Join(s.AlwaysAllow, ",") != "read_graph" || strings.Join(s.Args, ",") != "-y" || c.Model != "offline" {
		t.Errorf("settings %+v", c)
	}
	for _, bad := range []struct{ in, want string }{
		{"{\"modle\": \"x\"}", `config.json:1: unknown field "modle"`},
		{"{\"mcpServers\": {\"s\": {\n\"command\": \"x\",\n\"args\": \"not a list\"}}}", "config.json:3: field mcpServers.s.args: expected []string, got string"},
	} {
		if _, err := Parse("config.json", []byte(bad.in)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err %v, want %q", bad.in, err, bad.want)
		}
	}
	// The next good config after a refused one parses.
	if c, err := Parse("config.json", []byte(`{"mcpServers": {"s": {"url": "http://127.0.0.1:1/mcp"}}}`)); err != nil || c.MCPServers["s"].URL == "" {
		t.Errorf("the next config: %+v %v", c, err)
	}
}
