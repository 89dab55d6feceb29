package engine

import (
	"context"
	"runtime"
	"sync/atomic"
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
// an isolated tool (carryOwned), and wait for the run's end.

// stopSuperseded ends the calls of a goroutine whose run another goroutine
// took over: it returns without touching the run. It never leaves the
// engine.
const stopSuperseded StopReason = "superseded"

// watcher is an owned run's watchdog. at, cur and due are shared with the
// watchdog's callbacks (fire), without a lock (see arm and fire); timer,
// base, ctx, o and hook do not change; the rest is the run's.
type watcher struct {
	timer *time.Timer  // calls fire; made stopped, with the watcher
	base  time.Time    // at and due count from it, in nanoseconds (+1)
	at    atomic.Int64 // the timer fires by then (see arm); 0: not known to be armed
	// cur is the number of the watched attempt running (0: none), due
	// its deadline, set before it; seq numbers them.
	cur   atomic.Uint64
	due   atomic.Int64
	seq   uint64
	ctx   context.Context
	o     *ownedRun // the run, for the goroutine that hands its end on
	h     *handOn   // the goroutine running the run, which hands its end on
	jobs  []toolJob // the watched step's, for a takeover
	calls int       // the tool calls of the step act is running from loop; 0: none
	hook  func(int) // Engine.watchHook
}

// since is t counted from the watcher's base, as at and due are.
func (w *watcher) since(t time.Time) int64 { return int64(t.Sub(w.base)) + 1 }

// owned reports whether a run should run on a goroutine of its own: when
// a tool of the engine or of one of its agents runs isolated, so that its
// calls can be watched.
func (e *Engine) owned() bool {
	return e.cfg.Tools.isolated() || (e.agents != nil && e.agents.isolated())
}

// isolated reports whether a tool of r runs isolated. It keeps a small
// frame: owned is asked before a run's stack has grown.
func (r *Registry) isolated() bool {
	if r == nil {
		return false
	}
	s := r.snap.Load()
	return s != nil && s.isolated
}

// isolated reports whether an agent's own tools include one that runs
// isolated.
//
//go:noinline
func (ag *agents) isolated() bool {
	for _, a := range ag.byName {
		if a.Tools.isolated() {
			return true
		}
	}
	return false
}

// carryOwned carries out a run (Engine.begin) on a goroutine of its own,
// for an engine that has a tool that runs isolated, and waits for its end:
// the run's result, which a takeover's goroutine may hand on in the end
// (handOn), or what ended its goroutine early. A panic in the run (a
// model's, a sink's) is the caller's panic, and a runtime.Goexit (a test's
// t.FailNow in a model) ends the caller's goroutine, as when the run ran
// on it. The caller's goroutine only waits, and then does what must
// follow the run's end whichever goroutine ended it: the tree context's
// cancel and the session's release. It keeps a small frame, apart from
// its caller's (noinline), so that the caller's stack, which stays
// shallow, need not grow for it.
//
//go:noinline
func (e *Engine) carryOwned(o *ownedRun) Result {
	e.ownedTree(o)
	o.done = make(chan struct{}, 1)
	go e.runOwned(o)
	<-o.done
	o.a.cancel(nil) // here: a goroutine the run was taken from may end later
	o.a.s.busy.Store(false)
	switch {
	case o.out.goexit:
		runtime.Goexit()
	case o.out.panicked:
		panic(o.out.panic)
	}
	return o.out.res
}

// ownedTree gives o's run its tree context (treeContext). A panic there
// (a nil context) frees the session first, as the run would have.
func (e *Engine) ownedTree(o *ownedRun) {
	set := false
	defer func() {
		if !set {
			o.a.s.busy.Store(false)
		}
	}()
	o.a.ctx, o.a.cancel = e.treeContext(o.a.ctx)
	set = true
}

// runOwned is the goroutine of its own that carryOwned starts.
func (e *Engine) runOwned(o *ownedRun) {
	growStack(0)
	h := &o.first
	h.o = o
	defer h.end()
	h.send(e.begin(&o.a, h))
}

// ownedRun is a run on a goroutine of its own (carryOwned): what it
// carries out, its watchdog, and how it ended, for the caller that waits
// on done.
type ownedRun struct {
	a     runArgs
	done  chan struct{} // sent on once, when out is set
	out   outcome
	first handOn // the first goroutine's
	w     watcher
}

// outcome is how a run ended, for carryOwned: its result, or a panic, or
// a runtime.Goexit.
type outcome struct {
	res      Result
	panicked bool
	panic    any
	goexit   bool
}

// handOn hands the end of a run's goroutine on to the caller that waits
// on o: its result (send), or what ended it early (end, deferred). It is
// the goroutine's alone; sent is set once there is nothing (more) to hand
// on: a result was handed on, or the run went on on another goroutine.
// Exactly one goroutine of a run hands something on.
type handOn struct {
	o    *ownedRun
	sent bool
}

// send hands on res, unless it is a superseded goroutine's.
func (h *handOn) send(res Result) {
	h.sent = true
	if res.StopReason != stopSuperseded {
		h.o.out = outcome{res: res}
		h.o.done <- struct{}{}
	}
}

// end, deferred, hands on a panic or a runtime.Goexit.
func (h *handOn) end() {
	if h.sent {
		return
	}
	if p := recover(); p != nil {
		h.o.out = outcome{panicked: true, panic: p}
	} else {
		h.o.out = outcome{goexit: true}
	}
	h.o.done <- struct{}{}
}

// watch makes the watchdog of a run on a goroutine of its own (h is that
// goroutine's, from runOwned); with none, the run's calls are not watched.
func (r *run) watch(ctx context.Context, h *handOn) {
	if h == nil {
		return
	}
	w := &h.o.w
	w.ctx, w.o, w.h, w.base, w.hook = ctx, h.o, h, time.Now(), r.e.watchHook
	w.timer = time.AfterFunc(time.Hour, r.fire)
	w.timer.Stop()
	r.w = w
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
	h := w.h // this goroutine's; read before the watchdog may hand the run on
	deadline := jb.deadline
	w.seq++
	id := w.seq
	w.due.Store(w.since(deadline))
	w.cur.Store(id)
	w.pause(pauseAfterPublish)
	// From here until unwatch wins, the run may be a takeover's (jobs
	// too): this goroutine uses only ctx, a, h and w's atomics and fixed
	// fields.
	w.arm(deadline)
	if ctx.Err() != nil { // perhaps cancelled before the watchdog was set
		if !w.unwatch(id) {
			return stopSuperseded, nil // fire was first: the run is the takeover's
		}
		return StopCancelled, ctx.Err()
	}
	if !r.watched(a, id, h) {
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

// watched runs attempt a, watched as number id, on this goroutine, whose
// handOn is h. It reports false when the watchdog took the run over: the
// goroutine is then the tool's alone, and must return without touching
// the run.
func (r *run) watched(a *attemptSlot, id uint64, h *handOn) bool {
	if r.w.cur.Load() != id {
		return false // taken over before the tool began (this goroutine was slow): it does not run
	}
	returned := false
	defer func() {
		// A tool that called runtime.Goexit never answers: this
		// goroutine ends with nothing to send, and the run goes on
		// without the tool, on a new goroutine, and times it out.
		if !returned {
			h.sent = true
			if r.w.unwatch(id) {
				go r.takeover()
			}
		}
	}()
	a.res.out, a.res.err = inlineTool(a.ctx, a.fn, &a.call)
	returned = true
	return r.w.unwatch(id)
}

// unwatch ends the watch of attempt id; it reports false when the
// watchdog ended it first (and took the run over).
func (w *watcher) unwatch(id uint64) bool {
	return w.cur.CompareAndSwap(id, 0)
}

// arm makes the watchdog's timer fire by deadline, after cur is set: a
// timer known to fire by at is left as it is, and when it fires early,
// fire arms it again. at may be stale while fire runs (the timer has
// fired), but every way out of fire reads cur after its last store to at
// and its last Reset: when fire clears at and finds no attempt, arm (which
// sets cur before it reads at) reads at as cleared and arms the timer
// itself; when fire armed the timer for an attempt that is still current
// as it leaves, any later attempt's arm reads at as that deadline;
// otherwise fire looks again and finds the attempt. A goroutine the run
// was taken from may still be in arm: its Reset is for a deadline that
// has passed (the timer fires at once, and fire looks at the attempt then
// current) or for a run that has ended.
func (w *watcher) arm(deadline time.Time) {
	at := w.since(deadline)
	if old := w.at.Load(); old == 0 || old > at {
		w.at.Store(at)
		w.timer.Reset(time.Until(deadline)) // the clock read anew: tool_started's flush took time
	}
}

// fire is the watchdog: called by its timer and when the run's context is
// cancelled. A watched call past its deadline, or running when the run is
// cancelled, makes it take the run over; one not yet due gets the timer
// armed for its deadline. Whenever the watched attempt changes under it
// (its CAS fails, or the attempt it armed the timer for is over), it looks
// again, so that a timer it armed late for an attempt that is over, or
// that has fired and is not armed again, never stands for the next
// attempt's (see arm).
func (r *run) fire() {
	w := r.w
	for {
		id := w.cur.Load()
		if id == 0 {
			w.at.Store(0) // the timer has fired, or does not matter
			if id = w.cur.Load(); id == 0 {
				return
			}
		}
		due := w.due.Load()
		if w.cur.Load() != id {
			continue // another attempt began meanwhile: due may be its
		}
		now := time.Now()
		if w.ctx.Err() == nil && w.since(now) < due {
			w.at.Store(due)
			w.pause(pauseBeforeReset)
			w.timer.Reset(time.Duration(due - w.since(now)))
			if w.cur.Load() != id {
				continue // the attempt is over: the timer may be late for the next
			}
			return
		}
		w.pause(pauseBeforeCAS)
		if w.cur.CompareAndSwap(id, 0) {
			w.at.Store(0) // the timer is not armed again
			go r.takeover()
			return
		}
		// The call returned first, and the timer has fired: look again.
	}
}

// pause calls the engine's test hook at point p; it has none outside
// tests.
func (w *watcher) pause(p int) {
	if w.hook != nil {
		w.hook(p)
	}
}

// The points where a test can hold the watchdog or the run
// (Engine.watchHook).
const (
	pauseBeforeReset = iota
	pauseBeforeCAS
	pauseAfterPublish // in runWatched, once the attempt is published
)

// takeover carries the run on from its watched call, which overran its
// deadline or was running when the run was cancelled: as the isolated path
// does, the call times out (or the run ends cancelled), then the step ends
// and the loop goes on, on this goroutine.
func (r *run) takeover() {
	growStack(0)
	w := r.w
	h := &handOn{o: w.o}
	w.h = h
	defer h.end()
	ctx, jobs := w.ctx, w.jobs
	now := r.now()
	stop, err := r.waitJobs(ctx, jobs, r.isolate(ctx, 1), 1, now)
	stop, err = r.endJobs(ctx, jobs, stop, err)
	r.endAct(jobs)
	var res Result
	if stop, err = r.endStep(stop, "", err, w.calls); stop != "" {
		res = r.finish(ctx, stop, "", err)
	} else {
		res = r.loop(ctx)
	}
	h.send(res)
}

// stop stops the watchdog's timer at the end of the run.
func (w *watcher) stop() {
	w.timer.Stop()
	w.at.Store(0)
}
