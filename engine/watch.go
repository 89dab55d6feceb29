package engine

import (
	"context"
	"sync"
	"time"
)

// A watched call: a step's one isolated tool call run on the run's own
// goroutine while a watchdog keeps its deadline, instead of on a goroutine
// of its own. When the call overruns its deadline, or the run is cancelled
// while it runs, the watchdog takes the run over: a new goroutine carries
// the run on from where it was (the call timed out or was cancelled, as on
// the isolated path), and the goroutine the tool holds is left to it and
// ends, touching nothing of the run, when the tool returns. A tool that
// ignores its deadline thus still cannot hold the run, and a call that
// answers in time costs no goroutine and no hand-off.
//
// Only a run on a goroutine the engine started can be taken over (the
// caller of Run must get its result even while a tool holds the goroutine
// that started the run): Run and Continue start one when the engine has
// an isolated tool (carry), and wait for the run's result on done.

// stopSuperseded ends the calls of a goroutine whose run another goroutine
// took over: it returns without touching the run. It never leaves the
// engine.
const stopSuperseded StopReason = "superseded"

// watcher is an owned run's watchdog. mu guards timer, at and inflight,
// which the watchdog's callbacks share with the run's goroutine; the rest
// is the run's.
type watcher struct {
	mu       sync.Mutex
	timer    *time.Timer  // calls fire; nil until first armed
	at       time.Time    // the timer fires by then; zero: not known to be armed
	inflight *attemptSlot // the watched attempt running; nil when none
	ctx      context.Context
	done     chan Result // the run's result, for the goroutine that waits in Run
	jobs     []toolJob   // the watched step's, for a takeover
	calls    int         // the tool calls of the step act is running from loop; 0: none
}

// owned reports whether a run should run on a goroutine of its own: when
// the engine has a tool that runs isolated, so that its calls can be
// watched.
func (e *Engine) owned() bool {
	return e.cfg.Tools.set().isolated
}

// carry runs a run, which returns its result, or, from a goroutine a
// takeover left to its tool, stopSuperseded. When the engine has a tool
// that runs isolated, the run runs on a goroutine of its own and carry
// waits for its result on done (nil otherwise), which a takeover's
// goroutine may send in the end. The caller's goroutine only waits: what a
// run defers must be deferred around carry, not in run.
func (e *Engine) carry(run func(done chan Result) Result) Result {
	if !e.owned() {
		growStack(0)
		return run(nil)
	}
	done := make(chan Result, 1)
	go func() {
		growStack(0)
		if res := run(done); res.StopReason != stopSuperseded {
			done <- res
		}
	}()
	return <-done
}

// watch makes the watchdog of a run on a goroutine of its own (done is
// carry's); with none, the run's calls are not watched.
func (r *run) watch(ctx context.Context, done chan Result) {
	if done != nil {
		r.w = &watcher{ctx: ctx, done: done}
	}
}

// runWatched runs jobs[0], the step's only job, as a watched call, and
// then, if it is to be retried, as runJobs would. now is the clock's
// reading.
func (r *run) runWatched(ctx context.Context, jobs []toolJob, now time.Time) (StopReason, error) {
	jb := &jobs[0]
	a := r.attempt(ctx, 0, jb, now)
	w := r.w
	w.jobs = jobs
	if r.wake == nil {
		r.hook(ctx)
	}
	w.mu.Lock()
	w.inflight = a
	if w.at.IsZero() || w.at.After(jb.deadline) {
		if w.timer == nil {
			w.timer = time.AfterFunc(jb.deadline.Sub(now), r.fire)
		} else {
			w.timer.Reset(jb.deadline.Sub(now))
		}
		w.at = jb.deadline
	}
	w.mu.Unlock()
	if ctx.Err() != nil { // cancelled before the watchdog was set
		r.unwatch(a)
		return StopCancelled, ctx.Err()
	}
	if !r.watched(a) {
		return stopSuperseded, nil
	}
	now = r.now()
	done, err := r.settle(ctx, jb, a.res.out, a.res.err, now)
	r.release(a)
	if err != nil {
		return StopError, err
	}
	if done {
		return "", nil
	}
	return r.waitJobs(ctx, jobs, r.isolate(ctx, 1), 1, now)
}

// watched runs attempt a on this goroutine. It reports false when the
// watchdog took the run over: the goroutine is then the tool's alone, and
// must return without touching the run.
func (r *run) watched(a *attemptSlot) bool {
	returned := false
	defer func() {
		// A tool that called runtime.Goexit never answers: the run
		// goes on without it, on a new goroutine, and times it out.
		if !returned && r.unwatch(a) {
			go r.takeover()
		}
	}()
	a.res.out, a.res.err = inlineTool(a.ctx, a.fn, &a.call)
	returned = true
	return r.unwatch(a)
}

// unwatch ends the watch of a; it reports false when the watchdog ended it
// first (and took the run over).
func (r *run) unwatch(a *attemptSlot) bool {
	w := r.w
	w.mu.Lock()
	ok := w.inflight == a
	if ok {
		w.inflight = nil
	}
	w.mu.Unlock()
	return ok
}

// fire is the watchdog: called by its timer and when the run's context is
// cancelled. A watched call past its deadline, or running when the run is
// cancelled, makes it take the run over; one not yet due gets the timer
// armed for its deadline.
func (r *run) fire() {
	w := r.w
	w.mu.Lock()
	a := w.inflight
	if a == nil {
		w.at = time.Time{}
		w.mu.Unlock()
		return
	}
	now := time.Now()
	if w.ctx.Err() == nil && now.Before(a.deadline) {
		w.timer.Reset(a.deadline.Sub(now))
		w.at = a.deadline
		w.mu.Unlock()
		return
	}
	w.inflight, w.at = nil, time.Time{} // the timer is not armed again
	w.mu.Unlock()
	go r.takeover()
}

// takeover carries the run on from its watched call, which overran its
// deadline or was running when the run was cancelled: as the isolated path
// does, the call times out (or the run ends cancelled), then the step ends
// and the loop goes on, on this goroutine.
func (r *run) takeover() {
	growStack(0)
	w := r.w
	ctx, jobs := w.ctx, w.jobs
	now := r.now()
	stop, err := r.waitJobs(ctx, jobs, r.isolate(ctx, 1), 1, now)
	stop, err = r.endJobs(ctx, jobs, stop, err)
	r.endAct(jobs)
	res, end := r.endStep(ctx, stop, "", err, w.calls)
	if !end {
		res = r.loop(ctx)
	}
	if res.StopReason != stopSuperseded {
		w.done <- res
	}
}

// stopWatch stops the watchdog's timer at the end of the run.
func (w *watcher) stop() {
	w.mu.Lock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.at = time.Time{}
	w.mu.Unlock()
}
