package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/aymanbagabas/go-udiff"

	"github.com/agentty/agentty/engine"
)

// The diff of a session, or of one of its steps.

// Diff writes the unified diff from one state to another (to with no
// commit and no files: the workspace as it is, git mode), without the
// secrets RedactWith names.
func (s *Store) Diff(ctx context.Context, w io.Writer, from, to State) error {
	if from.Tree != "" {
		args := []string{"diff", "--no-ext-diff", "--no-textconv", "--no-color", "--no-renames", from.Tree}
		idx := ""
		if to.Tree != "" {
			args = append(args, to.Tree)
		} else { // the working tree, through a scratch index
			idx = filepath.Join(s.gitDir, "agentty-index", "diff."+fmt.Sprint(os.Getpid())) // a dot: no session's index seeds from it
			defer os.Remove(idx)
			if _, err := s.run(ctx, idx, nil, "add", "-A", "--", "."); err != nil {
				return err
			}
			args = append(args[:len(args)-1], "--cached", from.Tree)
		}
		out, err := s.run(ctx, idx, nil, args...)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, s.Shown(string(out)))
		return err
	}
	return s.diffFiles(w, from, to)
}

// diffFiles is Diff in files mode.
func (s *Store) diffFiles(w io.Writer, from, to State) error {
	for _, path := range slices.Sorted(mapKeys(from.Files)) {
		a, b := from.Files[path], to.Files[path]
		if a.Hash == b.Hash && a.Missing == b.Missing {
			continue
		}
		old, err := s.text(a)
		if err != nil {
			return err
		}
		cur, err := s.text(b)
		if err != nil {
			return err
		}
		fromName, toName := "a/"+path, "b/"+path
		if a.Missing {
			fromName = "/dev/null"
		}
		if b.Missing {
			toName = "/dev/null"
		}
		if _, err := io.WriteString(w, s.Shown(udiff.Unified(fromName, toName, old, cur))); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) text(f engine.CheckpointFile) (string, error) {
	if f.Missing || f.Hash == "" {
		return "", nil
	}
	b, err := s.object(f.Hash)
	return string(b), err
}

// Step returns the states around one step: before its tools ran and after
// (the next checkpoint; ok false for "now", when there is none).
func Step(points []Point, step int) (before, after State, ok bool, err error) {
	for i, p := range points {
		if p.Reason != engine.CheckpointBefore || p.Step != step {
			continue
		}
		if i+1 < len(points) {
			return stateOf(p), stateOf(points[i+1]), true, nil
		}
		return stateOf(p), State{}, false, nil
	}
	return State{}, State{}, false, fmt.Errorf("%w: step %d changed nothing in the workspace", ErrNoCheckpoint, step)
}

// Session returns the states around the whole session: before its first
// checkpoint and as it last left the workspace (ok false for "now", when
// its last step did not end).
func Session(points []Point) (before, after State, ok bool, err error) {
	if before, err = At(points, 0); err != nil {
		return State{}, State{}, false, fmt.Errorf("%w: no step of the session changed the workspace", ErrNoCheckpoint)
	}
	after, _ = last(points)
	return before, after, points[len(points)-1].Reason != engine.CheckpointBefore, nil
}

// Now is the workspace as it is, for the files of st (files mode; in git
// mode the empty State, which Diff reads as the working tree).
func (s *Store) Now(st State) (State, error) {
	if s.git {
		return State{}, nil
	}
	root, err := os.OpenRoot(s.ws)
	if err != nil {
		return State{}, err
	}
	defer root.Close()
	now := State{Files: map[string]engine.CheckpointFile{}}
	for path := range st.Files {
		f, err := s.keepFile(root, path)
		if errors.Is(err, errNotRegular) { // no file there to show
			f, err = engine.CheckpointFile{Path: path, Missing: true}, nil
		}
		if err != nil {
			return State{}, fmt.Errorf("%s: %w", path, err)
		}
		now.Files[path] = f
	}
	return now, nil
}

// Fill gives to, a files-mode state, the files of from it lacks, as they
// are now.
func (s *Store) Fill(from, to State) (State, error) {
	if s.git || to.Tree != "" {
		return to, nil
	}
	now, err := s.Now(from)
	if err != nil {
		return State{}, err
	}
	for path, f := range to.Files {
		now.Files[path] = f
	}
	return now, nil
}

// DiffOf writes the diff of what a session changed (step < 0) or one step
// did; toNow says it ends at the workspace as it is, as the last step did
// not end (or the step was the last to change anything and nothing came
// after it).
func (s *Store) DiffOf(ctx context.Context, w io.Writer, points []Point, step int) (toNow bool, err error) {
	var from, to State
	var ended bool
	if step >= 0 {
		from, to, ended, err = Step(points, step)
	} else {
		from, to, ended, err = Session(points)
	}
	if err != nil {
		return false, err
	}
	if !ended {
		to = State{}
	}
	if to, err = s.Fill(from, to); err != nil {
		return false, err
	}
	return !ended, s.Diff(ctx, w, from, to)
}
