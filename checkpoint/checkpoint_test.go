package checkpoint_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/agentty/agentty/checkpoint"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/internal/gittest"
)

// git runs git in dir as the person would (their own repository).
func git(t *testing.T, dir string, args ...string) string {
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

func write(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, mode)
}

// repo is a git repository with a commit, a staged change and a stash: the
// person's state, which checkpoints must leave as it is.
func repo(t *testing.T) (string, func() string) {
	t.Helper()
	ws := t.TempDir()
	git(t, ws, "init", "-q", "-b", "main")
	write(t, filepath.Join(ws, "keep.txt"), "kept\n", 0o644)
	write(t, filepath.Join(ws, "edit.sh"), "#!/bin/sh\necho one\n", 0o755)
	write(t, filepath.Join(ws, "gone.txt"), "to be removed\n", 0o644)
	write(t, filepath.Join(ws, ".gitignore"), "*.log\n", 0o644)
	git(t, ws, "add", "-A")
	git(t, ws, "commit", "-qm", "first")
	write(t, filepath.Join(ws, "keep.txt"), "kept, stashed\n", 0o644)
	git(t, ws, "stash", "-q")
	write(t, filepath.Join(ws, "staged.txt"), "staged\n", 0o644)
	git(t, ws, "add", "staged.txt")
	write(t, filepath.Join(ws, "debug.log"), "ignored\n", 0o644)
	person := func() string { // the whole .git byte for byte; HEAD, branch, stash and index
		idx, _ := os.ReadFile(filepath.Join(ws, ".git", "index"))
		return dotGit(t, ws) + git(t, ws, "rev-parse", "HEAD") + " " + git(t, ws, "symbolic-ref", "HEAD") + " " + git(t, ws, "stash", "list") + " " +
			git(t, ws, "diff", "--cached", "--name-only") + " " + string(bytes.TrimSpace(idx[:12]))
	}
	return ws, person
}

// dotGit is the record of ws's whole .git (gittest.DotGit).
func dotGit(t *testing.T, ws string) string {
	t.Helper()
	rec, err := gittest.DotGit(ws)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func checkpointOf(t *testing.T, s *checkpoint.Store, reason string, step int, calls ...engine.ToolCall) checkpoint.Point {
	t.Helper()
	cp, err := s.Checkpoint(context.Background(), "0mx2sess", reason, calls)
	if err != nil {
		t.Fatal(err)
	}
	return checkpoint.Point{Step: step, Checkpointed: cp}
}

// TestGitRewindRestoresEverything: a step that writes a file, edits an
// executable and removes one through the shell; the diff shows the three;
// rewinding to before the step restores them byte for byte, modes kept,
// the person's .git byte for byte untouched; the rewind is
// undone; a file changed by hand since is not overwritten unless forced.
func TestGitRewindRestoresEverything(t *testing.T) {
	ws, person := repo(t)
	before := person()
	s, err := checkpoint.Open(t.TempDir(), ws, 0)
	if err != nil || s.Mode() != "git" {
		t.Fatalf("open: %v, mode %s", err, s.Mode())
	}
	ctx := context.Background()
	p1 := checkpointOf(t, s, engine.CheckpointBefore, 1)
	write(t, filepath.Join(ws, "new.txt"), "new\n", 0o644)
	write(t, filepath.Join(ws, "edit.sh"), "#!/bin/sh\necho two\n", 0o755)
	if out, err := exec.Command("sh", "-c", "cd '"+ws+"' && rm gone.txt").CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	after := checkpointOf(t, s, engine.CheckpointAfter, 1)
	if strings.Join(after.Changed, ",") != "edit.sh,gone.txt,new.txt" {
		t.Errorf("changed: %v", after.Changed)
	}
	points := []checkpoint.Point{p1, after}
	at1, err := checkpoint.At(points, 1)
	if err != nil {
		t.Fatal(err)
	}
	var diff bytes.Buffer
	if err := s.Diff(ctx, &diff, at1, checkpoint.State{Tree: after.Tree}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+echo two", "-echo one", "deleted file mode 100644", "+new", "new file mode 100644"} {
		if !strings.Contains(diff.String(), want) {
			t.Errorf("the diff lacks %q:\n%s", want, diff.String())
		}
	}
	if strings.Contains(diff.String(), "debug.log") {
		t.Errorf("the diff has an ignored file:\n%s", diff.String())
	}
	plan, err := s.Plan(ctx, "0mx2sess", points, at1)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.HandChanged) != 0 {
		t.Fatalf("hand-changed with no hand: %v", plan.HandChanged)
	}
	if err := s.Apply(ctx, "0mx2sess", plan, false); err != nil {
		t.Fatal(err)
	}
	check := func(path, text string, mode os.FileMode) {
		t.Helper()
		fi, err := os.Stat(filepath.Join(ws, path))
		b, _ := os.ReadFile(filepath.Join(ws, path))
		if err != nil || string(b) != text || fi.Mode().Perm() != mode {
			t.Errorf("%s: %q %v (%v), want %q %v", path, b, fi.Mode().Perm(), err, text, mode)
		}
	}
	check("edit.sh", "#!/bin/sh\necho one\n", 0o755)
	check("gone.txt", "to be removed\n", 0o644)
	check("debug.log", "ignored\n", 0o644)
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("new.txt is still there: %v", err)
	}
	if got := person(); got != before {
		t.Errorf("the person's repository changed:\n%s\n%s", before, got)
	}
	// The rewind's checkpoint undoes it.
	points = append(points, checkpoint.Point{Step: 1, Checkpointed: plan.Now})
	undo, err := checkpoint.Undo(points)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "keep.txt"), "changed by hand\n", 0o644)
	plan, err = s.Plan(ctx, "0mx2sess", points, undo)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(plan.HandChanged, ",") != "keep.txt" {
		t.Fatalf("hand-changed: %v", plan.HandChanged)
	}
	var hc *checkpoint.HandChangedError
	if err := s.Apply(ctx, "0mx2sess", plan, false); !errors.As(err, &hc) {
		t.Fatalf("a rewind over a hand-changed file: %v", err)
	}
	check("edit.sh", "#!/bin/sh\necho one\n", 0o755) // nothing was done
	if err := s.Apply(ctx, "0mx2sess", plan, true); err != nil {
		t.Fatal(err)
	}
	check("edit.sh", "#!/bin/sh\necho two\n", 0o755)
	check("new.txt", "new\n", 0o644)   // git keeps the executable bit, not the rest of a mode
	check("keep.txt", "kept\n", 0o644) // as the rewind found it: the hand's change came after
	if _, err := os.Stat(filepath.Join(ws, "gone.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("gone.txt came back with the undo: %v", err)
	}
	if got := person(); got != before {
		t.Errorf("the person's repository changed:\n%s\n%s", before, got)
	}
}

// TestHostileRepoConfigRunsNothing: a workspace whose .git/config names
// programs (fsmonitor, a clean filter the .gitattributes asks for, hooks)
// is checkpointed and rewound without running any of them.
func TestHostileRepoConfigRunsNothing(t *testing.T) {
	ws, _ := repo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	git(t, ws, "config", "core.fsmonitor", "touch "+marker+"; echo")
	git(t, ws, "config", "filter.evil.clean", "touch "+marker+"; cat")
	git(t, ws, "config", "filter.evil.smudge", "touch "+marker+"; cat")
	git(t, ws, "config", "core.hooksPath", filepath.Join(ws, "hooks"))
	write(t, filepath.Join(ws, "hooks", "post-checkout"), "#!/bin/sh\ntouch "+marker+"\n", 0o755)
	write(t, filepath.Join(ws, ".gitattributes"), "* filter=evil diff=evil\n", 0o644)
	git(t, ws, "config", "diff.evil.textconv", "touch "+marker+"; cat")
	os.Remove(marker)
	s, _ := checkpoint.Open(t.TempDir(), ws, 0)
	p1 := checkpointOf(t, s, engine.CheckpointBefore, 1)
	write(t, filepath.Join(ws, "keep.txt"), "changed\n", 0o644)
	p2 := checkpointOf(t, s, engine.CheckpointAfter, 1)
	at, _ := checkpoint.At([]checkpoint.Point{p1, p2}, 1)
	s.Diff(context.Background(), &bytes.Buffer{}, at, checkpoint.State{})
	plan, err := s.Plan(context.Background(), "0mx2sess", []checkpoint.Point{p1, p2}, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(context.Background(), "0mx2sess", plan, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a program the workspace's git config names was run")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "keep.txt")); string(b) != "kept\n" {
		t.Errorf("keep.txt: %q", b)
	}
}

// TestFilesModeOutsideGit: outside a git repository the files the file
// tools name are kept and rewound; a shell call is said not covered; a
// file over the limit is left out.
func TestFilesModeOutsideGit(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "notes.md"), "# Notes\n", 0o640)
	write(t, filepath.Join(ws, "big.bin"), strings.Repeat("x", 2000), 0o644)
	s, _ := checkpoint.Open(t.TempDir(), ws, 1000)
	if s.Mode() != "files" {
		t.Fatalf("mode %s", s.Mode())
	}
	call := func(name, args string) engine.ToolCall { return engine.ToolCall{Name: name, Args: []byte(args)} }
	p1 := checkpointOf(t, s, engine.CheckpointBefore, 1, call("write_file", `{"path":"notes.md"}`), call("write_file", `{"path":"sub/new.md"}`),
		call("edit_file", `{"path":"big.bin"}`), call("run_shell", `{"command":"rm -rf x"}`))
	if !strings.Contains(p1.Note, "shell command's effects are not") || strings.Join(p1.Skipped, ",") != "big.bin" || len(p1.Files) != 2 {
		t.Fatalf("checkpoint: %+v", p1.Checkpointed)
	}
	write(t, filepath.Join(ws, "notes.md"), "# Notes\n- tea\n", 0o640)
	write(t, filepath.Join(ws, "sub", "new.md"), "new\n", 0o644)
	p2 := checkpointOf(t, s, engine.CheckpointAfter, 1)
	if strings.Join(p2.Changed, ",") != "notes.md,sub/new.md" {
		t.Errorf("changed: %v", p2.Changed)
	}
	points := []checkpoint.Point{p1, p2}
	at, err := checkpoint.At(points, 1)
	if err != nil {
		t.Fatal(err)
	}
	var diff bytes.Buffer
	if err := s.Diff(context.Background(), &diff, at, checkpoint.State{Files: map[string]engine.CheckpointFile{"notes.md": p2.Files[0], "sub/new.md": p2.Files[1]}}); err != nil || !strings.Contains(diff.String(), "+- tea") {
		t.Errorf("diff: %v\n%s", err, diff.String())
	}
	plan, err := s.Plan(context.Background(), "0mx2sess", points, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(context.Background(), "0mx2sess", plan, false); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "notes.md"))
	fi, _ := os.Stat(filepath.Join(ws, "notes.md"))
	if string(b) != "# Notes\n" || fi.Mode().Perm() != 0o640 {
		t.Errorf("notes.md: %q %v", b, fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(ws, "sub")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sub/new.md, or the folder made for it, is still there")
	}
	// What the rewind wrote is not a hand's change: its undo asks nothing.
	points = append(points, checkpoint.Point{Step: 1, Checkpointed: plan.Now})
	undo, _ := checkpoint.Undo(points)
	if plan, err = s.Plan(context.Background(), "0mx2sess", points, undo); err != nil || len(plan.HandChanged) != 0 || plan.Empty() {
		t.Fatalf("undo: %v, hand-changed %v, empty %v", err, plan.HandChanged, plan.Empty())
	}
	if !strings.Contains(strings.Join(plan.Notes, " "), "step 1 ran a shell command") {
		t.Errorf("the plan does not say the shell's effects are not undone: %v", plan.Notes)
	}
	// The same rewind again changes nothing.
	if plan, _ = s.Plan(context.Background(), "0mx2sess", points, at); !plan.Empty() {
		t.Errorf("a rewind to where the files are already: write %v, remove %v", plan.Write, plan.Remove)
	}
}

// TestGitLeavesBigFilesOut: a file over the limit is left out of a git
// checkpoint, said in Skipped, whether it was there at the first
// checkpoint or came later; it stays out of later ones without a word.
func TestGitLeavesBigFilesOut(t *testing.T) {
	ws, _ := repo(t)
	write(t, filepath.Join(ws, "data.bin"), strings.Repeat("x", 5000), 0o644)
	s, _ := checkpoint.Open(t.TempDir(), ws, 1000)
	p1 := checkpointOf(t, s, engine.CheckpointBefore, 1)
	write(t, filepath.Join(ws, "later.bin"), strings.Repeat("y", 5000), 0o644)
	write(t, filepath.Join(ws, "small.txt"), "small\n", 0o644)
	p2 := checkpointOf(t, s, engine.CheckpointBefore, 2)
	write(t, filepath.Join(ws, "small.txt"), "small, changed\n", 0o644)
	p3 := checkpointOf(t, s, engine.CheckpointAfter, 2)
	if strings.Join(p1.Skipped, ",") != "data.bin" || strings.Join(p2.Skipped, ",") != "later.bin" || len(p3.Skipped) != 0 {
		t.Errorf("skipped: %v, %v, %v", p1.Skipped, p2.Skipped, p3.Skipped)
	}
	if strings.Join(p2.Changed, ",") != "small.txt" || strings.Join(p3.Changed, ",") != "small.txt" {
		t.Errorf("changed: %v, %v", p2.Changed, p3.Changed)
	}
	var diff bytes.Buffer
	s.Diff(context.Background(), &diff, checkpoint.State{Tree: p1.Tree}, checkpoint.State{Tree: p3.Tree})
	if strings.Contains(diff.String(), ".bin") || !strings.Contains(diff.String(), "+small, changed") {
		t.Errorf("diff:\n%s", diff.String())
	}
}

// TestWorktreeStoreMustNameTheFolderBack: a folder whose .git file points
// into agentty's checkpoints does not get that store unless the store's
// record of the worktree names the folder back (as git worktree add makes
// it): a folder cannot borrow another workspace's checkpoints.
func TestWorktreeStoreMustNameTheFolderBack(t *testing.T) {
	data := t.TempDir()
	other, _ := repo(t)
	s, _ := checkpoint.Open(data, other, 0)
	p := checkpointOf(t, s, engine.CheckpointBefore, 1)
	fake := t.TempDir()
	stores, _ := filepath.Glob(filepath.Join(data, "checkpoints", "*.git"))
	meta := filepath.Join(stores[0], "worktrees", "w")
	os.MkdirAll(meta, 0o700)
	os.WriteFile(filepath.Join(meta, "gitdir"), []byte(filepath.Join(t.TempDir(), ".git")+"\n"), 0o600)
	os.WriteFile(filepath.Join(fake, ".git"), []byte("gitdir: "+meta+"\n"), 0o600)
	f, _ := checkpoint.Open(data, fake, 0)
	var out bytes.Buffer
	if err := f.Diff(context.Background(), &out, checkpoint.State{Tree: p.Tree}, checkpoint.State{Tree: p.Tree}); err == nil {
		t.Error("a folder that only says it is a worktree reads another workspace's store")
	}
}

// TestGitCheckpointsSeeEveryChange: a step whose only change is a file
// whose name git quotes (a newline in it), or a removal, is a new tree
// with its change, whatever git prints.
func TestGitCheckpointsSeeEveryChange(t *testing.T) {
	ws, _ := repo(t)
	s, _ := checkpoint.Open(t.TempDir(), ws, 0)
	p1 := checkpointOf(t, s, engine.CheckpointBefore, 1)
	write(t, filepath.Join(ws, "odd\nname.txt"), "x\n", 0o644)
	p2 := checkpointOf(t, s, engine.CheckpointBefore, 2)
	os.Remove(filepath.Join(ws, "gone.txt"))
	p3 := checkpointOf(t, s, engine.CheckpointAfter, 2)
	if p2.Tree == p1.Tree || len(p2.Changed) != 1 || p3.Tree == p2.Tree || strings.Join(p3.Changed, ",") != "gone.txt" {
		t.Errorf("trees %s %s %s, changed %q %q", p1.Tree[:7], p2.Tree[:7], p3.Tree[:7], p2.Changed, p3.Changed)
	}
}

// TestPersonsFiltersDoNotRun: a filter the person's own git config
// defines (as git-lfs's is), chosen by the folder's .gitattributes, is not
// run by a checkpoint, and the file is kept as it is.
func TestPersonsFiltersDoNotRun(t *testing.T) {
	ws, _ := repo(t)
	home := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	write(t, filepath.Join(home, ".gitconfig"), "[filter \"lfs\"]\n\tclean = touch "+marker+"; cat\n\trequired = true\n", 0o644)
	t.Setenv("HOME", home)
	write(t, filepath.Join(ws, ".gitattributes"), "*.bin filter=lfs\n", 0o644)
	write(t, filepath.Join(ws, "data.bin"), "raw bytes\n", 0o644)
	s, _ := checkpoint.Open(t.TempDir(), ws, 0)
	p := checkpointOf(t, s, engine.CheckpointBefore, 1)
	if _, err := os.Stat(marker); err == nil {
		t.Error("the person's filter ran on a checkpoint")
	}
	var diff bytes.Buffer
	if err := s.Diff(context.Background(), &diff, checkpoint.State{Tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}, checkpoint.State{Tree: p.Tree}); err != nil || !strings.Contains(diff.String(), "+raw bytes") {
		t.Errorf("data.bin is not kept as it is: %v\n%s", err, diff.String())
	}
}

// TestRewindAcrossAFolderThatBecameALink: a step replaces the folder sub
// with a link to another folder, and the folder dir with a file; the
// rewind to before it succeeds (it once restored the files, then failed
// removing the link: "directory not empty"), leaves sub a folder and dir
// a folder with their files, and the folder the link named as it was.
func TestRewindAcrossAFolderThatBecameALink(t *testing.T) {
	ws, _ := repo(t)
	write(t, filepath.Join(ws, "sub", "a.txt"), "a\n", 0o644)
	write(t, filepath.Join(ws, "dir", "b.txt"), "b\n", 0o644)
	write(t, filepath.Join(ws, "other", "o.txt"), "o\n", 0o644)
	s, _ := checkpoint.Open(t.TempDir(), ws, 0)
	p1 := checkpointOf(t, s, engine.CheckpointBefore, 1)
	if err := os.RemoveAll(filepath.Join(ws, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("other", filepath.Join(ws, "sub")); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(ws, "dir"))
	write(t, filepath.Join(ws, "dir"), "a file now\n", 0o644)
	p2 := checkpointOf(t, s, engine.CheckpointAfter, 1)
	points := []checkpoint.Point{p1, p2}
	at, err := checkpoint.At(points, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	plan, err := s.Plan(ctx, "0mx2sess", points, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, "0mx2sess", plan, false); err != nil {
		t.Fatalf("the rewind across a folder that became a link: %v", err)
	}
	for path, want := range map[string]string{"sub/a.txt": "a\n", "dir/b.txt": "b\n", "other/o.txt": "o\n"} {
		if b, err := os.ReadFile(filepath.Join(ws, path)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", path, b, err, want)
		}
	}
	if fi, err := os.Lstat(filepath.Join(ws, "sub")); err != nil || !fi.IsDir() {
		t.Errorf("sub is not a folder again: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "other", "a.txt")); err == nil {
		t.Error("the rewind wrote through the link into the folder it named")
	}
	// The next rewind (its undo) works too: sub a link, dir a file again.
	points = append(points, checkpoint.Point{Step: 1, Checkpointed: plan.Now})
	undo, _ := checkpoint.Undo(points)
	if plan, err = s.Plan(ctx, "0mx2sess", points, undo); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, "0mx2sess", plan, false); err != nil {
		t.Fatalf("the undo: %v", err)
	}
	if l, err := os.Readlink(filepath.Join(ws, "sub")); err != nil || l != "other" {
		t.Errorf("sub after the undo: %q %v", l, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "dir")); string(b) != "a file now\n" {
		t.Errorf("dir after the undo: %q", b)
	}
}

// rewind plans and applies a rewind of the session to to (forced or
// not), and returns its points with the rewind's checkpoint added.
func rewind(t *testing.T, s *checkpoint.Store, points []checkpoint.Point, to checkpoint.State, force bool) ([]checkpoint.Point, error) {
	t.Helper()
	plan, err := s.Plan(context.Background(), "0mx2sess", points, to)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(context.Background(), "0mx2sess", plan, force); err != nil {
		return points, err
	}
	if plan.Empty() { // as the CLI and the console: nothing journaled
		return points, nil
	}
	return append(slices.Clone(points), checkpoint.Point{Step: to.Step, Checkpointed: plan.Now}), nil
}

// TestFilesModeKeepsHandChanges: outside git, a file changed by hand
// after the session's last checkpoint is named by the rewind's plan and
// not overwritten unless forced; forced, the rewind restores it.
func TestFilesModeKeepsHandChanges(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "notes.md"), "# Notes\n", 0o644)
	s, _ := checkpoint.Open(t.TempDir(), ws, 0)
	call := engine.ToolCall{Name: "write_file", Args: []byte(`{"path":"notes.md"}`)}
	p1 := checkpointOf(t, s, engine.CheckpointBefore, 1, call)
	write(t, filepath.Join(ws, "notes.md"), "# Notes\n- the step's\n", 0o644)
	p2 := checkpointOf(t, s, engine.CheckpointAfter, 1)
	write(t, filepath.Join(ws, "notes.md"), "# Notes\n- the step's\n- mine, by hand\n", 0o644)
	points := []checkpoint.Point{p1, p2}
	at, _ := checkpoint.At(points, 1)
	plan, err := s.Plan(context.Background(), "0mx2sess", points, at)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(plan.HandChanged, ",") != "notes.md" {
		t.Errorf("hand-changed: %v, want notes.md", plan.HandChanged)
	}
	var hc *checkpoint.HandChangedError
	if _, err := rewind(t, s, points, at, false); !errors.As(err, &hc) {
		t.Errorf("a rewind over a hand's change, not forced: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.md")); string(b) != "# Notes\n- the step's\n- mine, by hand\n" {
		t.Fatalf("the hand's change was overwritten: %q", b)
	}
	if _, err := rewind(t, s, points, at, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.md")); string(b) != "# Notes\n" {
		t.Errorf("forced: %q", b)
	}
}

// TestUndoTakesTheLastRewindBack: in either mode, a rewind, its undo, an
// undo of the undo and one more each leave the files exactly as the one
// before found them.
func TestUndoTakesTheLastRewindBack(t *testing.T) {
	for _, mode := range []string{"git", "files"} {
		t.Run(mode, func(t *testing.T) {
			ws := t.TempDir()
			if mode == "git" {
				ws, _ = repo(t)
			}
			write(t, filepath.Join(ws, "a.txt"), "before\n", 0o644)
			s, _ := checkpoint.Open(t.TempDir(), ws, 0)
			call := engine.ToolCall{Name: "write_file", Args: []byte(`{"path":"a.txt"}`)}
			p1 := checkpointOf(t, s, engine.CheckpointBefore, 1, call)
			write(t, filepath.Join(ws, "a.txt"), "after step 1\n", 0o644)
			p2 := checkpointOf(t, s, engine.CheckpointBefore, 2, call)
			write(t, filepath.Join(ws, "a.txt"), "after step 2\n", 0o644)
			points := []checkpoint.Point{p1, p2, checkpointOf(t, s, engine.CheckpointAfter, 2)}
			at, _ := checkpoint.At(points, 2)
			points, err := rewind(t, s, points, at, false)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []string{"after step 1\n", "after step 2\n", "after step 1\n", "after step 2\n"} {
				if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != want {
					t.Fatalf("after %d undos: %q, want %q", i, b, want)
				}
				undo, err := checkpoint.Undo(points)
				if err != nil {
					t.Fatal(err)
				}
				if points, err = rewind(t, s, points, undo, false); err != nil {
					t.Fatalf("undo %d: %v", i+1, err)
				}
			}
		})
	}
}

// TestSpecialFilesAreLeftOut: a FIFO in the place of a tracked file (what
// a prompt-injected mkfifo makes) once failed every checkpoint of the
// workspace, this session's and every later one's, as git add refuses it.
// It is left out, said in Special, and the checkpoint goes on: the step's
// other changes are kept, the diff and a rewind work (the file comes back
// as it was, in the FIFO's place), and another session's checkpoints too.
func TestSpecialFilesAreLeftOut(t *testing.T) {
	ws, _ := repo(t)
	s, _ := checkpoint.Open(t.TempDir(), ws, 0)
	p1 := checkpointOf(t, s, engine.CheckpointBefore, 1)
	fifo := func() {
		t.Helper()
		os.Remove(filepath.Join(ws, "keep.txt"))
		if err := syscall.Mkfifo(filepath.Join(ws, "keep.txt"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fifo()
	write(t, filepath.Join(ws, "new.txt"), "new\n", 0o644)
	p2, err := s.Checkpoint(context.Background(), "0mx2sess", engine.CheckpointBefore, nil)
	if err != nil {
		t.Fatalf("a checkpoint with a FIFO in the place of a file: %v", err)
	}
	if strings.Join(p2.Special, ",") != "keep.txt" || strings.Join(p2.Changed, ",") != "keep.txt,new.txt" {
		t.Errorf("special %v, changed %v", p2.Special, p2.Changed)
	}
	write(t, filepath.Join(ws, "new.txt"), "new, changed\n", 0o644)
	p3 := checkpointOf(t, s, engine.CheckpointAfter, 2)
	if len(p3.Special) != 0 || strings.Join(p3.Changed, ",") != "new.txt" {
		t.Errorf("the next checkpoint: special %v, changed %v", p3.Special, p3.Changed)
	}
	points := []checkpoint.Point{p1, {Step: 2, Checkpointed: p2}, p3}
	var diff bytes.Buffer
	if _, err := s.DiffOf(context.Background(), &diff, points, -1); err != nil || !strings.Contains(diff.String(), "+new, changed") {
		t.Errorf("diff: %v\n%s", err, diff.String())
	}
	at, _ := checkpoint.At(points, 1)
	if _, err := rewind(t, s, points, at, false); err != nil {
		t.Fatalf("a rewind over a FIFO: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "keep.txt")); err != nil || string(b) != "kept\n" {
		t.Errorf("keep.txt after the rewind: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
		t.Error("new.txt is still there after the rewind")
	}
	// Another session, the FIFO there again, its index seeded from this
	// one's: its checkpoints work, and keep the step's changes.
	fifo()
	for i, id := range []string{"0mx2other", "0mx2other"} {
		if i == 1 {
			write(t, filepath.Join(ws, "later.txt"), "later\n", 0o644)
		}
		other, err := s.Checkpoint(context.Background(), id, engine.CheckpointBefore, nil)
		if err != nil || other.Tree == "" || i == 1 && strings.Join(other.Changed, ",") != "later.txt" {
			t.Fatalf("another session's checkpoint %d: %v %+v", i+1, err, other)
		}
	}
}

// TestRewindPastAFailedCheckpointIsRefused: when the checkpoint before
// step 2 failed, "before step 2" is not kept: a rewind there would be to
// before step 3, and is refused saying why; before steps 1 and 3 are
// kept. A session whose every checkpoint failed says so.
func TestRewindPastAFailedCheckpointIsRefused(t *testing.T) {
	ws, _ := repo(t)
	s, _ := checkpoint.Open(t.TempDir(), ws, 0)
	p1 := checkpointOf(t, s, engine.CheckpointBefore, 1)
	p3 := checkpointOf(t, s, engine.CheckpointBefore, 3)
	fails := checkpoint.Failures([]engine.Event{{Step: 2, Kind: engine.KindNotice, Data: &engine.Notice{Level: "warn", About: engine.NoticeCheckpoint, Message: "checkpoint: disk full"}}})
	points := []checkpoint.Point{p1, p3}
	for at, refused := range map[int]bool{1: false, 2: true, 3: false} {
		to, err := checkpoint.At(points, at)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkpoint.Gap(fails, at, to); (err != nil) != refused || refused && !strings.Contains(err.Error(), "disk full") {
			t.Errorf("a rewind to before step %d: %v", at, err)
		}
	}
	// Outside git each file comes from the first checkpoint from at on that
	// kept it: a failure at any step from at on may have lost its before.
	dir := t.TempDir()
	write(t, filepath.Join(dir, "notes.md"), "before\n", 0o644)
	fs, _ := checkpoint.Open(t.TempDir(), dir, 0)
	f3 := checkpointOf(t, fs, engine.CheckpointBefore, 3, engine.ToolCall{Name: "write_file", Args: []byte(`{"path":"notes.md"}`)})
	for at, refused := range map[int]bool{1: true, 2: true, 3: false} {
		to, err := checkpoint.At([]checkpoint.Point{f3}, at)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkpoint.Gap(fails, at, to); (err != nil) != refused {
			t.Errorf("files mode: a rewind to before step %d: %v, want refused %v", at, err, refused)
		}
	}
	if err := checkpoint.NoneKept("0mx2sess", fails); !strings.Contains(err.Error(), "1 checkpoint failed, the last at step 2: checkpoint: disk full") {
		t.Errorf("none kept: %v", err)
	}
}

// TestFilesModeFIFO: outside git, a FIFO in the place of a file a file
// tool named is left out of the checkpoint (said in Special); the diff to
// the workspace as it is and a rewind work, the rewind saying it leaves
// the FIFO as it is (never opening it) and restoring the other files.
func TestFilesModeFIFO(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "notes.md"), "# Notes\n", 0o644)
	write(t, filepath.Join(ws, "other.md"), "other\n", 0o644)
	s, _ := checkpoint.Open(t.TempDir(), ws, 0)
	call := func(path string) engine.ToolCall {
		return engine.ToolCall{Name: "write_file", Args: []byte(`{"path":"` + path + `"}`)}
	}
	p1 := checkpointOf(t, s, engine.CheckpointBefore, 1, call("notes.md"), call("other.md"))
	os.Remove(filepath.Join(ws, "notes.md"))
	if err := syscall.Mkfifo(filepath.Join(ws, "notes.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "other.md"), "other, changed\n", 0o644)
	p2 := checkpointOf(t, s, engine.CheckpointBefore, 2, call("notes.md"))
	if strings.Join(p2.Special, ",") != "notes.md" {
		t.Errorf("special: %v", p2.Special)
	}
	points := []checkpoint.Point{p1, p2}
	var diff bytes.Buffer
	if _, err := s.DiffOf(context.Background(), &diff, points, 1); err != nil {
		t.Errorf("diff: %v", err)
	}
	at, _ := checkpoint.At(points, 1)
	plan, err := s.Plan(context.Background(), "0mx2sess", points, at)
	if err != nil {
		t.Fatalf("a rewind with a FIFO in a file's place: %v", err)
	}
	if !strings.Contains(strings.Join(plan.Notes, " "), "notes.md is not a regular file now") || strings.Join(plan.Write, ",") != "other.md" {
		t.Errorf("plan: notes %v, write %v", plan.Notes, plan.Write)
	}
	if err := s.Apply(context.Background(), "0mx2sess", plan, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "other.md")); string(b) != "other\n" {
		t.Errorf("other.md: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(ws, "notes.md")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("notes.md is not left as it was: %v %v", fi, err)
	}
}
