package engine

import (
	"context"
	"time"
)

// The attempts of isolated tool calls when a step has several: each on its
// own goroutine, answering on the run's results channel, and the alarms
// that wake the run's wait. (A step's only isolated call runs watched, on
// the run's goroutine: watch.go.)

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
// the run's context being cancelled (hook). Both only signal wake, so the
// wait selects on two channels, and a timer with no channel is not added to
// and removed from the runtime's timers at every wait.
func (r *run) startAlarms(ctx context.Context) {
	r.timer = time.AfterFunc(time.Hour, r.alarm)
	r.timer.Stop()
	if r.wake == nil {
		r.hook(ctx)
	}
}

// hook makes the wake channel and has the run's context, when it can be
// cancelled, ring the alarm and the watchdog; stopCtx undoes it.
func (r *run) hook(ctx context.Context) {
	r.wake = make(chan struct{}, 1)
	r.stopCtx = func() bool { return false }
	if ctx.Done() != nil {
		r.stopCtx = context.AfterFunc(ctx, r.ring)
	}
}

// ring wakes the run's wait and its watchdog: the run is cancelled.
func (r *run) ring() {
	r.alarm()
	if r.w != nil {
		r.fire()
	}
}

// isolate returns the channel for the answers of n jobs' isolated
// attempts, every one of which can answer without blocking, even one
// abandoned at its deadline, and makes sure the alarms are set.
func (r *run) isolate(ctx context.Context, n int) chan toolResult {
	if need := n * r.e.cfg.Retry.Attempts; cap(r.results) < need {
		r.results = make(chan toolResult, need)
	}
	if r.timer == nil {
		r.startAlarms(ctx)
	}
	return r.results
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

// stopAlarms stops what startAlarms, hook and a watched call started, at
// the end of the run.
func (r *run) stopAlarms() {
	r.stopTimer()
	if r.stopCtx != nil {
		r.stopCtx()
	}
	if r.w != nil {
		r.w.stop()
	}
}

// launch starts the job's current attempt on its own goroutine; now is the
// clock's reading.
func (r *run) launch(ctx context.Context, j int, jb *toolJob, results chan<- toolResult, now time.Time) {
	a := r.attempt(ctx, j, jb, now)
	a.results = results
	r.outstanding++
	go a.run()
}

// attempt readies the slot of the job's current attempt, jobs[j]: its
// context, deadline, call and memory view.
func (r *run) attempt(ctx context.Context, j int, jb *toolJob, now time.Time) *attemptSlot {
	var cctx context.Context
	jb.active = true
	if ctx.Done() == nil {
		jb.cc = &callCtx{Context: ctx}
		cctx, jb.cancel = jb.cc, nil
	} else {
		cctx, jb.cancel = context.WithCancel(ctx)
		jb.cc = nil
	}
	jb.deadline = now.Add(jb.timeout)
	var a *attemptSlot
	if n := len(r.free); n > 0 {
		a, r.free = r.free[n-1], r.free[:n-1]
	} else {
		a = new(attemptSlot)
	}
	a.ctx, a.fn = cctx, jb.tool.Func
	if jb.tool.builtin == toolDelegate {
		a.fn = r.delegateFn
		r.children.Add(1)
	}
	a.view = MemoryView{base: r.memory()}
	jb.view = &a.view
	a.call = Call{ID: jb.call.ID, Args: jb.call.Args, Step: r.step, Session: r.root.ID, Run: r.id, Memory: jb.view, turn: r.s.run.Turn}
	jb.cur = &a.call
	a.res = toolResult{job: j, attempt: jb.attempt, slot: a}
	return a
}

// release makes an answered attempt's slot reusable. The memory changes
// its view recorded stay with the events that carry them.
func (r *run) release(a *attemptSlot) {
	*a = attemptSlot{}
	r.free = append(r.free, a)
}
