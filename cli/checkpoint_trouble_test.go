package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestFIFOInPlaceOfAFile: a step's shell command puts a FIFO in the place
// of a tracked file (a prompt-injected mkfifo). That once failed every
// checkpoint of the workspace from then on, said only in --json; a rewind
// failed, and a later session "had no checkpoints". The FIFO is left out,
// said on stderr, and the checkpoints go on: the diff says it, a rewind
// puts the file back, and a later session, the FIFO there again, has its
// checkpoints, its diff and its rewind.
func TestFIFOInPlaceOfAFile(t *testing.T) {
	ws, _ := gitWorkspace(t)
	env := agentEnv(t)
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"run_shell","arguments":{"command":"rm gone.txt && mkfifo gone.txt"}}]},`+
		`{"tool_calls":[{"name":"write_file","arguments":{"path":"new.txt","content":"new\n"}}]},{"answer":"done"}]}`)
	code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--allow-shell", "--yes", "make a fifo")
	if code != 0 || !strings.Contains(errs, "not a regular file") || !strings.Contains(errs, "gone.txt") || strings.Contains(errs, "warning: step") {
		t.Fatalf("run: exit %d, stderr:\n%s", code, errs)
	}
	id := sessionOf(t, errs)
	code, diff, errs := runCLI(t, context.Background(), env, "sessions", "diff", id)
	if code != 0 || !strings.Contains(diff, "+++ b/new.txt") || !strings.Contains(errs, "not a regular file") {
		t.Errorf("sessions diff: exit %d\n%s\nstderr: %s", code, diff, errs)
	}
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "rewind", id, "--at", "1")
	if code != 0 {
		t.Fatalf("rewind over a FIFO: exit %d\n%s%s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "gone.txt")); err != nil || string(b) != "to be removed\n" {
		t.Errorf("gone.txt after the rewind: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
		t.Error("new.txt is still there after the rewind")
	}
	// A later session, the FIFO made again.
	os.Remove(filepath.Join(ws, "gone.txt"))
	if err := syscall.Mkfifo(filepath.Join(ws, "gone.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc = writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"a.txt","content":"a\n"}}]},{"answer":"done"}]}`)
	code, _, errs = runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--yes", "write a")
	if code != 0 || strings.Contains(errs, "warning: step") {
		t.Fatalf("a later run: exit %d, stderr:\n%s", code, errs)
	}
	later := sessionOf(t, errs)
	if code, diff, errs = runCLI(t, context.Background(), env, "sessions", "diff", later); code != 0 || !strings.Contains(diff, "+++ b/a.txt") {
		t.Errorf("the later session's diff: exit %d\n%s\nstderr: %s", code, diff, errs)
	}
	if code, out, errs = runCLI(t, context.Background(), env, "sessions", "rewind", later, "--at", "1"); code != 0 {
		t.Errorf("the later session's rewind: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); err == nil {
		t.Error("a.txt is still there after the later session's rewind")
	}
}

// TestFailedCheckpointIsSaid: a checkpoint that fails (the data folder's
// checkpoints is a file, not a folder) is said on stderr by a headless
// run, which goes on; the session's diff says its checkpoints failed, not
// that no step changed the workspace. Once the store can be made, the
// next run in the same data folder has its checkpoints; a rewind to before
// a step whose checkpoint failed is refused.
func TestFailedCheckpointIsSaid(t *testing.T) {
	ws, _ := gitWorkspace(t)
	env := agentEnv(t)
	blocker := filepath.Join(env["AGENTTY_HOME"], "checkpoints")
	os.MkdirAll(env["AGENTTY_HOME"], 0o700)
	os.WriteFile(blocker, []byte("not a folder"), 0o600)
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"a.txt","content":"a\n"}}]},{"answer":"done"}]}`)
	code, out, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--yes", "write a")
	if code != 0 || !strings.Contains(out, "done") || !regexp.MustCompile(`warning: step 1: checkpoint: .*not a directory`).MatchString(errs) {
		t.Fatalf("run: exit %d\n%s\nstderr:\n%s", code, out, errs)
	}
	id := sessionOf(t, errs)
	code, _, errs = runCLI(t, context.Background(), env, "sessions", "diff", id)
	if code == 0 || !strings.Contains(errs, "2 checkpoints failed") || strings.Contains(errs, "no step of it changed") {
		t.Errorf("sessions diff of a session whose checkpoints failed: exit %d, stderr: %s", code, errs)
	}
	os.Remove(blocker)
	code, _, errs = runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--yes", "write a")
	if code != 0 || strings.Contains(errs, "warning") {
		t.Fatalf("the next run: exit %d, stderr:\n%s", code, errs)
	}
	if code, _, errs = runCLI(t, context.Background(), env, "sessions", "rewind", sessionOf(t, errs), "--at", "1"); code != 0 {
		t.Errorf("the next run's rewind: exit %d: %s", code, errs)
	}
	// A run whose first step's checkpoint fails (its shell command then
	// mends the data folder) and whose second's is kept: a rewind to
	// before step 1 is refused, saying why, not made to before step 2;
	// before step 2 works.
	os.RemoveAll(blocker)
	os.WriteFile(blocker, []byte("not a folder"), 0o600)
	sc = writeScript(t, `{"turns":[{"tool_calls":[{"name":"run_shell","arguments":{"command":"rm -f '`+blocker+`' && echo one > one.txt"}}]},`+
		`{"tool_calls":[{"name":"write_file","arguments":{"path":"two.txt","content":"two\n"}}]},{"answer":"done"}]}`)
	code, _, errs = runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--allow-shell", "--yes", "mend and write")
	if code != 0 || !strings.Contains(errs, "warning: step 1: checkpoint") || strings.Contains(errs, "warning: step 2") {
		t.Fatalf("the mending run: exit %d, stderr:\n%s", code, errs)
	}
	id = sessionOf(t, errs)
	if code, _, errs = runCLI(t, context.Background(), env, "sessions", "rewind", id, "--at", "1"); code == 0 || !strings.Contains(errs, "the checkpoint before step 1 failed") {
		t.Errorf("a rewind to before a step whose checkpoint failed: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, "two.txt")); err != nil {
		t.Errorf("the refused rewind changed the files: %v", err)
	}
	if code, _, errs = runCLI(t, context.Background(), env, "sessions", "rewind", id, "--at", "2"); code != 0 {
		t.Errorf("a rewind to before step 2: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, "two.txt")); err == nil {
		t.Error("two.txt is still there after the rewind to before step 2")
	}
}

// TestBigFilesAreSaidLeftOut: a file over the 10 MB limit, changed by a
// step, is not in the diff nor restored by a rewind; both say so, naming
// it (the journal's "skipped" was shown nowhere), and so does a later
// session's diff.
func TestBigFilesAreSaidLeftOut(t *testing.T) {
	ws, _ := gitWorkspace(t)
	if err := os.WriteFile(filepath.Join(ws, "big.bin"), make([]byte, 11<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	env := agentEnv(t)
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"run_shell","arguments":{"command":"echo more >> big.bin"}},`+
		`{"name":"write_file","arguments":{"path":"small.txt","content":"small\n"}}]},{"answer":"done"}]}`)
	code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--allow-shell", "--yes", "grow big.bin")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	id := sessionOf(t, errs)
	said := regexp.MustCompile(`note: over the 10 MB limit of checkpoints, so left out of them .*: big\.bin`)
	code, diff, errs := runCLI(t, context.Background(), env, "sessions", "diff", id)
	if code != 0 || !strings.Contains(diff, "+++ b/small.txt") || strings.Contains(diff, "big.bin") || !said.MatchString(errs) {
		t.Errorf("sessions diff: exit %d\n%s\nstderr: %s", code, diff, errs)
	}
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "rewind", id, "--at", "1")
	if code != 0 || !said.MatchString(errs) {
		t.Errorf("sessions rewind: exit %d\n%s\nstderr: %s", code, out, errs)
	}
	if fi, err := os.Stat(filepath.Join(ws, "big.bin")); err != nil || fi.Size() != 11<<20+5 {
		t.Errorf("big.bin after the rewind: %v %v (a rewind does not restore it)", fi, err)
	}
	// A later session's checkpoints keep it out without a word of their
	// own: its diff names it all the same.
	sc = writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"later.txt","content":"later\n"}}]},{"answer":"done"}]}`)
	if code, _, errs = runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--yes", "later"); code != 0 {
		t.Fatalf("later run: exit %d: %s", code, errs)
	}
	if code, diff, errs = runCLI(t, context.Background(), env, "sessions", "diff", sessionOf(t, errs)); code != 0 || !said.MatchString(errs) {
		t.Errorf("the later session's diff: exit %d\n%s\nstderr: %s", code, diff, errs)
	}
}

// TestDiffHidesTheKey: a step writes the API key into a file. The journal
// is without it, and so is sessions diff (and what rewind says); the
// checkpoint store keeps the file as it was: the rewind's undo restores it
// byte for byte, key and all, and a second undo takes the first back.
func TestDiffHidesTheKey(t *testing.T) {
	const key = "sk-test-cli-0123456789abcdef"
	ws, _ := gitWorkspace(t)
	env := agentEnv(t)
	env["OPENAI_API_KEY"] = key
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":".env","content":"OPENAI_API_KEY=`+key+`\n"}}]},{"answer":"done"}]}`)
	code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--yes", "keep the key")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	id := sessionOf(t, errs)
	if j := strings.Join(journalLines(t, env["AGENTTY_HOME"], id, ""), "\n"); strings.Contains(j, key) {
		t.Fatal("the journal has the key")
	}
	code, diff, errs := runCLI(t, context.Background(), env, "sessions", "diff", id)
	if code != 0 || strings.Contains(diff+errs, key) || !strings.Contains(diff, "+OPENAI_API_KEY=[redacted OPENAI_API_KEY]") {
		t.Errorf("sessions diff: exit %d\n%s\nstderr: %s", code, diff, errs)
	}
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "rewind", id, "--at", "1")
	if code != 0 || strings.Contains(out+errs, key) {
		t.Fatalf("rewind: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, ".env")); err == nil {
		t.Error(".env is still there after the rewind")
	}
	if code, out, errs = runCLI(t, context.Background(), env, "sessions", "rewind", id, "--undo"); code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".env")); string(b) != "OPENAI_API_KEY="+key+"\n" {
		t.Errorf(".env after the undo: %q", b)
	}
	// A second undo takes the first back: the files as the rewind left them.
	if code, out, errs = runCLI(t, context.Background(), env, "sessions", "rewind", id, "--undo"); code != 0 || strings.Contains(out+errs, key) {
		t.Fatalf("second undo: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, ".env")); err == nil {
		t.Error(".env is there after the second undo")
	}
}
