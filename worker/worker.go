package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/gates"
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
	o      app.Options
	getenv func(string) string
	log    func(format string, a ...any)
	store  *sessions.Store
	nc     *nats.Conn
	// pub publishes the events of the runs the worker gives up on, on
	// nc; it never closes nc, which the queue and the gate share.
	pub         *bus.Sink
	queue       *bus.Queue
	cons        *bus.Consumer
	concurrency int
	// gateTimeout bounds a stepped run's wait for a console (0: forever).
	gateTimeout time.Duration

	mu     sync.Mutex
	setups map[setupKey]*app.Setup
	runs   sync.Map // session id → *workerRun, for the gate
	// slots are serve's: one taken for each request it holds (await).
	slots chan struct{}
	// draining is set when the worker is told to stop; drain is then
	// done, for the waits (a console's answer) that a drain cuts short.
	draining atomic.Bool
	drain    context.Context
	// done counts the requests acknowledged, and requeued those put back
	// on the queue (a drain, a busy session), for the log.
	done, requeued atomic.Int64
	// lost is why serve stopped taking requests on its own (its
	// connection closed for good); nil when it was told to stop.
	lost error
	// reconnected is signalled when the connection is back, to cut a
	// failing pull's backoff short (buffered: one signal waits).
	reconnected chan struct{}
	// beatNow asks for a heartbeat now (a run began or ended), as
	// reconnected is signalled.
	beatNow chan struct{}
}

// backoffLog says why taking requests failed without saying the same
// thing more than once a backoff period: the first failure is logged, the
// same error again only when its wait has grown (1 s doubling to 30 s),
// and a recovery once. It is serve's alone.
type backoffLog struct {
	last   string
	wait   time.Duration
	repeat int
}

// fail logs err as backoffLog says and waits out the current backoff, or
// until stop or wake.
func (b *backoffLog) fail(err error, log func(string, ...any), stop, wake <-chan struct{}) {
	if msg := err.Error(); msg != b.last {
		b.last, b.wait, b.repeat = msg, time.Second, 0
		log("taking a request: %v (trying again)", err)
	} else {
		b.repeat++
		b.wait = min(2*b.wait, 30*time.Second)
		if b.repeat&(b.repeat-1) == 0 { // the 1st, 2nd, 4th, 8th… repeat
			log("taking a request: %v (%d times in a row; trying again in %s)", err, b.repeat+1, b.wait)
		}
	}
	t := time.NewTimer(b.wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-stop:
	case <-wake:
	}
}

// ok notes that a request could be asked for again.
func (b *backoffLog) ok(log func(string, ...any)) {
	if b.last != "" {
		log("taking requests again")
	}
	b.last, b.wait, b.repeat = "", 0, 0
}

type setupKey struct{ model, agent string }

// workerRun is one run in progress.
type workerRun struct {
	steer  string              // the key whose answers the run takes (steerKey)
	remote engine.Gate         // the console's, for a stepped run; nil otherwise
	breaks *engine.Breakpoints // the request's, nil for none
	// beat is what the heartbeat says of the run, from when started is
	// set; cancel ends its context (agentty cancel).
	beat     beatState
	started  atomic.Bool
	cancel   context.CancelCauseFunc
	detached atomic.Bool // stopped at a step boundary by a drain
	tools    *engine.Registry
	// over is closed when the request is done with, acknowledged or put
	// back: a request of the same session waits for it (await).
	over chan struct{}
}

// serve takes requests until ctx ends, then drains: it waits for the runs
// in progress to reach a step boundary.
func (w *worker) serve(ctx context.Context) {
	slots := make(chan struct{}, max(1, w.concurrency))
	w.slots = slots
	var wg sync.WaitGroup
	var quiet backoffLog
	drain, stopDraining := context.WithCancel(context.Background())
	w.drain = drain
	stopDrain := context.AfterFunc(ctx, func() {
		w.draining.Store(true)
		stopDraining()
	})
	defer stopDrain()
	defer func() {
		w.draining.Store(true)
		stopDraining()
		for _, d := range w.cons.Held() { // came in a wait with others, never started
			w.requeue(d, "came as the worker began to drain")
		}
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
		if ctx.Err() != nil { // both were ready: draining takes nothing more
			return
		}
		n := 1 + takeFree(slots)
		ds, err := w.cons.Take(ctx, n, time.Second)
		for range n - len(ds) {
			<-slots
		}
		if remade := (*bus.ConsumerRemadeError)(nil); errors.As(err, &remade) {
			w.log("%v", err)
			err = nil
		}
		if err != nil {
			if errors.Is(err, nats.ErrConnectionClosed) || errors.As(err, new(*bus.DeniedError)) {
				w.lost = err
				if !errors.As(err, new(*bus.DeniedError)) {
					w.lost = fmt.Errorf("the connection to the NATS server is closed: %w", err)
				}
				return
			}
			quiet.fail(err, w.log, ctx.Done(), w.reconnected)
		} else if w.nc == nil || w.nc.IsConnected() { // a wait that timed out while the server is gone is no recovery
			quiet.ok(w.log)
		}
		for _, d := range ds {
			w.start(ctx, d, slots, &wg)
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// handBackDelay is how long a request waits on the queue when this worker
// could not do it now (its session busy, its journal unwritable).
const handBackDelay = 5 * time.Second

// handle carries out one request. free gives its slot back: once the run
// is over, what is left (the session's meta, its writer's lease, the
// acknowledgement: the bus's bookkeeping, one write after another) goes on
// while the next request is taken (issue 42).
func (w *worker) handle(d *bus.Delivery, free func()) {
	// A drain stops the run at a step, not mid-step; agentty cancel at once.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	if w.refused(ctx, d) {
		return
	}
	stop := d.KeepAlive()
	defer stop()
	req := d.Req
	wr := &workerRun{cancel: cancel, over: make(chan struct{})}
	wait := time.Now().Add(bus.LeaseTTL + 5*time.Second)
	if !w.await(ctx, d, wr, wait) {
		return
	}
	defer func() {
		w.runs.Delete(req.Session)
		close(wr.over)
	}()
	journal, s, past, ok := w.openWaiting(d, wait)
	if !ok {
		return
	}
	defer journal.Close()
	run, goOn := w.resumable(ctx, d, journal, s, past)
	if !goOn {
		return
	}
	wr.steer = steerKey(s, req, run != "")
	st, err := w.setupFor(ctx, req)
	if err != nil {
		w.giveUp(ctx, d, journal, s, req, fmt.Sprintf("the worker cannot run this request: %v", err))
		return
	}
	if d.GiveUp != "" {
		w.giveUp(ctx, d, journal, s, req, d.GiveUp)
		return
	}
	wr.tools = st.Registry()
	wr.beat.b = bus.RunBeat{Session: req.Session, Request: req.ID, Task: engine.OneLine(req.Task, 120), Agent: req.Agent, State: "starting", Since: time.Now().UTC()}
	wr.started.Store(true)
	w.beatSoon()
	// The run is over once the engine returns: the heartbeat stops naming it
	// (top, agentty cancel) while its bookkeeping goes on.
	ended := sync.OnceFunc(func() { wr.started.Store(false); w.beatSoon(); free() })
	defer ended()
	if len(req.Breaks) > 0 {
		bs, err := gates.ParseBreaks(req.Breaks)
		if err != nil {
			w.giveUp(ctx, d, journal, s, req, err.Error())
			return
		}
		wr.breaks = &bs
	}
	if req.Step || wr.breaks != nil {
		g := bus.NewRemoteGate(w.nc, req.Session, req.Step, w.gateTimeout)
		g.Steer = w.steerers(ctx, wr.steer)
		wr.remote = g
	}
	sink, _ := st.WithTrace(journal).(engine.Releaser)
	sinks := engine.Sinks{detachable{wr, sink}}
	var res engine.Result
	if run != "" {
		w.log("session %s: continuing %s, interrupted (delivery %d)", req.Session, run, d.Attempt)
		if st.Trace != nil {
			st.Trace.Prime(runEvents(past, run))
		}
		res = st.Engine.Continue(ctx, s, sinks)
	} else {
		res = st.Engine.RunRequest(ctx, s, req.Task, req.ID, sinks)
	}
	if err := st.FlushTraces(context.Background()); err != nil {
		w.log("session %s: the run's spans: %v", req.Session, err)
	}
	ended()
	w.finish(d, journal, s, wr, res)
}

// runEvents are the events of past from run's start on: the run's and its
// sub-runs' (a session runs one run at a time).
func runEvents(past []engine.Event, run string) []engine.Event {
	for i, ev := range past {
		if ev.Run == run && ev.Kind == engine.KindRunStarted {
			return past[i:]
		}
	}
	return nil
}

// openWaiting opens the request's session for writing, waiting until wait
// while another process writes it; when it cannot, it puts the request
// back (or drops it) and says false.
func (w *worker) openWaiting(d *bus.Delivery, wait time.Time) (*sessions.Journal, *engine.Session, []engine.Event, bool) {
	req := d.Req
	journal, s, past, err := w.open(req)
	for errors.Is(err, sessions.ErrLocked) && time.Now().Before(wait) && !w.draining.Load() {
		time.Sleep(time.Second)
		journal, s, past, err = w.open(req)
	}
	switch {
	case errors.Is(err, sessions.ErrLocked):
		w.requeue(d, err.Error())
		return nil, nil, nil, false
	case errors.As(err, new(*sessions.WriteError)) || bus.Unavailable(err):
		w.log("session %s: %v; the request goes back on the queue", req.Session, err)
		d.HandBack(handBackDelay)
		return nil, nil, nil, false
	case err != nil:
		w.log("session %s: %v; the request is dropped", req.Session, err)
		d.Drop(err.Error())
		return nil, nil, nil, false
	}
	return journal, s, past, true
}

// resumable says whether the request's run is to be carried out now, and
// the run to continue ("" for a new one). It is not when the request was
// done already (acknowledged now), when its run cannot be continued (given
// up), or when another run of the session is unfinished (handed back).
func (w *worker) resumable(ctx context.Context, d *bus.Delivery, journal *sessions.Journal, s *engine.Session, past []engine.Event) (string, bool) {
	req := d.Req
	run, finished := app.RequestRun(past, req.ID)
	switch {
	case finished:
		w.log("session %s: request %s was done already, in %s (by a worker that stopped before it said so)", req.Session, req.ID, run)
		w.ack(d, journal)
		return run, false
	case run != "" && s.LastRun().ID != run:
		// Its run was cut off, and the session went on past it (another
		// writer took the session after this request's worker stalled
		// past its lease): the run cannot be continued in place. A run
		// of its own says so, for whoever waits for the request.
		w.giveUp(ctx, d, journal, s, req, fmt.Sprintf("its run %s was left unfinished and the session went on without it (%s); not tried again", run, s.LastRun().ID))
		return run, false
	case run == "" && s.Interrupted():
		// Another run of the session (a console's, a crashed one, another
		// request's) is unfinished: this request's run would come after it.
		if d.GiveUp != "" {
			w.giveUp(ctx, d, journal, s, req, fmt.Sprintf("the session's run %s stayed unfinished, and this request's run would come after it; %s", s.LastRun().ID, d.GiveUp))
			return run, false
		}
		w.log("session %s: its run %s is unfinished; request %s waits", req.Session, s.LastRun().ID, req.ID)
		journal.Close()
		d.HandBack(handBackDelay)
		return run, false
	}
	return run, true
}

// finish acknowledges the request of a run that ended, or puts it back: a
// drain stopped the run, or its journal could not be written to its end.
func (w *worker) finish(d *bus.Delivery, journal *sessions.Journal, s *engine.Session, wr *workerRun, res engine.Result) {
	req := d.Req
	switch {
	case wr.detached.Load():
		journal.DiscardStep() // the next step's start: the next worker makes it again
		journal.Close()
		w.requeue(d, fmt.Sprintf("stopped at step %d to drain", s.Steps))
	case errors.Is(res.Err, sessions.ErrLocked):
		w.log("session %s: %v; the request goes back on the queue", req.Session, res.Err)
		journal.Close()
		d.HandBack(handBackDelay)
	case errors.As(res.Err, new(*sessions.WriteError)):
		// Not journaled to its end: what was not written is dropped (the
		// run's error end among it), so another try continues the run.
		w.log("session %s: %v; the run is unfinished and the request goes back on the queue", req.Session, res.Err)
		journal.DropUnwritten()
		journal.Close()
		d.HandBack(handBackDelay)
	default:
		w.ack(d, journal)
	}
}

// requeue puts d's request at the back of the queue as a new message,
// saying why; if that fails, it hands it back (a delivery).
func (w *worker) requeue(d *bus.Delivery, why string) {
	if err := d.Requeue(context.Background(), w.queue); err != nil {
		w.log("session %s: %s; requeueing the request: %v (handed back instead)", d.Req.Session, why, err)
		d.HandBack(handBackDelay)
		return
	}
	w.requeued.Add(1)
	w.log("session %s: %s; the request is back on the queue", d.Req.Session, why)
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
	eng := app.NewGiveUpEngine()
	var sink engine.Sink = journal
	if w.pub != nil { // published as every run's events are
		defer w.pub.Close(2 * time.Second)
		sink = engine.Sinks{journal, w.pub}
	}
	if res := eng.GiveUp(ctx, s, req.Task, req.ID, reason, sink); res.Err != nil && res.Err.Error() != reason {
		w.log("session %s: journaling why: %v", req.Session, res.Err)
	}
	w.ack(d, journal)
}

// open opens the request's session for writing, making it if it is new,
// and returns its events.
func (w *worker) open(req bus.RunRequest) (*sessions.Journal, *engine.Session, []engine.Event, error) {
	j, l, err := w.store.OpenWriter(req.Session)
	if errors.Is(err, sessions.ErrNotFound) {
		if j, err = w.store.CreateID(req.Session); err != nil {
			return nil, nil, nil, err
		}
		return j, engine.NewSession(req.Session), nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return j, l.Session, l.Events, nil
}

// setupFor returns the setup for the request's model and agent, made on
// first use and kept for the worker's life.
func (w *worker) setupFor(ctx context.Context, req bus.RunRequest) (*app.Setup, error) {
	if strings.HasPrefix(req.Model, "script:") && req.Model != w.o.Model {
		// A file on this machine, named by whoever can submit: not theirs to read.
		return nil, fmt.Errorf("a submitted run may not name a script model (%q); the worker's own --model may", req.Model)
	}
	key := setupKey{cmp.Or(req.Model, w.o.Model), cmp.Or(req.Agent, w.o.Agent)}
	w.mu.Lock()
	defer w.mu.Unlock()
	if st, ok := w.setups[key]; ok {
		return st, nil
	}
	o := w.o
	o.Model, o.Agent = key.model, key.agent
	st, err := app.Build(ctx, o, workerGate{w}, w.getenv)
	if err != nil {
		return nil, err
	}
	for _, n := range st.Notices {
		w.log("warning: %s", n)
	}
	if w.setups == nil {
		w.setups = map[setupKey]*app.Setup{}
	}
	w.setups[key] = st
	return st, nil
}
