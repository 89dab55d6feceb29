// Package checkpoint keeps a workspace as it was at the steps of a
// session: checkpoints, the diff between them, rewinding the files to one,
// and forks in a worktree of one.
//
// In a git repository a checkpoint is the whole working tree (untracked
// files too, .gitignore respected) as a tree in agentty's own store: a
// bare repository in the data folder, one per workspace, whose work tree
// is the workspace and whose index is the session's own. The person's
// repository is never written, and never read by git: its config (which
// may name programs: fsmonitor, filters, hooks) belongs to whoever made
// the folder, and a workspace is someone else's code. Each checkpoint's
// tree has a ref, refs/agentty/SESSION/N, so that a gc keeps it; a fork's
// worktree gets a commit of it when it is made.
//
// Outside a git repository a checkpoint is the files the file tools name,
// as they were (content-addressed in the store); a shell command's effects
// are not covered, and the checkpoint says so.
package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentty/agentty/engine"
)

// DefaultMaxFile is the size past which a file is left out of a
// checkpoint, with a note.
const DefaultMaxFile = 10 << 20

// Store keeps the checkpoints of one workspace. It implements
// engine.Checkpointer; it is safe for concurrent use (a session's
// checkpoints are taken one at a time).
type Store struct {
	ws      string // the workspace, absolute, symlinks resolved
	git     bool   // the workspace is in a git repository
	dir     string // the store: <data>/checkpoints
	gitDir  string // git mode: the bare repository of this workspace
	host    string
	maxFile int64
	redact  func(string) string // what it shows is without these secrets (RedactWith)

	mu       sync.Mutex
	sessions map[string]*sessionState
}

// sessionState is what the store knows of a session between checkpoints.
type sessionState struct {
	mu   sync.Mutex
	tree string // the last checkpoint (git mode)
	seq  int    // its number, for its ref
	// touched are the files files-mode checkpoints kept since the last
	// "after", for the next one.
	touched []string
	last    map[string]string // files mode: each file's hash at its last checkpoint
	loaded  bool
}

// Open returns the store of workspace's checkpoints under data (the data
// folder); maxFile ≤ 0 is DefaultMaxFile. It makes nothing until the
// first checkpoint.
func Open(data, workspace string, maxFile int64) (*Store, error) {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return nil, err
	}
	if ws, err = filepath.EvalSymlinks(ws); err != nil {
		return nil, err
	}
	if maxFile <= 0 {
		maxFile = DefaultMaxFile
	}
	host, _ := os.Hostname()
	sum := sha256.Sum256([]byte(ws))
	s := &Store{ws: ws, git: inGitRepo(ws), dir: filepath.Join(data, "checkpoints"), host: host, maxFile: maxFile, sessions: map[string]*sessionState{}}
	s.gitDir = filepath.Join(s.dir, hex.EncodeToString(sum[:8])+".git")
	if store := worktreeOf(s.dir, ws); store != "" {
		s.gitDir = store // a fork's worktree: its session's checkpoints are there
	}
	if s.git {
		if _, err := exec.LookPath("git"); err != nil {
			s.git = false // files mode, which needs no git
		}
	}
	return s, nil
}

// Mode says how the store keeps the workspace: "git" or "files".
func (s *Store) Mode() string {
	if s.git {
		return "git"
	}
	return "files"
}

// Workspace is the folder the store keeps.
func (s *Store) Workspace() string { return s.ws }

// Where is the host and folder its checkpoints name (engine.Checkpointed's
// Where).
func (s *Store) Where() string { return s.host + ":" + s.ws }

// inGitRepo reports whether dir is in a git repository: a .git (folder or
// file) in it or a folder above. Nothing of the repository is read.
func inGitRepo(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// state returns the session's state, made on first use.
func (s *Store) state(session string) *sessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.sessions[session]
	if st == nil {
		st = &sessionState{}
		s.sessions[session] = st
	}
	return st
}

// Checkpoint implements engine.Checkpointer.
func (s *Store) Checkpoint(ctx context.Context, session, reason string, calls []engine.ToolCall) (*engine.Checkpointed, error) {
	if !validSession(session) {
		return nil, fmt.Errorf("session id %q cannot name a checkpoint", session)
	}
	st := s.state(session)
	st.mu.Lock()
	defer st.mu.Unlock()
	var cp *engine.Checkpointed
	var err error
	if s.git {
		cp, err = s.snapshotGit(ctx, session, st)
	} else {
		cp, err = s.snapshotFiles(session, st, reason, calls)
	}
	if err != nil {
		return nil, err
	}
	cp.Reason, cp.Where = reason, s.Where()
	return cp, nil
}

// validSession reports whether id can name a ref and a file: agentty's
// ids are lowercase letters and digits.
func validSession(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// indexOf is the session's private index.
func (s *Store) indexOf(session string) string {
	return filepath.Join(s.gitDir, "agentty-index", session)
}

// setRef makes refs/agentty/SESSION/N point at tree: a loose ref, written
// whole and renamed into place (what git update-ref does, less a process:
// the store's refs are never packed, as it never runs gc).
func (s *Store) setRef(session string, n int, tree string) error {
	p := filepath.Join(s.gitDir, "refs", "agentty", session, fmt.Sprintf("%08d", n))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".ref-*")
	if err != nil {
		return err
	}
	_, err = tmp.WriteString(tree + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// lastRef reads the session's last checkpoint from its refs: the tree and
// its number (zero for none).
func (s *Store) lastRef(session string) (string, int) {
	dir := filepath.Join(s.gitDir, "refs", "agentty", session)
	names, _ := os.ReadDir(dir)
	for i := len(names) - 1; i >= 0; i-- {
		var n int
		if _, err := fmt.Sscanf(names[i].Name(), "%d", &n); err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, names[i].Name())); err == nil {
			return strings.TrimSpace(string(b)), n
		}
	}
	return "", 0
}

// seedIndex gives a session with no index a copy of the newest index of
// the workspace's other sessions: their stat data holds, so its first
// checkpoint is a stat pass, not a read of every file.
func (s *Store) seedIndex(idx string) {
	if _, err := os.Stat(idx); err == nil {
		return
	}
	entries, _ := os.ReadDir(filepath.Dir(idx))
	var newest string
	var at int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && !strings.Contains(e.Name(), ".") && fi.ModTime().UnixNano() > at {
			newest, at = e.Name(), fi.ModTime().UnixNano()
		}
	}
	if newest == "" {
		return
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(idx), newest)); err == nil {
		os.WriteFile(idx, b, 0o600)
	}
}

// snapshotGit writes the working tree as a tree with the session's index:
// a stat pass when little changed, as the index is kept between
// checkpoints.
func (s *Store) snapshotGit(ctx context.Context, session string, st *sessionState) (*engine.Checkpointed, error) {
	if err := s.initGit(ctx); err != nil {
		return nil, err
	}
	idx := s.indexOf(session)
	if !st.loaded {
		st.tree, st.seq = s.lastRef(session)
		if st.tree == "" {
			s.seedIndex(idx)
		}
		st.loaded = true
	}
	cp := &engine.Checkpointed{Mode: "git"}
	_, err := os.Stat(idx)
	listed, err := s.addAll(ctx, idx, err != nil, cp)
	if err != nil {
		return nil, err
	}
	// The tree says whether anything changed, not add's words (which a
	// git in another language, or a file name with a newline, would
	// change).
	tree, err := s.line(ctx, idx, "write-tree")
	if err != nil {
		return nil, err
	}
	if tree != st.tree {
		if err := s.setRef(session, st.seq+1, tree); err != nil {
			return nil, err
		}
		if cp.Changed = listed; st.tree != "" && listed == nil { // add's list when it said its changes plainly; else git's own
			if cp.Changed, err = s.changed(ctx, st.tree, tree); err != nil {
				return nil, err
			}
		}
		if st.tree == "" {
			cp.Changed = nil
		}
		st.tree, st.seq = tree, st.seq+1
	}
	cp.Tree = tree
	return cp, nil
}

// addAll adds the working tree to the session's index and returns the
// files it changed there, as add -v lists them (nil when it listed none, or
// named one git quotes: the tree is what says). A file over the size limit
// is left out (said in cp.Skipped) and kept out of later checkpoints (the
// store's info/exclude); a session's first checkpoint looks for such files
// before adding, so that a large file already there is never read; later,
// a new one is read once, then left out.
func (s *Store) addAll(ctx context.Context, idx string, first bool, cp *engine.Checkpointed) ([]string, error) {
	if first {
		out, err := s.run(ctx, idx, nil, "ls-files", "-z", "-o", "-m", "--exclude-standard")
		if err != nil {
			return nil, err
		}
		if _, err := s.leaveOut(ctx, idx, strings.Split(string(out), "\x00"), false, cp); err != nil {
			return nil, err
		}
	}
	add := []string{"add", "-A", "-v", "--", "."}
	if first {
		// Every file is new to the index: write them into one pack, not
		// a file each (ten times faster on 10,000 files). Later
		// checkpoints add few, loose, rather than a pack a step.
		add = append([]string{"-c", "core.bigFileThreshold=1"}, add...)
	}
	out, special, err := s.add(ctx, idx, add)
	if err != nil {
		return nil, err
	}
	cp.Special = special
	var listed, added []string
	// When files were left out the index lost them: the tree says what changed.
	plain := len(special) == 0
	for _, l := range strings.Split(string(out), "\n") { // LC_ALL=C: "add 'PATH'", "remove 'PATH'"
		verb, p, ok := strings.Cut(l, " '")
		if !ok || !strings.HasSuffix(p, "'") || verb != "add" && verb != "remove" {
			continue
		}
		p = strings.TrimSuffix(p, "'")
		plain = plain && !strings.HasPrefix(p, `"`)
		listed = append(listed, p)
		if verb == "add" {
			added = append(added, p)
		}
	}
	big, err := s.leaveOut(ctx, idx, added, true, cp)
	if err != nil || !plain {
		return nil, err
	}
	listed = slices.DeleteFunc(listed, func(p string) bool { return slices.Contains(big, p) })
	slices.Sort(listed)
	return slices.Compact(listed), nil
}

// add runs git add (args) with the session's index idx. A file git
// cannot add (a FIFO, a socket or a device in the place of a file the
// index has: "can only add regular files") fails the whole add; such files
// are taken out of the index, so that add passes them by as it does any
// untracked one, and returned; then add runs again.
func (s *Store) add(ctx context.Context, idx string, args []string) ([]byte, []string, error) {
	out, err := s.run(ctx, idx, nil, args...)
	if err == nil {
		return out, nil, nil
	}
	special, lerr := s.specialFiles(ctx, idx)
	if lerr != nil || len(special) == 0 {
		return nil, nil, err // not that: add's own error
	}
	if _, err := s.run(ctx, idx, []byte(strings.Join(special, "\x00")+"\x00"), "update-index", "-z", "--force-remove", "--stdin"); err != nil {
		return nil, nil, fmt.Errorf("leave %s out of the checkpoint: %w", strings.Join(special, ", "), err)
	}
	out, err = s.run(ctx, idx, nil, args...)
	return out, special, err
}

// specialFiles are the files of the index idx that are, in the workspace,
// neither a regular file, a link nor a folder.
func (s *Store) specialFiles(ctx context.Context, idx string) ([]string, error) {
	out, err := s.run(ctx, idx, nil, "ls-files", "-z", "-m")
	if err != nil {
		return nil, err
	}
	var special []string
	for _, p := range strings.Split(string(out), "\x00") {
		fi, err := os.Lstat(filepath.Join(s.ws, p))
		if p != "" && err == nil && !fi.Mode().IsRegular() && !fi.IsDir() && fi.Mode()&os.ModeSymlink == 0 && !slices.Contains(special, p) {
			special = append(special, p)
		}
	}
	return special, nil
}

// leaveOut keeps the files of paths over the size limit out of the
// store's checkpoints: excluded from now on, and out of the index when they
// are in it (inIndex).
func (s *Store) leaveOut(ctx context.Context, idx string, paths []string, inIndex bool, cp *engine.Checkpointed) ([]string, error) {
	var big []string
	for _, p := range paths {
		if fi, err := os.Lstat(filepath.Join(s.ws, p)); p != "" && err == nil && fi.Mode().IsRegular() && fi.Size() > s.maxFile {
			big = append(big, p)
		}
	}
	if len(big) == 0 {
		return nil, nil
	}
	cp.Skipped = append(cp.Skipped, big...)
	f, err := os.OpenFile(filepath.Join(s.gitDir, "info", "exclude"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	for _, p := range big {
		fmt.Fprintln(f, "/"+globEscape.Replace(p))
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if !inIndex {
		return big, nil
	}
	_, err = s.run(ctx, idx, []byte(strings.Join(big, "\x00")+"\x00"), "update-index", "-z", "--force-remove", "--stdin")
	return big, err
}

// globEscape makes a path a gitignore pattern that matches it alone.
var globEscape = strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "!", `\!`, "#", `\#`, " ", `\ `)

// changed lists the files that differ between two trees.
func (s *Store) changed(ctx context.Context, from, to string) ([]string, error) {
	out, err := s.run(ctx, "", nil, "diff-tree", "-r", "-z", "--name-only", "--no-renames", from, to)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			files = append(files, p)
		}
	}
	return files, nil
}

// ErrNoCheckpoint is returned when a session has no checkpoint to use.
var ErrNoCheckpoint = errors.New("no checkpoint")
