package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentty/agentty/internal/gittest"
)

// gitIn runs git in dir as the person would.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=p", "GIT_AUTHOR_EMAIL=p@x", "GIT_COMMITTER_NAME=p", "GIT_COMMITTER_EMAIL=p@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitWorkspace is a repository with a commit, a stash and a staged file;
// person reads what of it is the person's (HEAD, branch, stash, index).
func gitWorkspace(t *testing.T) (ws string, person func() string) {
	t.Helper()
	ws = t.TempDir()
	gitIn(t, ws, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(ws, "edit.sh"), []byte("#!/bin/sh\necho one\n"), 0o755)
	os.WriteFile(filepath.Join(ws, "gone.txt"), []byte("to be removed\n"), 0o644)
	gitIn(t, ws, "add", "-A")
	gitIn(t, ws, "commit", "-qm", "first")
	os.WriteFile(filepath.Join(ws, "gone.txt"), []byte("stashed\n"), 0o644)
	gitIn(t, ws, "stash", "-q")
	os.WriteFile(filepath.Join(ws, "staged.txt"), []byte("staged\n"), 0o644)
	gitIn(t, ws, "add", "staged.txt")
	person = func() string { // the whole .git byte for byte; HEAD, branch, stash and index
		idx, _ := os.ReadFile(filepath.Join(ws, ".git", "index"))
		return strings.Join([]string{dotGitOf(t, ws), gitIn(t, ws, "rev-parse", "HEAD"), gitIn(t, ws, "symbolic-ref", "HEAD"), gitIn(t, ws, "stash", "list"),
			gitIn(t, ws, "diff", "--cached", "--name-only"), string(idx)}, "\n")
	}
	return ws, person
}

// dotGitOf is the record of ws's whole .git (gittest.DotGit).
func dotGitOf(t *testing.T, ws string) string {
	t.Helper()
	rec, err := gittest.DotGit(ws)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestRunDiffRewindUndo: a run that writes a file, edits another and runs
// rm through the shell; sessions diff shows the three changes; rewinding
// to before the run restores all three exactly, leaving the person's
// whole .git, byte for byte, as it was; --undo takes it back; a file
// changed by hand since is not overwritten without --yes.
func TestRunDiffRewindUndo(t *testing.T) {
	ws, person := gitWorkspace(t)
	before := person()
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"new.txt","content":"new\n"}},`+
		`{"name":"edit_file","arguments":{"path":"edit.sh","old":"echo one","new":"echo two"}},{"name":"run_shell","arguments":{"command":"rm gone.txt"}}]},{"answer":"done"}]}`)
	env := agentEnv(t)
	code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--allow-shell", "--yes", "change things")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	_, ls, _ := runCLI(t, context.Background(), env, "sessions", "ls", "--workspace", ws, "--json")
	id := regexp.MustCompile(`"id":\s*"([^"]+)"`).FindStringSubmatch(ls)[1]
	code, diff, errs := runCLI(t, context.Background(), env, "sessions", "diff", id)
	for _, want := range []string{"+++ b/new.txt", "-echo one", "+echo two", "deleted file mode 100644", "--- a/gone.txt"} {
		if code != 0 || !strings.Contains(diff, want) {
			t.Errorf("sessions diff lacks %q (exit %d %s):\n%s", want, code, errs, diff)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "gone.txt")); err == nil {
		t.Fatal("the run did not remove gone.txt")
	}
	if code, show, _ := runCLI(t, context.Background(), env, "sessions", "show", id); code != 0 || !regexp.MustCompile(`checkpoints: 2 \(git mode; .*\); the workspace's take [0-9.]+ [KM]?B in `).MatchString(show) {
		t.Errorf("sessions show does not say what the checkpoints hold:\n%s", show)
	}
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "rewind", id, "--at", "1")
	if code != 0 || !strings.Contains(out, "2 written, 1 removed") {
		t.Fatalf("rewind: exit %d %s %s", code, out, errs)
	}
	read := func(p string) string { b, _ := os.ReadFile(filepath.Join(ws, p)); return string(b) }
	fi, _ := os.Stat(filepath.Join(ws, "edit.sh"))
	if read("edit.sh") != "#!/bin/sh\necho one\n" || fi.Mode().Perm() != 0o755 || read("gone.txt") != "to be removed\n" {
		t.Errorf("after the rewind: edit.sh %q %v, gone.txt %q", read("edit.sh"), fi.Mode().Perm(), read("gone.txt"))
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
		t.Error("new.txt is still there after the rewind")
	}
	if got := person(); got != before {
		t.Errorf("the person's repository changed:\n%s\n---\n%s", before, got)
	}
	// A hand's change since: refused without --yes, the files left alone.
	os.WriteFile(filepath.Join(ws, "staged.txt"), []byte("my own edit\n"), 0o644)
	code, _, errs = runCLI(t, context.Background(), env, "sessions", "rewind", id, "--undo")
	if code == 0 || !strings.Contains(errs, "staged.txt") || read("edit.sh") != "#!/bin/sh\necho one\n" {
		t.Fatalf("an undo over a hand's change: exit %d %s", code, errs)
	}
	code, out, errs = runCLI(t, context.Background(), env, "sessions", "rewind", id, "--undo", "--yes")
	if code != 0 || read("edit.sh") != "#!/bin/sh\necho two\n" || read("new.txt") != "new\n" {
		t.Fatalf("undo: exit %d %s %s; edit.sh %q", code, out, errs, read("edit.sh"))
	}
	if _, err := os.Stat(filepath.Join(ws, "gone.txt")); err == nil {
		t.Error("gone.txt came back with the undo")
	}
}

// TestCheckpointsOff: the person's config turns checkpoints off; a
// workspace nobody trusted cannot.
func TestCheckpointsOff(t *testing.T) {
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"a.txt","content":"a"}}]},{"answer":"done"}]}`)
	journal := func(env map[string]string, ws string) string {
		t.Helper()
		if code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--yes", "write"); code != 0 {
			t.Fatalf("run: %s", errs)
		}
		return strings.Join(journalLines(t, env["AGENTTY_HOME"], onlySession(t, env["AGENTTY_HOME"]), ""), "\n")
	}
	env := agentEnv(t)
	os.WriteFile(env["AGENTTY_CONFIG"], []byte(`{"checkpoints": false}`), 0o600)
	if j := journal(env, t.TempDir()); strings.Contains(j, `"kind":"checkpoint"`) {
		t.Error("checkpoints taken with checkpoints: false in the person's config")
	}
	env = agentEnv(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, ".agentty.json"), []byte(`{"checkpoints": false}`), 0o600)
	if j := journal(env, ws); !strings.Contains(j, `"kind":"checkpoint"`) {
		t.Error("an untrusted workspace turned checkpoints off")
	}
}
