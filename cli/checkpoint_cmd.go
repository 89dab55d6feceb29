package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/checkpoint"
	"github.com/agentty/agentty/console"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// The workspace's files in a session's history (package checkpoint):
// `sessions diff`, `sessions rewind` and `sessions fork --worktree`.

// checkpointsOf returns a session's checkpoints and the store that holds
// them: the data folder's, for the folder they were taken in, on this
// machine.
func checkpointsOf(opts *sessionsOptions, l *sessions.Loaded) (*checkpoint.Store, []checkpoint.Point, error) {
	points := checkpoint.Points(l.Events)
	if len(points) == 0 {
		return nil, nil, checkpoint.NoneKept(l.Meta.ID, checkpoint.Failures(l.Events))
	}
	host, dir, _ := strings.Cut(points[len(points)-1].Where, ":")
	if h, _ := os.Hostname(); host != h {
		return nil, nil, fmt.Errorf("the checkpoints of session %s were taken on %s, in %s: run this there", l.Meta.ID, host, dir)
	}
	if ws := l.Session.Settings().Workspace; ws != "" {
		dir = ws // a fork's worktree, before it took checkpoints of its own
	}
	home := opts.App.DataHome(opts.Getenv)
	if home == "" {
		return nil, nil, errors.New("there is no data folder (set AGENTTY_HOME or --data-dir)")
	}
	st, err := checkpoint.Open(home, dir, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("the session's workspace %s: %w", dir, err)
	}
	// The store keeps the files as they were; what it shows is without
	// the secrets a run there holds, as the journal is.
	redact, err := app.Redactor(*opts.App, dir, opts.Getenv)
	if err != nil {
		return nil, nil, err
	}
	st.RedactWith(redact.Redact)
	return st, points, nil
}

// loadCheckpoints is checkpointsOf the session the command names, with
// the checkpoints of it that failed.
func loadCheckpoints(opts *sessionsOptions, store *sessions.Store) (*checkpoint.Store, []checkpoint.Point, []checkpoint.Failure, error) {
	l, err := store.Load(opts.Args[0])
	if l == nil {
		return nil, nil, nil, err
	}
	st, points, err := checkpointsOf(opts, l)
	return st, points, checkpoint.Failures(l.Events), err
}

// sessionsDiff prints the unified diff of what a session changed in its
// workspace, or one step (--at), and on stderr what it cannot show: files
// left out, checkpoints that failed.
func sessionsDiff(opts *sessionsOptions, store *sessions.Store) error {
	st, points, fails, err := loadCheckpoints(opts, store)
	if err != nil {
		return err
	}
	toNow, err := st.DiffOf(context.Background(), opts.Out, points, opts.At)
	if toNow {
		fmt.Fprintln(opts.Err, "agentty sessions diff: the last step did not end; the diff is to the workspace as it is now")
	}
	for _, n := range st.LeftOut(points) {
		fmt.Fprintln(opts.Err, "agentty sessions diff: note:", st.Shown(n))
	}
	for _, f := range fails {
		fmt.Fprintf(opts.Err, "agentty sessions diff: note: the checkpoint of step %d failed (%s): its changes show with an earlier step's\n", f.Step, st.Shown(f.Message))
	}
	return err
}

// sessionsRewind restores the workspace's files as they were before a
// step's tools ran (--at), or as the last rewind found them (--undo). The
// workspace as it is is checkpointed first and journaled, so that the
// rewind can be undone; files changed since the session's last checkpoint
// are overwritten only when the person says so, and other sessions' work
// since only with --others. A session a console holds is the console's to
// rewind (rewindHeld).
func sessionsRewind(opts *sessionsOptions, store *sessions.Store) error {
	j, l, err := store.OpenWriter(opts.Args[0])
	if errors.Is(err, sessions.ErrLocked) {
		return rewindHeld(opts, err)
	}
	if err != nil {
		return err
	}
	defer j.Close()
	st, points, err := checkpointsOf(opts, l)
	if err != nil {
		return err
	}
	to, err := checkpoint.Undo(points)
	if !opts.Undo {
		if to, err = checkpoint.At(points, opts.At); err == nil {
			err = checkpoint.Gap(checkpoint.Failures(l.Events), opts.At, to)
		}
	}
	if err != nil {
		return err
	}
	ctx := context.Background()
	plan, err := rewindPlan(ctx, st, store, l.Meta.ID, points, to)
	if err != nil {
		return err
	}
	for _, n := range plan.Notes {
		fmt.Fprintln(opts.Err, "agentty sessions rewind: note:", st.Shown(n))
	}
	if plan.Empty() { // nothing to do, and nothing journaled: --undo still undoes the last rewind that did something
		fmt.Fprintf(opts.Out, "the files of %s are as they were already: nothing to rewind\n", st.Workspace())
		return nil
	}
	force, err := rewindConsent(ctx, opts, st, store, l.Meta.ID, points, plan)
	if err != nil {
		return err
	}
	// Write-ahead: the workspace as it is, journaled before it changes.
	if _, err := l.Session.Record(engine.KindCheckpoint, plan.Now, j); err != nil {
		return err
	}
	if err := st.ApplyOver(ctx, l.Meta.ID, plan, force, opts.Others); err != nil {
		return err
	}
	what := fmt.Sprintf("to before step %d", to.Step)
	if opts.Undo {
		what = "as the last rewind found them"
	}
	fmt.Fprintf(opts.Out, "rewound the files of %s %s: %d written, %d removed; agentty sessions rewind %s --undo takes it back\n",
		st.Workspace(), what, len(plan.Write), len(plan.Remove), l.Meta.ID)
	return nil
}

// rewindPlan is the plan of restoring to, with the other sessions' work
// it would take away (Plan.Others).
func rewindPlan(ctx context.Context, st *checkpoint.Store, store *sessions.Store, id string, points []checkpoint.Point, to checkpoint.State) (*checkpoint.Plan, error) {
	plan, err := st.Plan(ctx, id, points, to)
	if err != nil {
		return nil, err
	}
	plan.Theirs(id, console.OthersMade(store, id, st.Where(), to.Time))
	return plan, nil
}

// rewindConsent says whether the person lets the plan overwrite files
// changed since the session's last checkpoint (--yes, or asked on a
// terminal), and refuses other sessions' work without --others, naming
// the files. Asked, the plan must still be what the workspace holds.
func rewindConsent(ctx context.Context, opts *sessionsOptions, st *checkpoint.Store, store *sessions.Store, id string, points []checkpoint.Point, plan *checkpoint.Plan) (bool, error) {
	if len(plan.Others) > 0 && !opts.Others {
		fmt.Fprintf(opts.Err, "agentty sessions rewind: %s\n", st.Shown((&checkpoint.OthersError{Files: plan.Others}).Error()))
		fmt.Fprintln(opts.Err, "agentty sessions rewind: nothing was changed (--others takes their work back too)")
		return false, exit(1)
	}
	force := opts.Yes
	if len(plan.HandChanged) == 0 || force {
		return force, nil
	}
	fmt.Fprintf(opts.Err, "agentty sessions rewind: changed since the session's last checkpoint (by hand, or by a step that did not end): %s\n", st.Shown(strings.Join(plan.HandChanged, ", ")))
	if !askYes(opts, "overwrite them? [y/N] ") {
		fmt.Fprintln(opts.Err, "agentty sessions rewind: nothing was changed (--yes overwrites them)")
		return false, exit(1)
	}
	// The files may have changed while the question waited: what is
	// applied is what was shown, or nothing.
	again, err := rewindPlan(ctx, st, store, id, points, plan.To)
	if err != nil {
		return false, err
	}
	if !checkpoint.SamePlan(plan, again) || len(again.Others) > len(plan.Others) {
		return false, errors.New("the files changed while you were asked: nothing was changed; rewind again to see them")
	}
	return true, nil
}

// rewindHeld is the rewind of a session another agentty holds: nothing is
// changed behind it (its next checkpoint and its own rewinds count from
// what it last saw), and the error says where to do it. There is no
// channel from the command line to a console on the same machine.
func rewindHeld(opts *sessionsOptions, locked error) error {
	what := "/rewind STEP"
	if opts.Undo {
		what = "/rewind undo"
	}
	return fmt.Errorf("%w; nothing was changed: if a console holds it, type %s there", locked, what)
}

// askYes asks question on the terminal, when stdin is one.
func askYes(opts *sessionsOptions, question string) bool {
	f, ok := opts.In.(*os.File)
	if !ok {
		return false
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	fmt.Fprint(opts.Err, question)
	line, _ := bufio.NewReader(f).ReadString('\n')
	return strings.EqualFold(strings.TrimSpace(line), "y")
}

// forkWorktree gives the fork id a git worktree, at --worktree, of the
// workspace as it was after the step it was forked at, and makes that
// folder the fork's workspace.
func forkWorktree(opts *sessionsOptions, store *sessions.Store, id string) error {
	st, points, _, err := loadCheckpoints(opts, store)
	if err != nil {
		return err
	}
	at, err := checkpoint.After(points, opts.At)
	if err != nil {
		return err
	}
	if err := st.Worktree(context.Background(), opts.Worktree, at); err != nil {
		return err
	}
	dir, _ := filepath.Abs(opts.Worktree)
	j, fl, err := store.OpenWriter(id)
	if err != nil {
		return err
	}
	defer j.Close()
	set := fl.Session.Settings()
	set.Workspace = dir
	if _, err := fl.Session.SaveSettings(set, j); err != nil {
		return err
	}
	fmt.Fprintf(opts.Err, "the fork's files are in %s (a git worktree); cd there and: agentty --resume %s\n", dir, id)
	return nil
}

// checkpointSink says on stderr, in a headless run without --json, what a
// checkpoint left out and a checkpoint that failed: the journal has them,
// and so must the person watching the terminal.
func checkpointSink(stderr io.Writer, shown func(string) string) engine.Sink {
	return engine.SinkFunc(func(ev engine.Event) error {
		switch d := ev.Data.(type) {
		case *engine.Notice:
			if d.About == engine.NoticeCheckpoint {
				fmt.Fprintf(stderr, "agentty run: warning: step %d: %s\n", ev.Step, shown(d.Message))
			}
		case *engine.Checkpointed:
			for _, n := range checkpoint.Notes(d, 0) {
				fmt.Fprintf(stderr, "agentty run: note: step %d: %s\n", ev.Step, shown(n))
			}
		}
		return nil
	})
}
