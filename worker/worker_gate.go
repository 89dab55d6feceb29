package worker

import (
	"context"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
)

// workerGate is the engine's gate in a worker: it stops a run at its next
// step boundary when the worker drains, hands a stepped run's pauses to a
// console, re-runs an interrupted call only for tools that are safe to
// repeat, and answers approvals as --yes says.
type workerGate struct{ w *worker }

func (g workerGate) run(p engine.Pending) *workerRun {
	r, _ := g.w.runs.Load(p.Session)
	wr, _ := r.(*workerRun)
	return wr
}

// Breakpoints implements engine.Breaker: the breakpoints a run's request
// gave.
func (g workerGate) Breakpoints(session string) *engine.Breakpoints {
	if wr := g.run(engine.Pending{Session: session}); wr != nil {
		return wr.breaks
	}
	return nil
}

func (g workerGate) Stop(p engine.Pending) bool {
	wr := g.run(p)
	if wr == nil {
		return false
	}
	if g.w.draining.Load() && p.At == engine.Decide && p.ParentRun == "" && p.ToolCall == nil {
		// The step before this one is journaled whole: nothing after
		// it is written, and the run ends here, unfinished.
		wr.detached.Store(true)
		return true
	}
	return wr.remote != nil && wr.remote.Stop(p)
}

func (g workerGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	if p.Question != nil {
		return g.ask(ctx, p)
	}
	wr := g.run(p)
	switch {
	case wr == nil:
		return engine.Verdict{Action: engine.Deny}, nil
	case wr.detached.Load():
		return engine.Verdict{Action: engine.Abort}, nil
	case p.Rerun && p.ToolCall != nil:
		// A call a dead worker started: again only if that cannot hurt.
		if t, ok := wr.tools.Lookup(p.ToolCall.Name); ok && t.Repeatable {
			return engine.Verdict{Action: engine.Proceed}, nil
		}
		return engine.Verdict{Action: engine.Deny}, nil
	case wr.remote != nil:
		// A drain does not wait for a console: the run stops here, its
		// pause journaled, and the next worker asks again.
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if g.w.drain != nil {
			defer context.AfterFunc(g.w.drain, cancel)()
		}
		v, err := wr.remote.Wait(wctx, p)
		if err != nil && ctx.Err() == nil && g.w.draining.Load() {
			wr.detached.Store(true)
			return engine.Verdict{Action: engine.Abort}, nil
		}
		return v, err
	case g.w.o.Yes:
		return engine.Verdict{Action: engine.Proceed}, nil
	}
	g.w.log("session %s: tool call %s needs approval; denied (start the worker with --yes to approve, or submit with --step and answer from a console)", p.Session, p.ToolCall.Name)
	return engine.Verdict{Action: engine.Deny}, nil
}

// detachable passes events on until its run is detached by a drain; from
// then on it drops them, so the journal ends at the step boundary (with,
// at most, the next step's start, as if the process had been killed
// there) and the run stays interrupted for the next worker to continue.
// It holds events back as the journal behind it does.
type detachable struct {
	wr   *workerRun
	next engine.Releaser
}

func (d detachable) Emit(ev engine.Event) error {
	if d.wr.detached.Load() {
		return nil
	}
	d.wr.beat.observe(ev)
	return d.next.Emit(ev)
}

func (d detachable) Flush() error {
	_, err := d.Release()
	return err
}

func (d detachable) Release() ([]engine.Event, error) {
	if d.wr.detached.Load() {
		return nil, nil
	}
	return d.next.Release()
}

// steerKey is the key whose answers the run of req takes: for a run the
// request starts, the request's, journaled with the run's settings; for a
// run continued (its worker died or drained), the one journaled when it
// started, never a later request's: anyone who may submit can queue a
// request naming the run's id.
func steerKey(s *engine.Session, req bus.RunRequest, continued bool) string {
	st := s.Settings()
	if continued {
		return st.Steer
	}
	st.Steer = req.Steer
	s.UseSettings(st)
	return req.Steer
}

// steerers are the keys whose answers a run takes: its submitter's (key)
// and the operator's. A request that names no key, on a bus with no
// operator's key, takes none (noSteerer): it is never steered by whoever
// happens to answer.
func (w *worker) steerers(ctx context.Context, key string) bus.Steerers {
	var keys bus.Steerers
	if key != "" {
		keys = append(keys, key)
	}
	op, err := bus.OperatorSteerer(ctx, w.nc)
	if err != nil {
		w.log("the operator's steering key cannot be read (%v); only the submitter's answers are taken", err)
	}
	if op != "" {
		keys = append(keys, op)
	}
	if len(keys) == 0 {
		keys = bus.Steerers{noSteerer}
	}
	return keys
}

// noSteerer is a key no signature checks against.
const noSteerer = "none"

// ask waits for the answer to the run's question, sent with agentty answer
// SESSION TEXT over NATS. A drain does not wait: the run stops here, and
// the worker that continues it asks again (the question is journaled).
func (g workerGate) ask(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	g.w.log("session %s: the run asks %q; answer with: agentty answer --nats %s %s TEXT", p.Session, engine.OneLine(p.Question.Question, 120), bus.Redact(g.w.o.NATS), p.Session)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if g.w.drain != nil {
		defer context.AfterFunc(g.w.drain, cancel)()
	}
	steer := bus.Steerers{noSteerer} // a run this worker does not know: nobody's answer
	if wr := g.run(p); wr != nil {
		steer = g.w.steerers(ctx, wr.steer)
	}
	v, err := bus.AwaitAnswer(wctx, g.w.nc, p.Session, p.Question, steer)
	if err != nil && ctx.Err() == nil && g.w.draining.Load() {
		if wr := g.run(p); wr != nil {
			wr.detached.Store(true)
		}
		return engine.Verdict{Action: engine.Abort}, nil
	}
	return v, err
}
