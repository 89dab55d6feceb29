package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Delegation at run time: a sub-run for a call of delegate (or an agent's
// own tool), in the tree of runs that share the top-level run's sink, and
// a handoff (transfer).

// tree is what a top-level run shares with its sub-runs: they emit to one
// sink and apply to one session, one event at a time.
type tree struct {
	mu   sync.Mutex
	root *Session
	sink Sink
	// err is the first error of the sink (or of applying an event): no
	// run of the tree emits past it.
	err error
	// cancel ends the top-level run's context: an abort at the gate in a
	// sub-run ends the whole tree.
	cancel context.CancelCauseFunc
}

// errAborted ends a run the person aborted at the gate.
var errAborted = errors.New("aborted at the gate")

// treeContext gives a top-level run with sub-runs a context they can
// cancel (tree.cancel): one of its own when the engine has agents.
func (e *Engine) treeContext(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	if e.agents == nil {
		return ctx, func(error) {}
	}
	return context.WithCancelCause(ctx)
}

// noteMissingAgent tells, with a notice, of a run whose session's agent
// (or Config.Agent) is not defined any more: it runs with the engine's own
// settings.
func (r *run) noteMissingAgent() error {
	want := cmp.Or(r.s.Agent, r.e.cfg.Agent)
	if want == "" || want == r.prof.agent {
		return nil
	}
	return r.emit("", KindNotice, &Notice{Level: "warning", Message: fmt.Sprintf("the agent %q of this session is not defined any more; running with the default settings", want)})
}

// delegate runs the sub-run an agent call asks for, on the call's own
// goroutine, and returns the agent's answer as the call's result. A sub-run
// that an earlier process started is continued, or, if it finished, its
// recorded answer is the result: nothing it did runs twice.
func (r *run) delegate(ctx context.Context, c *Call) (string, error) {
	defer r.children.Done()
	growStack(0) // a sub-run runs on a fresh goroutine
	var args struct {
		Agent string `json:"agent"`
		Task  string `json:"task"`
	}
	if err := c.Bind(&args); err != nil {
		return "", err
	}
	a := r.e.agents.byName[args.Agent]
	if a == nil || a.Handoff {
		return "", fmt.Errorf("there is no agent %q to delegate to", args.Agent)
	}
	if a.Name == r.prof.agent {
		return "", fmt.Errorf("the agent %s does not delegate to itself: do the task here", a.Name)
	}
	// The parent's turn, not its step: step numbers are the session's and
	// parallel sub-runs take them in any order, a run's turns are its own.
	id := r.id + "/" + strconv.Itoa(c.turn) + "/" + c.ID
	res := r.subRun(ctx, id, c.ID, a.Name, args.Task, c.Step, false)
	switch res.StopReason {
	case StopAnswered:
		return res.Answer, nil
	case StopStepLimit:
		return "", fmt.Errorf("agent %s stopped at its step limit without an answer", a.Name)
	case StopCancelled:
		return "", fmt.Errorf("agent %s was cancelled", a.Name)
	}
	if res.Err == nil {
		res.Err = errors.New(string(res.StopReason))
	}
	return "", fmt.Errorf("agent %s failed: %v", a.Name, res.Err)
}

// subRun carries out the sub-run id of r, for its call (a tool call's id,
// or a guardrail's: guardCall), as agent on task, from the session's step
// step. A sub-run that an earlier process started is continued, or, if it
// finished, its recorded end is the result: nothing it did runs twice. A
// judge (a guardrail's agent) is offered neither agent nor transfer_to.
func (r *run) subRun(ctx context.Context, id, call, agent, task string, step int, judge bool) Result {
	child := &run{e: r.e, sink: r.tree.sink, tree: r.tree, root: r.root, id: id, step: step, compactedTurn: -1,
		instructions: r.instructions, instT: r.instT,
		depth: r.depth + 1, parent: r.id, parentCall: call, parentBase: r.prof.base}
	child.req.delta = child.onDelta
	child.delegateFn = child.delegate
	r.tree.mu.Lock()
	sub := r.root.subs[id]
	if sub != nil {
		child.ownUsage = sub.run.spent // a continued sub-run's budget counts what it spent before
	}
	r.tree.mu.Unlock()
	if sub != nil && sub.run.Finished {
		res := Result{StopReason: sub.run.Stop, Answer: sub.run.Answer, Steps: sub.run.Turn}
		if sub.run.Error != "" {
			res.Err = errors.New(sub.run.Error)
		}
		return res
	}
	if sub != nil {
		agent = cmp.Or(sub.Agent, agent)
	}
	child.prof = r.e.profile(agent, child.parentBase, child.depth)
	if judge {
		child.prof.tools = child.prof.base
	}
	if sub != nil {
		child.s = sub
		child.step = sub.run.Step
		return child.resume(ctx)
	}
	return child.start(ctx, task)
}

// transfer answers a transfer_to_NAME call: the first of a decision hands
// the run off when the step ends (switchAgent), any other is refused.
func (r *run) transfer(i int, c ToolCall) error {
	to := strings.TrimPrefix(c.Name, TransferPrefix)
	now := r.now()
	if err := r.emitAt(now, Act, KindToolStarted, &ToolStarted{Index: i, ID: c.ID, Name: c.Name, Args: r.journaledArgs(c.Args)}); err != nil {
		return err
	}
	fin := &ToolFinished{Index: i, ID: c.ID, Name: c.Name, Status: ToolOK, Attempts: 1,
		Result: transferredTo + to + ": it carries on from here."}
	if r.handoff != "" {
		fin.Status, fin.Result = ToolError, "error: this reply already handed off to "+r.handoff
	}
	if err := r.emitAt(now, Act, KindToolFinished, fin); err != nil || fin.Status != ToolOK {
		return err
	}
	r.handoff, r.handoffCall = to, c.ID
	return nil
}

// transferredTo begins the result of a transfer_to call that handed off.
const transferredTo = "Transferred to "
