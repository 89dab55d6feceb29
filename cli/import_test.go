package cli

import (
	"context"
	"encoding/json"
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

// TestImportRunsNothing: a transcript's calls are its record, never run
// again: a Bash call that would make a file and a Write that would write
// one, under their own names (run_shell and write_file once imported), leave
// the disk as it was, and the session shows the recorded results; the next
// import still works.
func TestImportRunsNothing(t *testing.T) {
	env := agentEnv(t)
	dir := t.TempDir()
	ran, wrote := filepath.Join(dir, "ran"), filepath.Join(dir, "wrote")
	lines := []string{
		`{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"d00d0001-aaaa","cwd":"` + dir + `","message":{"role":"user","content":"make the files"}}`,
		`{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"touch ` + ran + `"}}]}}`,
		`{"type":"user","uuid":"r1","parentUuid":"a1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"recorded shell result"}]}}`,
		`{"type":"assistant","uuid":"a2","parentUuid":"r1","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Write","input":{"file_path":"` + wrote + `","content":"x"}}]}}`,
		`{"type":"user","uuid":"r2","parentUuid":"a2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"recorded write result"}]}}`,
		`{"type":"assistant","uuid":"a3","parentUuid":"r2","message":{"id":"m3","role":"assistant","content":[{"type":"text","text":"Both made."}]}}`,
	}
	src := filepath.Join(t.TempDir(), "d00d0001-aaaa.jsonl")
	os.WriteFile(src, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "import", src)
	m := regexp.MustCompile(`as (\S+) `).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("import: exit %d %s %s", code, out, errs)
	}
	for _, p := range []string{ran, wrote} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("importing ran a call: %s is there", p)
		}
	}
	code, out, _ = runCLI(t, context.Background(), env, "sessions", "show", m[1])
	for _, want := range []string{"run_shell", "write_file", "recorded shell result", "recorded write result", "Both made."} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("sessions show: exit %d, no %q in\n%s", code, want, out)
		}
	}
	if code, out, errs = runCLI(t, context.Background(), env, "sessions", "import", filepath.Join("testdata", "import", "rollout.jsonl")); code != 0 {
		t.Errorf("the next import: exit %d %s %s", code, out, errs)
	}
}

// TestImportedEscapesNeverReachAPipe: a transcript whose text holds a
// terminal title (OSC 0), a clipboard write (OSC 52) and a screen clear
// (CSI 2J) is shown, listed and exported through a pipe with none of them
// (made visible as ␛); --json keeps the text, escaped as JSON does.
func TestImportedEscapesNeverReachAPipe(t *testing.T) {
	env := agentEnv(t)
	const osc0, osc52, csi = "\x1b]0;owned\x07", "\x1b]52;c;ZXZpbA==\x07", "\x1b[2J"
	esc := func(s string) string { b, _ := json.Marshal(s); return strings.Trim(string(b), `"`) }
	lines := []string{
		`{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"e5c0e5c0-aaaa","message":{"role":"user","content":"title ` + esc(osc0) + ` please"}}`,
		`{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cat x"}}]}}`,
		`{"type":"user","uuid":"r1","parentUuid":"a1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"clip ` + esc(osc52) + `"}]}}`,
		`{"type":"assistant","uuid":"a2","parentUuid":"r1","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"cleared ` + esc(csi) + ` done"}]}}`,
	}
	src := filepath.Join(t.TempDir(), "e5c0e5c0-aaaa.jsonl")
	os.WriteFile(src, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "import", src)
	m := regexp.MustCompile(`as (\S+) `).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("import: exit %d %s %s", code, out, errs)
	}
	for _, args := range [][]string{{"sessions", "show", m[1]}, {"sessions", "ls", "--all"}, {"sessions", "export", m[1]}} {
		code, out, _ := runCLI(t, context.Background(), env, args...)
		if code != 0 || strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, "␛") {
			t.Errorf("%s through a pipe: exit %d, %q", strings.Join(args, " "), code, out)
		}
	}
	code, out, _ = runCLI(t, context.Background(), env, "sessions", "export", m[1], "--format", "json")
	if code != 0 || strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `\u001b]52;c;ZXZpbA==\u0007`) {
		t.Errorf("export --format json: exit %d, the text not kept escaped: %q", code, out)
	}
}

// TestImportACopyThatWentOn: two files of one session id (a transcript and
// a copy that went on) are both imported, the second saying so; the same
// file again is imported already. A sub-agent's transcript imported alone
// says whose it is.
func TestImportACopyThatWentOn(t *testing.T) {
	env := agentEnv(t)
	b, err := os.ReadFile(filepath.Join("testdata", "import", "claude.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, copied := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "copy.jsonl")
	os.WriteFile(first, b, 0o600)
	more := `{"type":"user","uuid":"zz1","parentUuid":"a4","sessionId":"c0ffee12-aaaa","message":{"role":"user","content":"and one more thing"}}` + "\n"
	os.WriteFile(copied, append(append([]byte{}, b...), more...), 0o600)
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "import", first)
	if code != 0 || !strings.Contains(out, "imported") {
		t.Fatalf("the first: exit %d %s %s", code, out, errs)
	}
	code, out, errs = runCLI(t, context.Background(), env, "sessions", "import", copied)
	if code != 0 || !strings.Contains(out, "(3 runs)") || !strings.Contains(errs, "imported from another file as") {
		t.Errorf("the copy that went on: exit %d %s %s", code, out, errs)
	}
	if code, out, _ = runCLI(t, context.Background(), env, "sessions", "import", first); code != 0 || !strings.Contains(out, "was imported already") {
		t.Errorf("the first again: exit %d %s", code, out)
	}
	sub := filepath.Join("..", "importer", "testdata", "real", "claude", "ccl-2.1.17-claude_p-29ccd257", "subagents", "agent-a2271d1.jsonl")
	code, out, errs = runCLI(t, context.Background(), env, "sessions", "import", sub)
	if code != 0 || !strings.Contains(errs, "a sub-agent's transcript (agent a2271d1) of Claude Code session 29ccd257") {
		t.Errorf("a sub-agent's alone: exit %d %s %s", code, out, errs)
	}
}
