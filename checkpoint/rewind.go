package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// Point is a checkpoint in a session's journal, at its step.
type Point struct {
	Step int
	Time time.Time // when it was journaled
	*engine.Checkpointed
}

// Points reads a session's checkpoints from its events, in order.
func Points(events []engine.Event) []Point {
	var out []Point
	for _, ev := range events {
		if c, ok := ev.Data.(*engine.Checkpointed); ok {
			out = append(out, Point{Step: ev.Step, Time: ev.Time, Checkpointed: c})
		}
	}
	return out
}

// State is a workspace as a checkpoint holds it: a tree (git mode) or
// files (files mode, each as it was or missing).
type State struct {
	Tree  string
	Files map[string]engine.CheckpointFile
	Step  int       // the step it is the workspace before (0: not a step's)
	Time  time.Time // when it was kept (the earliest of its checkpoints)
}

// At is the state of the workspace before step at's tools ran: the first
// checkpoint of a step ≥ at. In files mode it is each file's state at the
// first checkpoint from at on that kept it.
func At(points []Point, at int) (State, error) {
	st := State{Files: map[string]engine.CheckpointFile{}, Step: at}
	for _, p := range points {
		if p.Reason != engine.CheckpointBefore || p.Step < at {
			continue
		}
		if p.Mode == "git" {
			return State{Tree: p.Tree, Step: p.Step, Time: p.Time}, nil
		}
		if st.Time.IsZero() {
			st.Time = p.Time
		}
		for _, f := range p.Files {
			if _, ok := st.Files[f.Path]; !ok {
				st.Files[f.Path] = f
			}
		}
	}
	if len(st.Files) == 0 {
		for _, p := range points {
			if p.Step >= at && p.Note != "" {
				return State{}, fmt.Errorf("%w: the steps from %d on changed files only through the shell, whose effects are not kept outside a git repository", ErrNoCheckpoint, at)
			}
		}
		return State{}, fmt.Errorf("%w: no step from %d on changed the workspace", ErrNoCheckpoint, at)
	}
	return st, nil
}

// Undo is the state the session's last rewind left behind (its "before").
func Undo(points []Point) (State, error) {
	for i := len(points) - 1; i >= 0; i-- {
		if p := points[i]; p.Reason == engine.CheckpointRewind {
			return stateOf(p), nil
		}
	}
	return State{}, fmt.Errorf("%w: the session was never rewound", ErrNoCheckpoint)
}

// stateOf is the state a checkpoint holds.
func stateOf(p Point) State {
	st := State{Tree: p.Tree, Files: map[string]engine.CheckpointFile{}, Time: p.Time}
	for _, f := range p.Files {
		st.Files[f.Path] = f
	}
	return st
}

// last is what the session last left the workspace as: its last
// checkpoint, or what its last rewind restored.
func last(points []Point) (State, bool) {
	if len(points) == 0 {
		return State{}, false
	}
	p := points[len(points)-1]
	if p.Reason == engine.CheckpointRewind && p.RewoundTo != "" {
		return State{Tree: p.RewoundTo}, true
	}
	st := State{Tree: p.Tree, Files: map[string]engine.CheckpointFile{}}
	for _, q := range points { // files mode: each file's latest, as a rewind left it
		for _, f := range q.Files {
			st.Files[f.Path] = f
		}
		for _, f := range q.Restored {
			st.Files[f.Path] = f
		}
	}
	return st, true
}

// Plan is what restoring a state does to the workspace.
type Plan struct {
	// Notes say what it cannot restore (a shell command's effects
	// outside git).
	Notes         []string
	To            State
	Write, Remove []string
	// HandChanged are files that differ from what the session last left
	// (its last checkpoint): changed by someone else since, or by a step
	// that did not end. A rewind overwrites them only when told to.
	HandChanged []string
	// Others are the files it writes or removes that other sessions'
	// steps changed after To was kept (Theirs): it takes their work back
	// only when told to (ApplyOver).
	Others []Change
	// Now is the checkpoint of the workspace as it is: journaled as the
	// rewind's, it is what undoes it.
	Now *engine.Checkpointed
}

// Plan says what restoring to would change, having kept the workspace as
// it is (Plan.Now).
func (s *Store) Plan(ctx context.Context, session string, points []Point, to State) (*Plan, error) {
	st := s.state(session)
	st.mu.Lock()
	defer st.mu.Unlock()
	p := &Plan{To: to, Notes: s.LeftOut(points)}
	if s.git {
		return p, s.planGit(ctx, session, st, points, p)
	}
	for _, q := range points {
		if q.Reason == engine.CheckpointBefore && q.Step >= to.Step && q.Note != "" {
			p.Notes = append(p.Notes, fmt.Sprintf("step %d ran a shell command: %s, so it is not undone", q.Step, q.Note))
		}
	}
	return p, s.planFiles(points, p)
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool { return len(p.Write) == 0 && len(p.Remove) == 0 }

func (s *Store) planGit(ctx context.Context, session string, st *sessionState, points []Point, p *Plan) error {
	if p.To.Tree == "" {
		return fmt.Errorf("%w: the checkpoint is not of a git repository's workspace", ErrNoCheckpoint)
	}
	now, err := s.snapshotGit(ctx, session, st)
	if err != nil {
		return err
	}
	now.Reason, now.Where, now.RewoundTo = engine.CheckpointRewind, s.Where(), p.To.Tree
	p.Now = now
	if ref, ok := last(points); ok && ref.Tree != "" {
		if p.HandChanged, err = s.changed(ctx, ref.Tree, now.Tree); err != nil {
			return err
		}
	}
	out, err := s.run(ctx, "", nil, "diff-tree", "-r", "-z", "--raw", "--no-renames", now.Tree, p.To.Tree)
	if err != nil {
		return err
	}
	// ":OLDMODE NEWMODE OLD NEW STATUS\0PATH\0" each.
	f := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		meta, path := strings.Fields(strings.TrimPrefix(f[i], ":")), f[i+1]
		if len(meta) < 5 {
			continue
		}
		switch {
		case meta[0] == "160000" || meta[1] == "160000": // a repository inside: its files are not kept
			p.Notes = append(p.Notes, path+" is a git repository of its own: checkpoints do not keep its files, so it is left as it is")
		case meta[4] == "D": // in the workspace now, not in the checkpoint
			p.Remove = append(p.Remove, path)
		default:
			p.Write = append(p.Write, path)
		}
	}
	return nil
}

func (s *Store) planFiles(points []Point, p *Plan) error {
	root, err := os.OpenRoot(s.ws)
	if err != nil {
		return err
	}
	defer root.Close()
	ref, _ := last(points)
	now := &engine.Checkpointed{Mode: "files", Reason: engine.CheckpointRewind, Where: s.Where()}
	for _, path := range slices.Sorted(mapKeys(p.To.Files)) {
		cur, err := s.keepFile(root, path)
		if errors.Is(err, errNotRegular) { // a FIFO in its place: never opened, never written through
			p.Notes = append(p.Notes, path+" is not a regular file now (a FIFO, a socket or a device): the rewind leaves it as it is")
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		now.Files = append(now.Files, cur)
		if r, ok := ref.Files[path]; ok && (r.Hash != cur.Hash || r.Missing != cur.Missing) {
			p.HandChanged = append(p.HandChanged, path)
		}
		want := p.To.Files[path]
		switch {
		case want.Missing && !cur.Missing:
			p.Remove = append(p.Remove, path)
		case !want.Missing && (cur.Hash != want.Hash || cur.Mode != want.Mode):
			p.Write = append(p.Write, path)
		default:
			continue
		}
		now.Restored = append(now.Restored, want)
	}
	p.Now = now
	return nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Apply restores the workspace as p says. It refuses when files were
// changed by hand and force is not set (HandChangedError), and when other
// sessions' files would be removed or overwritten (OthersError: see
// ApplyOver).
func (s *Store) Apply(ctx context.Context, session string, p *Plan, force bool) error {
	return s.ApplyOver(ctx, session, p, force, false)
}

// ApplyOver is Apply, over other sessions' files too when others is set.
func (s *Store) ApplyOver(ctx context.Context, session string, p *Plan, force, others bool) error {
	if len(p.Others) > 0 && !others {
		return &OthersError{Files: p.Others}
	}
	if len(p.HandChanged) > 0 && !force {
		return &HandChangedError{Files: p.HandChanged}
	}
	st := s.state(session)
	st.mu.Lock()
	defer st.mu.Unlock()
	// Removals first: a folder that became a link or a file (a path the
	// rewind removes) must be gone before the files under it are written
	// back, and a file that became a folder empty before it is.
	if err := s.removeFiles(p); err != nil {
		return err
	}
	if s.git && p.To.Tree != "" {
		if err := s.checkoutGit(ctx, session, p); err != nil {
			return err
		}
		st.tree = p.To.Tree // what the next checkpoint's changes are counted from
		return nil
	}
	return s.writeFiles(p)
}

// removeFiles removes the files p removes, and the folders left empty by
// it (git keeps no folders: the checkpoint had none there).
func (s *Store) removeFiles(p *Plan) error {
	root, err := os.OpenRoot(s.ws)
	if err != nil {
		return fmt.Errorf("rewind: open the workspace %s: %w", s.ws, err)
	}
	defer root.Close()
	for _, path := range p.Remove {
		if err := root.Remove(filepath.FromSlash(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rewind: remove %s: %w", path, err)
		}
		for d := filepath.Dir(filepath.FromSlash(path)); d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
			if root.Remove(d) != nil {
				break // not empty, or not there
			}
		}
	}
	return nil
}

// checkoutGit writes p's files from its commit, with their modes, through
// a scratch index.
func (s *Store) checkoutGit(ctx context.Context, session string, p *Plan) error {
	if len(p.Write) == 0 {
		return nil
	}
	idx := s.indexOf(session) + ".rewind"
	defer os.Remove(idx)
	if _, err := s.run(ctx, idx, nil, "read-tree", p.To.Tree); err != nil {
		return err
	}
	list := strings.Join(p.Write, "\x00") + "\x00"
	_, err := s.run(ctx, idx, []byte(list), "checkout-index", "-f", "-z", "--stdin")
	return err
}

// writeFiles writes p's files from the store (files mode).
func (s *Store) writeFiles(p *Plan) error {
	root, err := os.OpenRoot(s.ws)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, path := range p.Write {
		f := p.To.Files[path]
		data, err := s.object(f.Hash)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rel := filepath.FromSlash(path)
		if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
			return err
		}
		if err := root.WriteFile(rel, data, fs.FileMode(f.Mode)); err != nil {
			return err
		}
		if err := root.Chmod(rel, fs.FileMode(f.Mode)); err != nil {
			return err
		}
	}
	return nil
}

// HandChangedError names the files a rewind would overwrite that were
// changed since the session's last checkpoint.
type HandChangedError struct{ Files []string }

func (e *HandChangedError) Error() string {
	return fmt.Sprintf("%d %s changed since the session's last checkpoint (by hand, or by a step that did not end): %s",
		len(e.Files), engine.Plural(len(e.Files), "file"), strings.Join(e.Files, ", "))
}

// Worktree makes dir a git worktree of the store at state's commit, for a
// fork of the session to work in with its own files (git mode).
func (s *Store) Worktree(ctx context.Context, dir string, st State) error {
	if !s.git || st.Tree == "" {
		return errors.New("a fork gets a worktree only in a git repository's workspace (this one keeps files, not the tree)")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	commit, err := s.line(ctx, "", "commit-tree", st.Tree, "-m", "agentty: a fork's files")
	if err != nil {
		return err
	}
	_, err = s.run(ctx, "", nil, "worktree", "add", "--detach", abs, commit)
	return err
}

// After is the workspace as it was after step's tools ran: as before the
// next step that changed it, else as the session last left it.
func After(points []Point, step int) (State, error) {
	if st, err := At(points, step+1); err == nil {
		return st, nil
	}
	if st, ok := last(points); ok {
		return st, nil
	}
	return State{}, fmt.Errorf("%w: the session has none", ErrNoCheckpoint)
}

// SamePlan reports whether two plans of one rewind found the workspace the
// same (so that what was shown is what is applied).
func SamePlan(a, b *Plan) bool {
	if a.Now == nil || b.Now == nil || a.Now.Tree != b.Now.Tree || len(a.Now.Files) != len(b.Now.Files) {
		return false
	}
	for i, f := range a.Now.Files {
		if g := b.Now.Files[i]; f.Path != g.Path || f.Hash != g.Hash || f.Missing != g.Missing {
			return false
		}
	}
	return true
}
