package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentty/agentty/checkpoint"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/ui"
)

// The console's /diff and /rewind (ui.Rewinder): the session's
// checkpoints, read from its journal, in the store of the console's
// workspace.

// checkpoints returns the session's checkpoints and the store of the
// console's workspace, which must be where they were taken, with the
// checkpoints of it that failed.
func (b *backend) checkpoints() (*checkpoint.Store, []checkpoint.Point, []checkpoint.Failure, error) {
	st := b.con.Setup.Checkpoints
	if st == nil {
		return nil, nil, nil, errors.New("checkpoints are off here (there is no data folder)")
	}
	if err := b.journal.Flush(); err != nil {
		return nil, nil, nil, err
	}
	l, err := b.con.Store.Load(b.journal.ID)
	if l == nil {
		return nil, nil, nil, err
	}
	points, fails := checkpoint.Points(l.Events), checkpoint.Failures(l.Events)
	if len(points) == 0 && len(fails) > 0 {
		return nil, nil, nil, checkpoint.NoneKept(b.journal.ID, fails)
	}
	if len(points) == 0 {
		return nil, nil, nil, errors.New("no step of this session changed the files yet: there is nothing to show or rewind")
	}
	host, dir, _ := strings.Cut(points[len(points)-1].Where, ":")
	if ws := b.session.Settings().Workspace; ws != "" {
		dir = ws // a fork's worktree, before it took checkpoints of its own
	}
	h, _ := os.Hostname()
	if abs, _ := filepath.EvalSymlinks(dir); host != h || abs != st.Workspace() {
		return nil, nil, nil, fmt.Errorf("this session's checkpoints are of %s on %s, not of this console's folder %s", dir, host, st.Workspace())
	}
	return st, points, fails, nil
}

// DiffFiles implements ui.Rewinder: the diff, after what it cannot show
// (files left out, checkpoints that failed).
func (b *backend) DiffFiles(ctx context.Context, step int) (string, error) {
	st, points, fails, err := b.checkpoints()
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	for _, n := range st.LeftOut(points) {
		fmt.Fprintf(&out, "Note: %s\n", st.Shown(n))
	}
	for _, f := range fails {
		fmt.Fprintf(&out, "Note: the checkpoint of step %d failed (%s): its changes show with an earlier step's\n", f.Step, st.Shown(f.Message))
	}
	_, err = st.DiffOf(ctx, &out, points, step)
	return out.String(), err
}

// PlanRewind implements ui.Rewinder: the plan, with the diff from the
// workspace as it is to the checkpoint.
func (b *backend) PlanRewind(ctx context.Context, step int) (*ui.RewindPlan, error) {
	st, points, fails, err := b.checkpoints()
	if err != nil {
		return nil, err
	}
	to, err := checkpoint.At(points, step)
	if err == nil {
		err = checkpoint.Gap(fails, step, to)
	}
	if err != nil {
		return nil, err
	}
	return b.plan(ctx, st, points, to)
}

// PlanUndo implements ui.Rewinder: the plan that restores the workspace
// as the session's last rewind found it.
func (b *backend) PlanUndo(ctx context.Context) (*ui.RewindPlan, error) {
	st, points, _, err := b.checkpoints()
	if err != nil {
		return nil, err
	}
	to, err := checkpoint.Undo(points)
	if err != nil {
		return nil, err
	}
	p, err := b.plan(ctx, st, points, to)
	if p != nil {
		p.Undo = true
	}
	return p, err
}

// plan is what restoring to does, as the console shows it: the files, the
// other sessions' work among them, and the diff.
func (b *backend) plan(ctx context.Context, st *checkpoint.Store, points []checkpoint.Point, to checkpoint.State) (*ui.RewindPlan, error) {
	plan, err := st.Plan(ctx, b.journal.ID, points, to)
	if err != nil {
		return nil, err
	}
	plan.Theirs(b.journal.ID, OthersMade(b.con.Store, b.journal.ID, st.Where(), to.Time))
	now := checkpoint.State{Tree: plan.Now.Tree, Files: map[string]engine.CheckpointFile{}}
	for _, f := range plan.Now.Files {
		now.Files[f.Path] = f
	}
	var diff bytes.Buffer
	if err := st.Diff(ctx, &diff, now, to); err != nil {
		return nil, err
	}
	shown := func(list []string) []string { // what is shown; plan, applied, keeps the names
		out := make([]string, len(list))
		for i, s := range list {
			out[i] = st.Shown(s)
		}
		return out
	}
	others := make([]string, len(plan.Others))
	for i, c := range plan.Others {
		others[i] = st.Shown(c.String())
	}
	return &ui.RewindPlan{Step: to.Step, Diff: diff.String(), Write: shown(plan.Write), Remove: shown(plan.Remove), HandChanged: shown(plan.HandChanged),
		Others: others, Notes: shown(plan.Notes), Backend: plan}, nil
}

// RewindFiles implements ui.Rewinder: the workspace as it is is journaled
// first (the rewind's undo), then the files are restored.
func (b *backend) RewindFiles(ctx context.Context, p *ui.RewindPlan, force, others bool) (string, error) {
	plan, ok := p.Backend.(*checkpoint.Plan)
	st := b.con.Setup.Checkpoints
	if !ok || st == nil {
		return "", errors.New("not a plan of this session")
	}
	if plan.Empty() { // nothing journaled: an undo still undoes the last rewind that did something
		if p.Undo {
			return "The files are as the last rewind found them already: nothing to take back.", nil
		}
		return fmt.Sprintf("The files are as they were before step %d already: nothing to rewind.", p.Step), nil
	}
	// What is applied is what was shown: files changed since the plan was
	// shown would be overwritten, and not be in the rewind's undo.
	_, points, _, err := b.checkpoints()
	if err != nil {
		return "", err
	}
	again, err := st.Plan(ctx, b.journal.ID, points, plan.To)
	if err != nil {
		return "", err
	}
	if !checkpoint.SamePlan(plan, again) {
		return "", errors.New("the files changed since the rewind was shown: nothing was changed; /rewind again to see them")
	}
	if len(plan.Others) > 0 && !others { // refused before anything is journaled
		return "", errors.New(st.Shown((&checkpoint.OthersError{Files: plan.Others}).Error()))
	}
	if len(plan.HandChanged) > 0 && !force {
		return "", errors.New(st.Shown((&checkpoint.HandChangedError{Files: plan.HandChanged}).Error()))
	}
	if _, err := b.session.Record(engine.KindCheckpoint, plan.Now, b.sink); err != nil {
		return "", err
	}
	if err := st.ApplyOver(ctx, b.journal.ID, plan, force, others); err != nil {
		return "", err
	}
	if p.Undo {
		return fmt.Sprintf("Took the last rewind back: %d written, %d removed (/rewind undo again rewinds them once more).", len(plan.Write), len(plan.Remove)), nil
	}
	return fmt.Sprintf("Rewound the files to before step %d: %d written, %d removed (/rewind undo takes it back).",
		p.Step, len(plan.Write), len(plan.Remove)), nil
}
