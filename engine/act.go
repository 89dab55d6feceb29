package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// interruptedCall answers a call that a process started and died in, not
// run again.
const interruptedCall = "error: this tool call was interrupted (the process running it stopped before it finished) and was not run again; what it did is unknown"

// toolJob is one tool call being run by act.
type toolJob struct {
	idx     int
	tool    *Tool // the registry's, not to be changed
	timeout time.Duration
	call    ToolCall
	attempt int // the attempt running or next to run
	active  bool
	// The running attempt's context is ended by cancel, or, when it is
	// a callCtx, by cc.cancel (a method value would be an allocation).
	cancel   context.CancelFunc
	cc       *callCtx
	deadline time.Time // of the running attempt
	retryAt  time.Time // when waiting to retry
	start    time.Time // its tool_started's time (timeouts count from it)
	// ran is when the tool was handed the call, once tool_started was
	// written: its duration counts from here, so a journal slow to sync
	// is not reported as a slow tool.
	ran  time.Time
	view *MemoryView
	// cur is the running attempt's Call, whose structured result (if it
	// gave one) goes into its tool_finished.
	cur *Call
	// tp, when not nil, holds this call's payloads (the step's first call
	// has them in the step's payloads); otherwise each is allocated.
	tp *toolPayloads
	// started and finished say whether its tool_started and tool_finished
	// were emitted.
	started, finished bool
}

// took is the call's duration in milliseconds at now: from when the tool
// was handed it (from its tool_started when it never was), never less
// than zero.
func (jb *toolJob) took(now time.Time) int64 {
	from := jb.ran
	if from.IsZero() {
		from = jb.start
	}
	return max(now.Sub(from).Milliseconds(), 0)
}

// act runs the tool calls calls[i] for i in todo (nil: all of them):
// refusals first, then the rest in parallel. It returns a stop reason when
// the run must end, with the error, or an abort reason.
//
// The gate is consulted for every call before any of them runs. When it
// answers Abort at call k, nothing runs and none gets a tool_started: the
// calls approved before k get their tool_finished (skipped) at once, in call
// order, then k, then each call after k.
func (r *run) act(ctx context.Context, calls []ToolCall, todo []int) (StopReason, string, error) {
	jobs := r.jobs[:0]
	aborted := false
	for k := range max(len(todo), len(calls)) {
		i := k
		if todo != nil {
			if k >= len(todo) {
				break
			}
			i = todo[k]
		}
		var stop StopReason
		var err error
		if jobs, aborted, stop, err = r.admit(ctx, jobs, i, &calls[i], aborted); stop != "" {
			return stop, "", err
		}
	}
	reason := ""
	if aborted {
		reason = errAborted.Error()
	}
	if len(jobs) == 0 {
		return "", reason, nil
	}
	if err := r.checkpoint(ctx, jobs); err != nil {
		return StopError, "", err
	}
	stop, err := r.runJobs(ctx, jobs)
	if stop == stopSuperseded {
		return stop, "", nil // the run is another goroutine's now
	}
	r.endAct(jobs)
	return stop, reason, err
}

// endAct keeps act's jobs buffer for the next step.
func (r *run) endAct(jobs []toolJob) {
	clear(jobs)
	r.jobs = jobs[:0]
}

// admit decides what becomes of the call calls[i] (*c) of act: a job to
// run, appended to jobs, or a tool_finished at once (refused, denied,
// skipped, a handoff). It reports whether the run was aborted (aborted: at
// an earlier call), and a stop reason when the run must end. It is a
// function of its own so that act's frame, which is on the stack while
// the tools run, stays small.
func (r *run) admit(ctx context.Context, jobs []toolJob, i int, c *ToolCall, aborted bool) ([]toolJob, bool, StopReason, error) {
	cfg := &r.e.cfg
	fin := ToolFinished{Index: i, ID: c.ID, Name: c.Name} // emitted only when refused
	if aborted {
		fin.Status, fin.Result = ToolSkipped, skippedByAbort
		err := r.emitFinished(fin)
		return jobs, true, stopOn(err), err
	}
	tools := r.prof.tools
	t, ok := tools.lookup(c.Name)
	switch {
	case len(r.secretArgs) > 0 && slices.Contains(r.secretArgs, c.ID):
		fin.Status, fin.Result = ToolError, secretArgsCall
	case i >= cfg.MaxCalls:
		// A decision of thousands of calls (a model looping, or told
		// to) would hold the gate, the tools and the journal for each.
		fin.Status = ToolError
		fin.Result = fmt.Sprintf("error: not run: this decision asked for more than %d tool calls, and only the first %d of a decision are run; ask for the rest in the next decision", cfg.MaxCalls, cfg.MaxCalls)
	case !ok && c.Name == AgentTool && r.e.agents != nil && r.e.agents.delegate != nil:
		fin.Status = ToolError
		fin.Result = fmt.Sprintf("error: this agent may not delegate: the depth limit of %d is reached", cfg.MaxDepth)
	case !ok:
		fin.Status = ToolError
		fin.Result = fmt.Sprintf("error: unknown tool %q; the tools are: %s", c.Name, strings.Join(tools.Names(), ", "))
	case t.Policy == PolicyDeny:
		fin.Status, fin.Result = ToolDenied, fmt.Sprintf("error: tool %q is denied by policy and was not run", c.Name)
	default:
		return r.admitCall(ctx, jobs, i, c, t, fin)
	}
	err := r.emitFinished(fin)
	return jobs, false, stopOn(err), err
}

// admitCall decides what becomes of a call to a tool the run has: its
// PreToolUse hooks, then the gate, may refuse it, skip it, answer it or
// change its arguments; else it is a job to run.
func (r *run) admitCall(ctx context.Context, jobs []toolJob, i int, c *ToolCall, t *Tool, fin ToolFinished) ([]toolJob, bool, StopReason, error) {
	cfg := &r.e.cfg
	c, hook, err := r.preToolHooks(ctx, c, &fin)
	if err != nil {
		return jobs, false, StopError, err
	}
	v := Verdict{Action: Proceed}
	if hook == HookDeny || hook == HookBlock {
		v.Action = Skip // fin holds the refusal
	} else if cfg.Gate != nil {
		pending := *c // on the heap only when there is a gate to show it to
		// A sub-run is continued, not re-run: its own calls ask.
		rerun := r.rerun[c.ID] && t.builtin != toolDelegate
		ask := (t.Policy == PolicyAsk && hook != HookAllow) || hook == HookAsk || rerun
		if v, err = r.pause(ctx, Pending{At: Act, ToolCall: &pending, Approval: ask, Rerun: rerun}); err != nil {
			return jobs, false, stopFor(ctx, err), err
		}
	}
	switch v.Action {
	case Abort:
		jobs, err := r.abortCalls(jobs, fin)
		return jobs, true, stopOn(err), err
	case Skip:
		if fin.Status == "" {
			fin.Status, fin.Result = ToolSkipped, "skipped: the person chose not to run this tool call"
		}
	case Respond:
		fin.Status, fin.Result, fin.By = ToolOK, v.Result, "person"
	case Deny:
		fin.Status, fin.Result = ToolDenied, "error: the person denied this tool call; it was not run"
		if r.rerun[c.ID] {
			fin.Status, fin.Result = ToolError, interruptedCall
		}
	default:
		call := *c
		if v.Args != nil {
			call.Args = v.Args
		}
		if err := r.prof.tools.Validate(call.Name, call.Args); err != nil {
			fin.Status, fin.Result = ToolError, "error: "+err.Error()
			break
		}
		if t.builtin == toolTransfer || t.builtin == toolAsk {
			aborted, stop, err := r.answerOwn(ctx, i, t.builtin, call)
			return jobs, aborted, stop, err
		}
		timeout := t.Timeout
		if timeout <= 0 {
			timeout = cfg.ToolTimeout
		}
		return append(jobs, toolJob{idx: i, tool: t, timeout: timeout, call: call, attempt: 1}), false, "", nil
	}
	err = r.emitFinished(fin)
	return jobs, false, stopOn(err), err
}

// abortCalls ends a decision's calls at an abort: it runs nothing more,
// the calls approved before fin's are skipped too, in call order, before
// it.
func (r *run) abortCalls(jobs []toolJob, fin ToolFinished) ([]toolJob, error) {
	for j := range jobs {
		jb := &jobs[j]
		if err := r.emitFinished(ToolFinished{Index: jb.idx, ID: jb.call.ID, Name: jb.call.Name, Status: ToolSkipped, Result: skippedByAbort}); err != nil {
			return jobs, err
		}
	}
	clear(jobs)
	jobs = jobs[:0]
	fin.Status, fin.Result = ToolSkipped, "skipped: the run was aborted"
	return jobs, r.emitFinished(fin)
}

// stopOn is the stop reason for a sink's error: error, or none.
func stopOn(err error) StopReason {
	if err != nil {
		return StopError
	}
	return ""
}

// skippedByAbort is the result of a call that did not run because the
// person aborted the run at another call of the same decision.
const skippedByAbort = "skipped: the run was aborted before this call"

// emitFinished reports a tool call that did not run. It is not inlined:
// inlined, its payload would be moved to the heap on every call admit
// admits, refused or not.
//
//go:noinline
func (r *run) emitFinished(fin ToolFinished) error {
	r.redactFinished(&fin)
	return r.emit(Act, KindToolFinished, &fin)
}
