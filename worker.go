package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
	"github.com/nats-io/nats.go"
)

// worker takes run requests from a pool's queue and carries them out with
// its own engine, tools and config, journaling to the store (JetStream's,
// with --nats). A request is acknowledged once its run has finished and is
// journaled; a worker that dies mid-run leaves the request unacknowledged,
// the server hands it to another worker, and that one continues the
// interrupted run from the journal. Stopping (ctx) drains: runs stop at
// their next step boundary, unfinished, and their requests go back on the
// queue at once.
type worker struct {
	o           options
	getenv      func(string) string
	log         func(format string, a ...any)
	store       *sessions.Store
	nc          *nats.Conn
	cons        *bus.Consumer
	concurrency int
	// gateTimeout bounds a stepped run's wait for a console (0: forever).
	gateTimeout time.Duration

	mu     sync.Mutex
	setups map[setupKey]*setup
	runs   sync.Map // session id → *workerRun, for the gate
	// draining is set when the worker is told to stop.
	draining atomic.Bool
	// done counts the requests acknowledged, for tests and the log.
	done atomic.Int64
}

type setupKey struct{ model, agent string }

// workerRun is one run in progress.
type workerRun struct {
	remote   engine.Gate // the console's, for a stepped run; nil otherwise
	detached atomic.Bool // stopped at a step boundary by a drain
	tools    *engine.Registry
}

// serve takes requests until ctx ends, then drains: it waits for the runs
// in progress to reach a step boundary.
func (w *worker) serve(ctx context.Context) {
	slots := make(chan struct{}, max(1, w.concurrency))
	var wg sync.WaitGroup
	stopDrain := context.AfterFunc(ctx, func() { w.draining.Store(true) })
	defer stopDrain()
	defer func() {
		w.draining.Store(true)
		wg.Wait()
		w.mu.Lock()
		for _, st := range w.setups {
			st.Close()
		}
		w.mu.Unlock()
	}()
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		d, err := w.cons.Next(ctx, time.Second)
		if err != nil {
			w.log("taking a request: %v", err)
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
		}
		if d == nil {
			<-slots
			if ctx.Err() != nil {
				return
			}
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			w.handle(d)
		})
	}
}

// handle carries out one request.
func (w *worker) handle(d *bus.Delivery) {
	ctx := context.Background() // a drain stops the run at a step, not mid-step
	if d.Bad != "" {
		w.log("dropped a message: %s", d.Bad)
		d.Drop(d.Bad)
		return
	}
	stop := d.KeepAlive()
	defer stop()
	req := d.Req
	journal, s, err := w.open(req)
	if err != nil {
		// Most likely another worker has the session: it will finish
		// the request. Anything else would fail again: say why, drop.
		if errors.Is(err, sessions.ErrLocked) {
			w.log("session %s: %v; leaving the request to its writer", req.Session, err)
			return
		}
		w.log("session %s: %v; the request is dropped", req.Session, err)
		d.Drop(err.Error())
		return
	}
	defer journal.Close()
	runs := topLevelRuns(s)
	if runs > req.After && !s.Interrupted() {
		w.log("session %s: request %s was done already (by a worker that stopped before it said so)", req.Session, req.ID)
		w.ack(d, journal)
		return
	}
	st, err := w.setupFor(ctx, req)
	if err != nil {
		w.giveUp(ctx, d, journal, s, req, fmt.Sprintf("the worker cannot run this request: %v", err))
		return
	}
	if d.GiveUp != "" {
		w.giveUp(ctx, d, journal, s, req, d.GiveUp)
		return
	}
	wr := &workerRun{tools: st.registry}
	if req.Step {
		wr.remote = bus.NewRemoteGate(w.nc, req.Session, true, w.gateTimeout)
	}
	w.runs.Store(req.Session, wr)
	defer w.runs.Delete(req.Session)
	sink, _ := st.withTrace(journal).(engine.Releaser)
	sinks := engine.Sinks{detachable{wr, sink}}
	var res engine.Result
	if s.Interrupted() {
		w.log("session %s: continuing its interrupted run (delivery %d)", req.Session, d.Attempt)
		res = st.engine.Continue(ctx, s, sinks)
	} else {
		res = st.engine.Run(ctx, s, req.Task, sinks)
	}
	if wr.detached.Load() {
		journal.Close()
		w.log("session %s: stopped at step %d to drain; the request goes back on the queue", req.Session, s.Steps)
		d.HandBack()
		return
	}
	if res.Err != nil && errors.Is(res.Err, sessions.ErrLocked) {
		w.log("session %s: %v; leaving the request to the other writer", req.Session, res.Err)
		return
	}
	w.ack(d, journal)
}

// ack closes the journal (everything is written) and acknowledges.
func (w *worker) ack(d *bus.Delivery, journal *sessions.Journal) {
	if err := journal.Close(); err != nil {
		w.log("session %s: %v; the request stays on the queue", d.Req.Session, err)
		return
	}
	if err := d.Done(context.Background()); err != nil {
		w.log("session %s: acknowledging the request: %v (it may be handed out again; the journal shows it done)", d.Req.Session, err)
		return
	}
	w.done.Add(1)
}

// giveUp ends the request's run with reason, journaled, and takes the
// request off the queue.
func (w *worker) giveUp(ctx context.Context, d *bus.Delivery, journal *sessions.Journal, s *engine.Session, req bus.RunRequest, reason string) {
	w.log("session %s: %s", req.Session, reason)
	eng := engine.New(engine.Config{Model: noModel{}}) // nothing is asked: the run ends here
	if res := eng.GiveUp(ctx, s, req.Task, reason, journal); res.Err != nil && res.Err.Error() != reason {
		w.log("session %s: journaling why: %v", req.Session, res.Err)
	}
	w.ack(d, journal)
}

// open opens the request's session for writing, making it if it is new.
func (w *worker) open(req bus.RunRequest) (*sessions.Journal, *engine.Session, error) {
	j, l, err := w.store.OpenWriter(req.Session)
	if errors.Is(err, sessions.ErrNotFound) {
		if j, err = w.store.CreateID(req.Session); err != nil {
			return nil, nil, err
		}
		return j, engine.NewSession(req.Session), nil
	}
	if err != nil {
		return nil, nil, err
	}
	return j, l.Session, nil
}

// setupFor returns the setup for the request's model and agent, made on
// first use and kept for the worker's life.
func (w *worker) setupFor(ctx context.Context, req bus.RunRequest) (*setup, error) {
	key := setupKey{cmp.Or(req.Model, w.o.model), cmp.Or(req.Agent, w.o.agent)}
	w.mu.Lock()
	defer w.mu.Unlock()
	if st, ok := w.setups[key]; ok {
		return st, nil
	}
	o := w.o
	o.model, o.agent = key.model, key.agent
	st, err := build(ctx, o, workerGate{w}, w.getenv)
	if err != nil {
		return nil, err
	}
	for _, n := range st.notices {
		w.log("warning: %s", n)
	}
	if w.setups == nil {
		w.setups = map[setupKey]*setup{}
	}
	w.setups[key] = st
	return st, nil
}

// topLevelRuns counts the session's runs that are not sub-runs.
func topLevelRuns(s *engine.Session) int { return s.Runs }

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
	wr := g.run(p)
	switch {
	case wr == nil:
		return engine.Verdict{Action: engine.Deny}, nil
	case wr.detached.Load():
		return engine.Verdict{Action: engine.Abort}, nil
	case p.Rerun && p.ToolCall != nil:
		// A call a dead worker started: again only if that cannot hurt.
		if t, ok := wr.tools.Lookup(p.ToolCall.Name); ok && t.Inline {
			return engine.Verdict{Action: engine.Proceed}, nil
		}
		return engine.Verdict{Action: engine.Deny}, nil
	case wr.remote != nil:
		return wr.remote.Wait(ctx, p)
	case g.w.o.yes:
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

// noModel is the model of an engine that only ends runs.
type noModel struct{}

func (noModel) Decide(context.Context, *engine.Request) (engine.Decision, error) {
	return engine.Decision{}, errors.New("no model")
}
