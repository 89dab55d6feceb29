package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentty/agentty/config"
)

// How git is run on agentty's store, and how the store is made.

// worktreeOf returns the store whose worktree ws is (Store.Worktree made
// it for a fork), or "". The workspace's .git file names it; the store's
// own record of the worktree must name ws back, so that a folder cannot
// point agentty at another workspace's store.
func worktreeOf(dir, ws string) string {
	b, err := readAtMost(filepath.Join(ws, ".git"))
	if err != nil {
		return ""
	}
	meta, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || !filepath.IsAbs(meta) {
		return ""
	}
	meta = filepath.Clean(meta)
	store := filepath.Dir(filepath.Dir(meta)) // STORE/worktrees/NAME
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // git writes the path it resolved
	}
	if filepath.Base(filepath.Dir(meta)) != "worktrees" || filepath.Dir(store) != dir || !strings.HasSuffix(store, ".git") {
		return ""
	}
	back, err := readAtMost(filepath.Join(meta, "gitdir"))
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(strings.TrimSpace(string(back))); err != nil || real != filepath.Join(ws, ".git") {
		return ""
	}
	return store
}

// gitEnv is how git is run on the store: agentty's own repository and
// config, the workspace as its work tree, index the index; no hooks, no
// fsmonitor, no prompt, nothing of the person's repository.
func (s *Store) gitEnv(index string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_DIR="+s.gitDir, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "GIT_ATTR_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=agentty", "GIT_AUTHOR_EMAIL=agentty@localhost", "GIT_COMMITTER_NAME=agentty", "GIT_COMMITTER_EMAIL=agentty@localhost")
	if index != "" {
		env = append(env, "GIT_WORK_TREE="+s.ws, "GIT_INDEX_FILE="+index)
	}
	return env
}

// gitArgs come before every git command's own.
var gitArgs = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.autocrlf=false",
	"-c", "core.quotepath=false", "-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "core.safecrlf=false", "-c", "advice.addEmbeddedRepo=false", "-c", "core.attributesFile=/dev/null", "-c", "worktree.useRelativePaths=false"}

// run runs git with args on the store (with index as its index: "" for
// none), stdin as its input, and returns its output.
func (s *Store) run(ctx context.Context, index string, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, gitArgs...), args...)...)
	cmd.Env = s.gitEnv(index)
	cmd.Dir = s.ws
	groupOf(cmd)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.Bytes(), fmt.Errorf("git %s: %s", args[0], msg)
	}
	return out.Bytes(), nil
}

// gitTimeout bounds one git command: one that waits (on a FIFO a
// folder holds where git looks, a program that never ends) is killed, with
// what it started.
const gitTimeout = 2 * time.Minute

// groupOf starts cmd in a process group of its own, killed whole when its
// context ends, and does not wait long for what holds its output after.
func groupOf(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
}

// line runs git and returns its output's first line.
func (s *Store) line(ctx context.Context, index string, args ...string) (string, error) {
	out, err := s.run(ctx, index, nil, args...)
	first, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(first), err
}

// initGit makes the store's repository if it is not there.
func (s *Store) initGit(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(s.gitDir, "HEAD")); err == nil {
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, gitArgs...), "init", "-q", "--bare", s.gitDir)...)
	cmd.Env = s.gitEnv("")
	groupOf(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %s", strings.TrimSpace(string(out)))
	}
	// The folder's .gitattributes choose filters from the person's own
	// git config (git-lfs's, …), which would run programs and change what
	// is kept: the store's attributes, read first, turn every filter and
	// conversion off, and diff every file with git's own driver.
	info := filepath.Join(s.gitDir, "info")
	if err := os.MkdirAll(info, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(info, "attributes"), []byte("* -filter -text -ident -working-tree-encoding diff\n"), 0o600); err != nil {
		return err
	}
	// The data folder inside the workspace (agentty run in a home folder
	// kept in git) is not kept by its own checkpoints.
	if rel, err := filepath.Rel(s.ws, s.dir); err == nil && filepath.IsLocal(rel) {
		data := filepath.Dir(s.dir)
		if r, err := filepath.Rel(s.ws, data); err == nil && filepath.IsLocal(r) {
			rel = r
		}
		f, err := os.OpenFile(filepath.Join(info, "exclude"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		fmt.Fprintln(f, "/"+globEscape.Replace(filepath.ToSlash(rel))+"/")
		if err := f.Close(); err != nil {
			return err
		}
	}
	return os.MkdirAll(filepath.Join(s.gitDir, "agentty-index"), 0o700)
}

// Held says where the store keeps this workspace's checkpoints (every
// session's) and how many bytes they hold there.
func (s *Store) Held() (string, int64) {
	dir := s.gitDir
	if !s.git {
		dir = filepath.Join(s.dir, "files")
	}
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return dir, n
}

// readAtMost reads a small regular file (a .git file, a worktree's
// record), without waiting on a FIFO.
func readAtMost(path string) ([]byte, error) {
	b, _, err := config.ReadAtMost(path, 4096)
	return b, err
}
