package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeDenyWithSpecifierAsks: a project's .claude/settings.json that
// denies Read(.env) makes read_file ask, trusted or not: a headless run
// without --yes refuses the model's read_file of .env rather than running
// it, and says why; with --yes (the person's approval) it runs.
func TestClaudeDenyWithSpecifierAsks(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".env"), "API_TOKEN=dotenv-secret-0451\n")
	writeFile(t, filepath.Join(ws, ".claude", "settings.json"), `{"permissions": {"deny": ["Read(.env)"]}}`)
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"read_file","arguments":{"path":".env"}}]},{"answer":"done"}]}`)
	for _, trusted := range []bool{true, false} {
		env := trustEnv(t)
		if trusted {
			if code, _, errs := runCLI(t, context.Background(), env, "trust", ws); code != 0 {
				t.Fatalf("trust: exit %d: %s", code, errs)
			}
		}
		code, out, errs := runCLI(t, context.Background(), env, "run", "--json", "--workspace", ws, "--model", "script:"+sc, "read .env")
		if code != 0 || strings.Contains(out+errs, "dotenv-secret") || !strings.Contains(errs, "needs approval; denied") {
			t.Errorf("trusted %v, without --yes: exit %d, read_file ran or was not refused:\n%s\n%s", trusted, code, out, errs)
		}
		if !strings.Contains(errs, "deny Read(.env): agentty cannot deny only part of read_file and search_files; they ask instead") {
			t.Errorf("trusted %v: the notice does not say what became of the rule: %s", trusted, errs)
		}
		if code, out, errs := runCLI(t, context.Background(), env, "run", "--json", "--yes", "--workspace", ws, "--model", "script:"+sc, "read .env"); code != 0 || !strings.Contains(out, "dotenv-secret") {
			t.Errorf("trusted %v, with --yes: exit %d, %s\n%s", trusted, code, out, errs)
		}
	}
}
