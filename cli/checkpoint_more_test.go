package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillMidShellKeepsTheCheckpoint kills the real binary with SIGKILL
// while run_shell hangs after changing files: the "before" checkpoint was
// journaled ahead of the tool's tool_started, so sessions diff shows what
// the step did so far (to the working tree: the step did not end) and
// rewind --at 1 --yes restores the files exactly as before the run.
func TestKillMidShellKeepsTheCheckpoint(t *testing.T) {
	bin := buildBinary(t)
	ws, person := gitWorkspace(t)
	before := person()
	read := func(p string) string { b, _ := os.ReadFile(filepath.Join(ws, p)); return string(b) }
	editBefore, goneBefore := read("edit.sh"), read("gone.txt")
	// exec: the sleep replaces the shell, so that it dies with agentty
	// (the tool's child gets SIGKILL when its parent dies).
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"run_shell","arguments":{"command":"echo changed > edit.sh; rm gone.txt; exec sleep 30"}}]},{"answer":"done"}]}`)
	env := agentEnv(t)
	home := env["AGENTTY_HOME"]

	cmd := exec.Command(bin, "run", "--workspace", ws, "--model", "script:"+sc, "--allow-shell", "--yes", "change things and hang")
	cmd.Dir = ws
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	logs := t.TempDir()
	stdout, _ := os.Create(filepath.Join(logs, "stdout"))
	stderr, _ := os.Create(filepath.Join(logs, "stderr"))
	defer stdout.Close()
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
		}
	}()
	logsOf := func() string {
		o, _ := os.ReadFile(filepath.Join(logs, "stdout"))
		e, _ := os.ReadFile(filepath.Join(logs, "stderr"))
		return "stdout:\n" + string(o) + "\nstderr:\n" + string(e)
	}

	// Wait for the session's journal to have run_shell's tool_started, and
	// for the shell to have changed the files.
	var id string
	var lines []string
	started := -1
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no tool_started of run_shell (or the files unchanged) after 60s; journal:\n%s\n%s", strings.Join(lines, "\n"), logsOf())
		}
		if id == "" {
			entries, _ := os.ReadDir(filepath.Join(home, "sessions"))
			if len(entries) != 1 {
				continue
			}
			id = entries[0].Name()
		}
		b, err := os.ReadFile(filepath.Join(home, "sessions", id, "events.jsonl"))
		if err != nil {
			continue
		}
		lines = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		started = -1
		for i, l := range lines {
			if strings.Contains(l, `"kind":"tool_started"`) && strings.Contains(l, "run_shell") {
				started = i
				break
			}
		}
		_, goneErr := os.Stat(filepath.Join(ws, "gone.txt"))
		if started >= 0 && read("edit.sh") == "changed\n" && os.IsNotExist(goneErr) {
			break
		}
	}
	checkpointAt := -1
	for i, l := range lines[:started] {
		if strings.Contains(l, `"kind":"checkpoint"`) && strings.Contains(l, `"reason":"before"`) {
			checkpointAt = i
		}
	}
	if checkpointAt < 0 {
		t.Errorf("no checkpoint with reason before is journaled ahead of run_shell's tool_started:\n%s", strings.Join(lines[:started+1], "\n"))
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true

	// The files are as the killed step left them.
	if _, err := os.Stat(filepath.Join(ws, "gone.txt")); err == nil || read("edit.sh") != "changed\n" {
		t.Fatalf("after the kill: edit.sh %q, gone.txt stat %v", read("edit.sh"), err)
	}

	// diff: to the working tree, the last step not having ended.
	code, diff, errs := runCLI(t, context.Background(), env, "sessions", "diff", id)
	errs0 := errs
	if code != 0 || !strings.Contains(diff, "edit.sh") {
		t.Errorf("sessions diff: exit %d, stderr %q, stdout:\n%s", code, errs, diff)
	}
	if !strings.Contains(errs, "did not end") {
		t.Errorf("sessions diff does not say the last step did not end: stderr %q", errs)
	}
	for _, want := range []string{"+changed", "--- a/gone.txt"} {
		if !strings.Contains(diff, want) {
			t.Errorf("sessions diff lacks %q:\n%s", want, diff)
		}
	}

	// Without --yes: the files the killed step changed are changed since
	// the last checkpoint; the rewind refuses, naming them, and leaves them.
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "rewind", id, "--at", "1")
	if code == 0 || !strings.Contains(errs, "edit.sh") || !strings.Contains(errs, "gone.txt") || read("edit.sh") != "changed\n" {
		t.Errorf("rewind --at 1 without --yes over the killed step's changes: exit %d, edit.sh %q\nstdout: %s\nstderr: %s", code, read("edit.sh"), out, errs)
	}

	// rewind --at 1 --yes: the files as before the run.
	code, out, errs = runCLI(t, context.Background(), env, "sessions", "rewind", id, "--at", "1", "--yes")
	if code != 0 {
		t.Fatalf("rewind --at 1 --yes: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	t.Logf("diff:\n%s%s\nrewind: %s%s", errs0, diff, out, errs)
	fi, err := os.Stat(filepath.Join(ws, "edit.sh"))
	if err != nil || read("edit.sh") != editBefore || fi.Mode().Perm() != 0o755 || read("gone.txt") != goneBefore {
		t.Errorf("after the rewind: edit.sh %q (want %q) %v %v, gone.txt %q (want %q)\nrewind said: %s %s",
			read("edit.sh"), editBefore, fi, err, read("gone.txt"), goneBefore, out, errs)
	}
	if got := person(); got != before {
		t.Errorf("the person's repository changed:\n%s\n---\n%s", before, got)
	}
}

// TestTwoForksInTwoWorktrees forks a session twice at step 1, each fork in
// its own git worktree holding the workspace as after step 1; each fork
// then goes on with its own task in its own folder, the original workspace
// untouched by either.
func TestTwoForksInTwoWorktrees(t *testing.T) {
	ws, _ := gitWorkspace(t)
	env := agentEnv(t)
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"a.txt","content":"one\n"}}]},`+
		`{"tool_calls":[{"name":"write_file","arguments":{"path":"b.txt","content":"two\n"}}]},{"answer":"done"}]}`)
	code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--yes", "write a and b")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	_, ls, _ := runCLI(t, context.Background(), env, "sessions", "ls", "--workspace", ws, "--json")
	m := regexp.MustCompile(`"id":\s*"([^"]+)"`).FindStringSubmatch(ls)
	if m == nil {
		t.Fatalf("sessions ls --workspace %s --json has no id:\n%s", ws, ls)
	}
	id := m[1]
	readIn := func(dir, p string) string { b, _ := os.ReadFile(filepath.Join(dir, p)); return string(b) }
	exists := func(dir, p string) bool { _, err := os.Stat(filepath.Join(dir, p)); return err == nil }
	if readIn(ws, "a.txt") != "one\n" || readIn(ws, "b.txt") != "two\n" {
		t.Fatalf("the run left a.txt %q, b.txt %q", readIn(ws, "a.txt"), readIn(ws, "b.txt"))
	}

	parent := t.TempDir()
	dirs := []string{filepath.Join(parent, "fork-one"), filepath.Join(parent, "fork-two")}
	var forks []string
	for _, dir := range dirs {
		code, out, errs := runCLI(t, context.Background(), env, "sessions", "fork", id, "--at", "1", "--worktree", dir)
		fid := strings.TrimSpace(out)
		if code != 0 || fid == "" || strings.Contains(fid, "\n") {
			t.Fatalf("sessions fork %s --at 1 --worktree %s: exit %d\nstdout: %q\nstderr: %s", id, dir, code, out, errs)
		}
		if fid == id {
			t.Fatalf("the fork has the original's id %s", id)
		}
		forks = append(forks, fid)
		if readIn(dir, "a.txt") != "one\n" || exists(dir, "b.txt") {
			t.Errorf("worktree %s: a.txt %q, b.txt there %v; want a.txt \"one\\n\" and no b.txt", dir, readIn(dir, "a.txt"), exists(dir, "b.txt"))
		}
	}
	if forks[0] == forks[1] {
		t.Fatalf("two forks with one id %s", forks[0])
	}

	for i, dir := range dirs {
		word := []string{"one", "two"}[i]
		other := writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"c.txt","content":"fork `+word+`\n"}}]},{"answer":"done"}]}`)
		code, out, errs := runCLI(t, context.Background(), env, "run", "--session", forks[i], "--workspace", dir, "--model", "script:"+other, "--yes", "write c as fork "+word)
		if code != 0 {
			t.Fatalf("run --session %s --workspace %s: exit %d\nstdout: %s\nstderr: %s", forks[i], dir, code, out, errs)
		}
	}
	for i, dir := range dirs {
		want := "fork " + []string{"one", "two"}[i] + "\n"
		if got := readIn(dir, "c.txt"); got != want {
			t.Errorf("%s/c.txt = %q, want %q", dir, got, want)
		}
		if readIn(dir, "a.txt") != "one\n" || exists(dir, "b.txt") {
			t.Errorf("after its run, worktree %s: a.txt %q, b.txt there %v", dir, readIn(dir, "a.txt"), exists(dir, "b.txt"))
		}
	}
	if exists(ws, "c.txt") {
		t.Errorf("the original workspace has c.txt %q", readIn(ws, "c.txt"))
	}
	if readIn(ws, "a.txt") != "one\n" || readIn(ws, "b.txt") != "two\n" {
		t.Errorf("the original workspace changed: a.txt %q, b.txt %q", readIn(ws, "a.txt"), readIn(ws, "b.txt"))
	}

	code, ls1, errs := runCLI(t, context.Background(), env, "sessions", "ls", "--workspace", dirs[0])
	if code != 0 || !strings.Contains(ls1, forks[0]) {
		t.Errorf("sessions ls --workspace %s does not list fork 1 %s: exit %d %s\n%s", dirs[0], forks[0], code, errs, ls1)
	}
	if strings.Contains(ls1, forks[1]) {
		t.Errorf("sessions ls --workspace %s lists fork 2 %s, whose workspace is %s:\n%s", dirs[0], forks[1], dirs[1], ls1)
	}
	// The fork's history holds its parent's checkpoints: in its worktree,
	// a diff and a rewind to before step 1 read them.
	code, diff, errs := runCLI(t, context.Background(), env, "sessions", "diff", forks[0])
	if code != 0 || !strings.Contains(diff, "+fork one") || !strings.Contains(diff, "+one") {
		t.Errorf("sessions diff of fork 1: exit %d %s\n%s", code, errs, diff)
	}
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "rewind", forks[0], "--at", "1")
	if code != 0 || exists(dirs[0], "a.txt") || exists(dirs[0], "c.txt") || !exists(dirs[1], "c.txt") {
		t.Errorf("rewind of fork 1 to before step 1: exit %d %s %s; a.txt there %v", code, out, errs, exists(dirs[0], "a.txt"))
	}
}
