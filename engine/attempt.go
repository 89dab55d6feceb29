package engine

import (
	"context"
	"time"
)

// An isolated tool call's attempts: each on its own goroutine, answering on
// the run's results channel, and the alarms that wake the run's wait.

// toolResult is what an attempt's goroutine sends back.
type toolResult struct {
	job, attempt int
	out          string
	err          error
	slot         *attemptSlot
}

// attemptSlot is what one isolated attempt's goroutine uses: the call, its
// memory view and where to answer. The run reuses a slot once its goroutine
// has answered (the goroutine touches it no more); a slot whose attempt was
// abandoned is left to the garbage collector.
type attemptSlot struct {
	ctx     context.Context
	fn      func(context.Context, *Call) (string, error)
	call    Call
	view    MemoryView
	res     toolResult
	results chan<- toolResult
}

// run runs the attempt on its own goroutine and reports it.
func (a *attemptSlot) run() {
	a.res.out, a.res.err = inlineTool(a.ctx, a.fn, &a.call)
	a.results <- a.res
}

// startAlarms sets up what wakes a run waiting for its isolated tools
// besides their answers: the timer of their deadlines and retry delays, and
// the run's context being cancelled. Both only signal wake, so the wait
// selects on two channels, and a timer with no channel is not added to and
// removed from the runtime's timers at every wait.
func (r *run) startAlarms(ctx context.Context) {
	r.wake = make(chan struct{}, 1)
	r.timer = time.AfterFunc(time.Hour, r.alarm)
	r.timer.Stop()
	r.stopCtx = func() bool { return false }
	if ctx.Done() != nil { // a context that can be cancelled
		r.stopCtx = context.AfterFunc(ctx, r.alarm)
	}
}

// alarm wakes the run's wait, if it is not already woken.
func (r *run) alarm() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// arm makes the timer fire by next (now is the clock's reading). A timer
// armed for no later than that is left as it is: when it fires early, the
// wait finds nothing due and arms it again.
func (r *run) arm(next, now time.Time) {
	if !r.timerAt.IsZero() && !r.timerAt.After(next) {
		return
	}
	r.timer.Reset(next.Sub(now))
	r.timerAt = next
}

// stopTimer stops the act phase's timer, when the run has one.
func (r *run) stopTimer() {
	if r.timer != nil {
		r.timer.Stop()
		r.timerAt = time.Time{}
	}
}

// stopAlarms stops what startAlarms started, at the end of the run.
func (r *run) stopAlarms() {
	if r.timer != nil {
		r.stopTimer()
		r.stopCtx()
	}
}

// launch starts the job's current attempt on its own goroutine; now is the
// clock's reading.
func (r *run) launch(ctx context.Context, j int, jb *toolJob, results chan<- toolResult, now time.Time) {
	cctx, cancel := context.WithCancel(ctx)
	jb.active, jb.cancel = true, cancel
	jb.deadline = now.Add(jb.tool.Timeout)
	var a *attemptSlot
	if n := len(r.free); n > 0 {
		a, r.free = r.free[n-1], r.free[:n-1]
	} else {
		a = new(attemptSlot)
	}
	a.ctx, a.fn, a.results = cctx, jb.tool.Func, results
	if jb.tool.builtin == toolDelegate {
		a.fn = r.delegateFn
		r.children.Add(1)
	}
	a.view = MemoryView{base: r.memory()}
	jb.view = &a.view
	a.call = Call{ID: jb.call.ID, Args: jb.call.Args, Step: r.step, Session: r.root.ID, Run: r.id, Memory: jb.view, turn: r.s.run.Turn}
	a.res = toolResult{job: j, attempt: jb.attempt, slot: a}
	r.outstanding++
	go a.run()
}

// release makes an answered attempt's slot reusable. The memory changes
// its view recorded stay with the events that carry them.
func (r *run) release(a *attemptSlot) {
	*a = attemptSlot{}
	r.free = append(r.free, a)
}
