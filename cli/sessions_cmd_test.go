package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSessionsCommands(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"AGENTTY_HOME": home}
	run := func(args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, context.Background(), env, args...)
	}
	_, _, errs := run("run", "--model", "offline", "remember that my name is Ada")
	id := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(errs), "session:"))
	run("run", "--session", id, "what is 6*7")

	code, out, _ := run("sessions", "show", id)
	for _, want := range []string{"run-1:", "step 1   ok          call remember", "ok       calculator", "memory: name = Ada (step 1)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = run("sessions", "show", id, "--json")
	var shown struct {
		Steps []struct{ Step int } `json:"steps"`
	}
	if json.Unmarshal([]byte(out), &shown); code != 0 || len(shown.Steps) != 4 {
		t.Errorf("show --json: %d steps\n%s", len(shown.Steps), out)
	}
	if code, out, _ = run("sessions", "export", id, "--format", "md"); code != 0 || !strings.Contains(out, "## agentty\n\n6*7 = 42") {
		t.Errorf("export md:\n%s", out)
	}
	if code, _, _ = run("sessions", "rename", id, "Ada's", "sums"); code != 0 {
		t.Errorf("rename: exit %d", code)
	}
	code, fork, _ := run("sessions", "fork", id, "--at", "2")
	fork = strings.TrimSpace(fork)
	if code != 0 || fork == "" {
		t.Fatalf("fork: exit %d", code)
	}
	// Damage the original in the middle: ls still lists everything.
	path := filepath.Join(home, "sessions", id, "events.jsonl")
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	lines[3] = "{broken\n"
	os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600)
	os.Remove(filepath.Join(home, "sessions", id, "meta.json"))
	code, out, _ = run("sessions", "ls")
	if code != 0 || !strings.Contains(out, fork) || !strings.Contains(out, "[damaged: sessions: "+path+" line 4 is corrupt") {
		t.Errorf("ls with a damaged session:\n%s", out)
	}
	code, _, errs = run("run", "--session", id, "hi")
	if code != 1 || !strings.Contains(errs, "line 4 is corrupt") {
		t.Errorf("run on a damaged session: exit %d, %q", code, errs)
	}
	if code, out, _ = run("sessions", "rm", fork); code != 0 || !strings.Contains(out, "removed") {
		t.Errorf("rm: exit %d", code)
	}
	if code, _, errs = run("sessions", "show", "nope"); code != 1 || !strings.Contains(errs, "no such session") {
		t.Errorf("show of a missing session: exit %d, %q", code, errs)
	}
	if code, _, _ = run("sessions", "frobnicate"); code != 2 {
		t.Errorf("unknown sub-command: exit %d", code)
	}
}

func TestSessionsUsage(t *testing.T) {
	env := map[string]string{"AGENTTY_HOME": t.TempDir()}
	tests := []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"sessions", "-h"}, 0, "List this folder's sessions, newest first", ""},
		{[]string{"sessions"}, 2, "", "say ls, show ID"},
		{[]string{"sessions", "export", "0abc", "--format", "xml"}, 2, "", "agentty sessions export: unknown format \"xml\" (md or json)\n"},
		{[]string{"sessions", "show", "0nosuch"}, 1, "", "agentty sessions show: 0nosuch: no such session\n"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, context.Background(), env, tt.args...)
		if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errs, tt.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, code, out, errs, tt.code, tt.out, tt.err)
		}
	}
}
