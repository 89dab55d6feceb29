package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRewindRefusesOtherSessionsWork: session A writes mine.txt; session B,
// in the same folder, writes theirs.txt; A runs again. Rewinding A to
// before its first step would remove theirs.txt, B's work: it is refused
// without --others, naming the file, B and its step, and nothing changes;
// with --others both go; --undo brings both back.
func TestRewindRefusesOtherSessionsWork(t *testing.T) {
	ws, _ := gitWorkspace(t)
	env := agentEnv(t)
	ctx := context.Background()
	run := func(what string, args ...string) string {
		t.Helper()
		sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"`+what+`","content":"`+what+`\n"}}]},{"answer":"done"}]}`)
		code, _, errs := runCLI(t, ctx, env, append([]string{"run", "--workspace", ws, "--model", "script:" + sc, "--yes", "--json"}, append(args, "write "+what)...)...)
		if code != 0 {
			t.Fatalf("run: exit %d: %s", code, errs)
		}
		_, ls, _ := runCLI(t, ctx, env, "sessions", "ls", "--workspace", ws, "--json")
		return regexp.MustCompile(`"id":\s*"([^"]+)"`).FindStringSubmatch(ls)[1] // the newest
	}
	a := run("mine.txt")
	b := run("theirs.txt")
	if a == b {
		t.Fatal("one session for both")
	}
	run("more.txt", "--session", a)
	code, out, errs := runCLI(t, ctx, env, "sessions", "rewind", a, "--at", "1")
	if want := "theirs.txt (session " + b + ", step 1)"; code != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, "--others") {
		t.Fatalf("a rewind over B's work: exit %d, want 1 naming %q:\n%s%s", code, want, out, errs)
	}
	for _, f := range []string{"mine.txt", "theirs.txt", "more.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("refused, the rewind still changed %s: %v", f, err)
		}
	}
	if code, out, errs = runCLI(t, ctx, env, "sessions", "rewind", a, "--at", "1", "--others"); code != 0 {
		t.Fatalf("--others: exit %d:\n%s%s", code, out, errs)
	}
	for _, f := range []string{"mine.txt", "theirs.txt", "more.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("--others left %s", f)
		}
	}
	if code, out, errs = runCLI(t, ctx, env, "sessions", "rewind", a, "--undo"); code != 0 {
		t.Fatalf("--undo: exit %d:\n%s%s", code, out, errs)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "theirs.txt")); string(got) != "theirs.txt\n" {
		t.Errorf("the undo did not bring B's file back: %q", got)
	}
}
