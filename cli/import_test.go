package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSessionsImport: a Claude Code transcript of this folder (found by
// --from claude where Claude Code keeps it) and a Codex rollout (a file)
// become agentty sessions: listed, shown, traced, and a fork of one goes
// on on the offline model; importing again says it was imported already.
func TestSessionsImport(t *testing.T) {
	env := agentEnv(t)
	ws := t.TempDir()
	claudeDir := filepath.Join(env["HOME"], ".claude", "projects", regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(ws, "-"))
	os.MkdirAll(claudeDir, 0o700)
	b, _ := os.ReadFile(filepath.Join("testdata", "import", "claude.jsonl"))
	os.WriteFile(filepath.Join(claudeDir, "c0ffee12-aaaa.jsonl"), b, 0o600)
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "import", "--from", "claude", "--workspace", ws)
	m := regexp.MustCompile(`imported .*c0ffee12-aaaa.jsonl as (\S+) \(2 runs\)`).FindStringSubmatch(out)
	if code != 0 || m == nil || !strings.Contains(errs, "not read") {
		t.Fatalf("import --from claude: exit %d\n%s\n%s", code, out, errs)
	}
	id := m[1]
	if code, out, _ = runCLI(t, context.Background(), env, "sessions", "import", "--from", "claude", "--workspace", ws); code != 0 || !strings.Contains(out, "imported already, as "+id) {
		t.Errorf("import again: exit %d %s", code, out)
	}
	code, out, errs = runCLI(t, context.Background(), env, "sessions", "import", filepath.Join("testdata", "import", "rollout.jsonl"))
	if code != 0 || !strings.Contains(out, "(1 run)") {
		t.Errorf("import a rollout: exit %d %s %s", code, out, errs)
	}
	code, out, _ = runCLI(t, context.Background(), env, "sessions", "show", id)
	if code != 0 || !strings.Contains(out, "run_shell") || !strings.Contains(out, "It is package main.") {
		t.Errorf("sessions show: exit %d\n%s", code, out)
	}
	if code, out, _ = runCLI(t, context.Background(), env, "sessions", "export", id); code != 0 || !strings.Contains(out, "## agentty\n\nLet me count them.") {
		t.Errorf("the export does not give the agent's words with its calls its heading:\n%s", out)
	}
	recv := newReceiver(t)
	if code, _, errs = runCLI(t, context.Background(), env, "sessions", "trace", id, "--otlp", recv.URL); code != 0 || len(recv.spans()) == 0 {
		t.Errorf("sessions trace: exit %d %s, %d spans", code, errs, len(recv.spans()))
	}
	code, fork, errs := runCLI(t, context.Background(), env, "sessions", "fork", id, "--at", "2")
	if code != 0 {
		t.Fatalf("fork: %s", errs)
	}
	code, out, errs = runCLI(t, context.Background(), env, "run", "--session", strings.TrimSpace(fork), "--model", "offline", "what is 6*7?")
	if code != 0 || !strings.Contains(out, "42") {
		t.Errorf("the fork, continued on the offline model: exit %d %s %s", code, out, errs)
	}
	if code, _, errs = runCLI(t, context.Background(), env, "sessions", "import", "--from", "claude", "x.jsonl"); code != 2 {
		t.Errorf("files and --from together: exit %d %s", code, errs)
	}
}

// TestImportedSessionInTheConsole: an imported Claude Code session opens
// in the console: its messages in the Chat, its calls in the Timeline.
func TestImportedSessionInTheConsole(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"AGENTTY_HOME": home, "AGENTTY_CONFIG": filepath.Join(home, "no-config.json")}
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "import", filepath.Join("testdata", "import", "claude.jsonl"))
	m := regexp.MustCompile(`as (\S+) `).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("import: exit %d %s %s", code, out, errs)
	}
	tm := newTmux(t)
	tm.start(home, "--model", "offline", "--resume", m[1])
	tm.wait("the imported conversation", func(s string) bool {
		chat, tl := chatPane(s), timelinePane(s)
		return strings.Contains(chat, "how many go files") && strings.Contains(chat, "It is package main.") && strings.Contains(tl, "run_shell")
	})
	tm.keys("C-d")
	tm.waitGone()
}
