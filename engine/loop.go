package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// run is the state of one run; it is owned by the run's goroutine, one at a
// time: a takeover (watch.go) hands it to a new one.
type run struct {
	e    *Engine
	s    *Session
	sink Sink
	id   string
	step int
	cut  int // first history message in the last request
	// rerun marks interrupted calls whose re-run needs approval;
	// secretArgs are the calls a continued run cannot run (redact.go).
	rerun      map[string]bool
	secretArgs []string
	// request is the queued request a new run carries out (RunRequest).
	request string
	// lastAt is the time of the run's last event: a step's end takes it
	// when nothing waited after it (the clock is read once less a step),
	// and with no sink a step's start and its first tool's too (stamp).
	lastAt time.Time
	// clock is the last full reading of the clock; now derives later
	// times from it with the monotonic clock alone, which costs half.
	clock time.Time
	// timer serves the act phase's deadlines; it is made when first
	// needed and reused across steps. It is armed for timerAt (zero: not
	// armed) and left armed while that is no later than what the run
	// waits for: a step that ends before it is not paid for by resetting
	// and stopping it.
	timer   *time.Timer
	timerAt time.Time
	// wake is signalled by the timer and by the run's context being
	// cancelled (stopCtx undoes the latter); see startAlarms.
	wake    chan struct{}
	stopCtx func() bool
	// w is the watchdog of a run on a goroutine of its own (watch.go).
	w *watcher
	// checkpointed is set once the run took a checkpoint: it takes
	// another at its end (checkpoint.go).
	checkpointed bool
	// Buffers reused from step to step.
	jobs []toolJob
	req  Request
	view MemoryView // of the inline tool call running
	call Call       // of the inline tool call running
	// deltaErr is the first sink error while the model streamed.
	deltaErr error
	// held is the end of the streamed text (held[0]) and reasoning
	// (held[1]) not yet handed on while Config.Redact is set: a secret
	// may be cut between two pieces, so the last RedactHold bytes wait
	// for the next piece.
	held [2]string
	// partial is the answer text streamed by the model's current attempt,
	// kept for run_finished when the person cancels mid-answer.
	partial strings.Builder
	// reqTokens is the estimated size of the last request; sized are the
	// estimate and the server's count of the last one the server counted
	// (what the next request will count, for a budget: sized[1] plus what
	// the estimate grew by since).
	reqTokens int
	sized     [2]int
	// payloads are the current step's; a run with no sink (nobody can
	// keep them) reuses one set, held in own.
	payloads *stepPayloads
	own      *stepPayloads
	// stepTool, when not nil, holds the payloads of the first tool call
	// the current step runs; act takes it.
	stepTool *toolPayloads
	// results carries the isolated tools' answers to the run's goroutine.
	// It is kept from step to step while no attempt is left outstanding
	// (an attempt abandoned at its deadline may still answer into it).
	results chan toolResult
	// free holds attempt slots whose goroutines have answered, for reuse.
	free []*attemptSlot
	// outstanding counts the attempts launched on results and not yet
	// received.
	outstanding int

	// prof is what the run runs as: an agent's settings or the engine's.
	prof profile
	// rejections counts the answers the output schema sent back.
	rejections int
	// With agents defined: tree is shared with the sub-runs, root is the
	// session (s is the sub-run's own state in a sub-run); depth is 0 for
	// a top-level run; parent and parentCall name a sub-run's parent run
	// and call, parentBase the tools of the run that delegated.
	tree               *tree
	root               *Session
	depth              int
	parent, parentCall string
	parentBase         *Registry
	// children counts the sub-runs still going; delegateFn is delegate,
	// made once.
	children   sync.WaitGroup
	delegateFn func(context.Context, *Call) (string, error)
	// handoff is the agent a transfer_to call of this step handed the run
	// to (handoffCall its id); the run goes on as it after the step.
	handoff, handoffCall string

	// instructions are the project instructions the run's requests carry
	// (instT their tokens, read when the top-level run started).
	instructions string
	instT        int
	// compactedTurn is the turn of the run's last compaction (-1: none);
	// noCompact is set when compaction fell back to trimming for the rest
	// of the run.
	compactedTurn int
	noCompact     bool
	// The prompt hash of the last request, and what it was made of.
	hash               Hash
	hashSet            *toolSet
	hashSys, hashInstr string
	// brkHit is a breakpoint an event met: the run stops at its next
	// pause. brkAgent is the agent of the run's last decide pause
	// (brkSeen: there was one), for agent=NAME.
	brkHit, brkAgent string
	brkSeen          bool
	// own is what the run's own model calls spent, for its agent's budget.
	ownUsage Usage
	// hookStop is why a hook ended the run ("continue": false);
	// stopHookActive is set once a Stop hook kept the run going.
	hookStop       string
	stopHookActive bool
}

// newRun makes the top-level run id on s, running as the session's agent;
// cancel ends its tree's context (treeContext).
func (e *Engine) newRun(s *Session, sink Sink, id string, cancel context.CancelCauseFunc) *run {
	r := &run{e: e, s: s, root: s, sink: sink, id: id, compactedTurn: -1}
	s.budgetFrom = s.Usage
	r.req.delta = r.onDelta
	r.prof = e.profile(cmp.Or(s.Agent, e.cfg.Agent), nil, 0)
	if e.agents != nil {
		r.tree = &tree{root: s, sink: sink, cancel: cancel}
		r.delegateFn = r.delegate
	}
	return r
}

// switchAgent ends a step that handed the run off: the handoff event, at
// once after step_finished (so a continued run goes on as the new agent),
// and the run goes on as that agent, its step limit counted from here.
func (r *run) switchAgent() error {
	if r.handoff == "" {
		return nil
	}
	h := &Handoff{From: r.prof.agent, To: r.handoff, Call: r.handoffCall}
	r.handoff = ""
	if err := r.emit(Observe, KindHandoff, h); err != nil {
		return err
	}
	r.prof = r.e.profile(h.To, r.parentBase, r.depth)
	return nil
}

// finish ends the run with run_finished. A run cancelled because the
// console crashed (ctx's cause is ErrCrashed) ends with stop reason error,
// not cancelled: nobody chose to stop it.
func (r *run) finish(ctx context.Context, stop StopReason, answer string, cause error) Result {
	if stop == StopCancelled {
		switch c := context.Cause(ctx); {
		case errors.Is(c, ErrCrashed):
			stop, cause = StopError, c
		case errors.Is(c, errAborted):
			cause = c // a sub-run was aborted at the gate: so is the tree
		case c != nil && !errors.Is(c, context.Canceled):
			cause = c // who cancelled says why (agentty cancel)
		}
		if r.parent != "" && errors.Is(cause, errAborted) {
			r.tree.cancel(errAborted) // an abort in a sub-run ends its top-level run
		}
	}
	r.stopAlarms()
	if r.checkpointed { // what the last step changed is known too
		_ = r.takeCheckpoint(ctx, CheckpointAfter, nil)
	}
	res := Result{RunID: r.id, StopReason: stop, Answer: answer, Steps: r.s.run.Turn}
	fin := &RunFinished{StopReason: stop, Answer: answer, Steps: res.Steps}
	if stop == StopCancelled && r.partial.Len() > 0 {
		res.Partial, fin.Partial = r.partial.String(), r.partial.String()
	}
	if cause != nil {
		fin.Error = cause.Error()
		if stop == StopError || stop == StopGuardrail || stop == StopBudget {
			res.Err = cause
		}
	}
	if err := r.emit("", KindRunFinished, fin); err != nil && res.Err == nil {
		res.StopReason, res.Err = StopError, err
	}
	if err := r.flush(); err != nil && res.Err == nil {
		res.StopReason, res.Err = StopError, err
	}
	return res
}

// loop runs steps until the run ends: each step perceives, asks the gate,
// decides, and acts on the tool calls the model asked for, and every way
// out goes through finish.
func (r *run) loop(ctx context.Context) Result {
	if r.s.run.Turn == 0 && len(r.prof.guard.Input) > 0 {
		if err := r.checkGuardrails(ctx, r.prof.guard.Input, r.s.run.Task, false); err != nil {
			return r.finish(ctx, StopGuardrail, "", err)
		}
	}
	for {
		if ctx.Err() != nil {
			return r.finish(ctx, StopCancelled, "", ctx.Err())
		}
		if r.s.run.Turn-r.s.run.HandoffTurn >= r.prof.maxSteps {
			return r.finish(ctx, StopStepLimit, "", fmt.Errorf("step limit of %d reached without an answer", r.prof.maxSteps))
		}
		if err := r.overBudget(); err != nil {
			return r.finish(ctx, StopBudget, "", err)
		}
		if r.hookStop != "" {
			return r.finish(ctx, StopGuardrail, "", errors.New("a hook stopped the run: "+r.hookStop))
		}
		r.step = r.s.Steps + 1
		p := r.stepPayloads()
		// What perceive emits shares the step's start time.
		t := r.stamp()
		if err := r.emitAt(t, Perceive, KindStepStarted, &p.started); err != nil {
			return r.finish(ctx, StopError, "", err)
		}
		req, err := r.perceive(ctx, t)
		if err != nil {
			return r.finish(ctx, stopFor(ctx, err), "", err) // cancelled during a summary call too
		}
		v, err := r.pause(ctx, Pending{At: Decide, Request: req})
		if err != nil {
			return r.finish(ctx, stopFor(ctx, err), "", err)
		} else if v.Action == Abort {
			return r.finish(ctx, StopCancelled, "", errAborted)
		}
		if req, err = r.editRequest(req, v.Edit); err != nil {
			return r.finish(ctx, StopError, "", err)
		} else if err := r.wouldOverspend(); err != nil {
			return r.finish(ctx, StopBudget, "", err)
		}
		dec, attempts, err := r.decide(ctx, req)
		if err != nil {
			return r.finish(ctx, stopFor(ctx, err), "", err)
		}
		p.decision = r.decided(dec, attempts)
		now := r.now()
		if err := r.emitAt(now, Decide, KindDecision, &p.decision); err != nil {
			return r.finish(ctx, StopError, "", err)
		}
		if err := r.recordUsage(now, p, dec.Usage); err != nil {
			return r.finish(ctx, StopError, "", err)
		}
		if len(dec.ToolCalls) == 0 {
			if res, done := r.answered(ctx, p, now, dec.Text); done {
				return res
			}
			continue // the answer went back to the model, or a Stop hook sent the run on
		}
		r.stepTool = &p.tool
		if r.w != nil {
			r.w.calls = len(dec.ToolCalls) // its single isolated call may be watched
		}
		stop, reason, err := r.act(ctx, dec.ToolCalls, nil)
		if stop == stopSuperseded {
			return Result{StopReason: stop} // the run is another goroutine's now
		}
		if stop, err := r.endStep(stop, reason, err, len(dec.ToolCalls)); stop != "" {
			return r.finish(ctx, stop, "", err)
		}
	}
}

// answered ends a step whose decision answered: a breakpoint the answer
// met pauses before it is given, then the output checks and the Stop
// hooks. It returns the run's result when the run ends here (done); not
// done when the answer went back to the model or a Stop hook sent the run
// on.
func (r *run) answered(ctx context.Context, p *stepPayloads, now time.Time, text string) (Result, bool) {
	if err := r.emitAt(now, Observe, KindStepFinished, &p.finished); err != nil {
		return r.finish(ctx, StopError, "", err), true
	}
	if r.brkHit != "" { // a breakpoint the answer met: before it is given
		if v, err := r.pause(ctx, Pending{At: Observe, Answer: text}); err != nil {
			return r.finish(ctx, stopFor(ctx, err), "", err), true
		} else if v.Action == Abort {
			return r.finish(ctx, StopCancelled, "", errAborted), true
		}
	}
	answer, stop, err := r.accept(ctx, text)
	if stop == StopAnswered && r.e.cfg.Hooks != nil {
		again, err := r.stopHooks(ctx, answer)
		if err != nil {
			return r.finish(ctx, StopError, "", err), true
		}
		if again {
			return Result{}, false
		}
	}
	if stop == "" {
		return Result{}, false
	}
	return r.finish(ctx, stop, answer, err), true
}

// recordUsage emits a decision's usage, priced, with the session's
// totals, and adds it to what the run itself spent.
func (r *run) recordUsage(now time.Time, p *stepPayloads, usage Usage) error {
	if usage == (Usage{}) && wantsFullHistory(r.prof.model) {
		return nil // a workflow's planner: no call, nothing spent
	}
	u := r.priced(usage, r.prof.modelName)
	if !usage.Estimated && usage.PromptTokens > 0 {
		r.sized = [2]int{r.reqTokens, usage.PromptTokens}
	}
	r.ownUsage.Add(u)
	p.usage = UsageRecorded{Usage: u, SessionPrompt: r.s.Usage.PromptTokens + u.PromptTokens, SessionCompletion: r.s.Usage.CompletionTokens + u.CompletionTokens}
	return r.emitAt(now, Decide, KindUsage, &p.usage)
}

// endStep ends a step of loop whose act returned stop, reason and err, the
// decision having asked for calls tool calls. It returns how the run ends,
// if it does (finish's stop and cause).
func (r *run) endStep(stop StopReason, reason string, err error, calls int) (StopReason, error) {
	r.stepTool = nil
	if r.w != nil {
		r.w.calls = 0
	}
	if stop != "" {
		return stop, err
	} else if reason != "" {
		return StopCancelled, errAborted
	}
	p := r.payloads
	p.finished = StepFinished{ToolCalls: calls}
	// The step ends with its last tool's result: nothing waits between
	// that event and this one.
	if err := r.emitAt(r.lastAt, Observe, KindStepFinished, &p.finished); err != nil {
		return StopError, err
	}
	if err := r.switchAgent(); err != nil {
		return StopError, err
	}
	return "", nil
}

// stepPayloads returns the payloads for a new step: one allocation for the
// payloads of the step's own events, which subscribers may keep, or, for a
// run that has no sink, the run's one set.
func (r *run) stepPayloads() *stepPayloads {
	turn := r.s.run.Turn
	if r.sink != nil || (r.tree != nil && r.tree.sink != nil) {
		r.payloads = &stepPayloads{started: StepStarted{Turn: turn}}
		return r.payloads
	}
	if r.own == nil {
		r.own = new(stepPayloads)
	}
	*r.own = stepPayloads{started: StepStarted{Turn: turn}}
	r.payloads = r.own
	return r.own
}

// stepPayloads holds the payloads of the events every step has, and those
// of its first tool call.
type stepPayloads struct {
	started  StepStarted
	request  ModelRequest
	decision Decided
	usage    UsageRecorded
	finished StepFinished
	tool     toolPayloads
}

// toolPayloads holds the payloads of one tool call's tool_started and
// tool_finished.
type toolPayloads struct {
	started  ToolStarted
	finished ToolFinished
}

func stopFor(ctx context.Context, err error) StopReason {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return StopCancelled
	}
	return StopError
}
