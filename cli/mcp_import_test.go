package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/config"
)

// TestMCPImportHostileCodexConfig: a Codex config with credentials in
// values that begin with ${, in arguments (--api-key=…, --token …) and a
// startup timeout of inf or 1e30 ms: the preview shows no credential; the
// servers with those timeouts are left out with a note; --write leaves a
// config every command still reads.
func TestMCPImportHostileCodexConfig(t *testing.T) {
	env := testEnv(t)
	home := t.TempDir()
	env["HOME"] = home
	writeFile(t, filepath.Join(home, ".codex", "config.toml"), `
[mcp_servers.docs]
command = "agentty-no-such-server"
args = ["--api-key=sk-live-arg-1111", "--token", "sk-live-arg-2222", "--port", "8080"]
env = { "API_KEY" = "${API_KEY:-sk-live-env-3333}", "GH_TOKEN" = "${GH_TOKEN}" }

[mcp_servers.forever]
command = "agentty-no-such-server"
startup_timeout_sec = inf

[mcp_servers.huge]
command = "agentty-no-such-server"
startup_timeout_ms = 1e30
`)
	code, out, errs := runCLI(t, context.Background(), env, "mcp", "import", "--from", "codex")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out+errs, "sk-live") {
		t.Errorf("the preview shows a credential:\n%s\n%s", out, errs)
	}
	if !strings.Contains(out, `"GH_TOKEN": "${GH_TOKEN}"`) || !strings.Contains(out, `"8080"`) {
		t.Errorf("the preview hides what is no secret:\n%s", out)
	}
	for _, name := range []string{"forever", "huge"} {
		if !strings.Contains(errs, "server "+name+": startup_timeout") || strings.Contains(out, `"`+name+`"`) {
			t.Errorf("%s: not left out with a note:\n%s\n%s", name, out, errs)
		}
	}
	cfg := env["AGENTTY_CONFIG"]
	writeFile(t, cfg, `{"max_steps": 7}`)
	if code, out, errs := runCLI(t, context.Background(), env, "mcp", "import", "--from", "codex", "--write"); code != 0 || !strings.Contains(out, "added docs") {
		t.Fatalf("--write: exit %d, %q, %q", code, out, errs)
	}
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := config.Parse(cfg, b); err != nil || c.MaxSteps != 7 || !strings.Contains(string(b), "sk-live-arg-1111") {
		t.Errorf("the config after --write: %v\n%s", err, b)
	}
	if code, out, errs := runCLI(t, context.Background(), env, "run", "--model", "offline", "what is 2+2"); code != 0 || !strings.Contains(out, "4") {
		t.Errorf("run after --write: exit %d, %q, %q", code, out, errs)
	}
}
