package bus

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The work queue: run requests on the stream RunsStream, one subject per
// pool (agentty.runs.<pool>), each taken by one worker of the pool.
const (
	RunsStream  = "AGENTTY_RUNS"
	runsPrefix  = "agentty.runs"
	DefaultPool = "default"
)

// RunRequest is a run to do: a task in a session, as `agentty submit` puts
// it on the queue. The submitter picks the session's id, so that it can
// follow the run before any worker has it.
type RunRequest struct {
	// ID names the request: a second submit with the same ID within the
	// stream's de-duplication window is dropped by the server, and the run
	// that carries it out is marked with it (engine.RunStarted.Request),
	// so a worker taking the request again finds that run.
	ID      string `json:"id"`
	Session string `json:"session"`
	Task    string `json:"task"`
	Agent   string `json:"agent,omitempty"`
	Model   string `json:"model,omitempty"`
	// Step asks the worker to pause before each decide and tool call and
	// ask a console watching the session (agentty.gate.<session>).
	Step bool `json:"step,omitempty"`
	// Breaks are breakpoints' conditions (engine.ParseBreak): the run
	// pauses where one holds and asks the console, as Step does.
	Breaks    []string  `json:"breaks,omitempty"`
	Submitted time.Time `json:"submitted"`
	// Steer is the submitter's public steering key (Signer.Public): the
	// run's pauses and questions take answers signed by it, or by the
	// operator's; with none, by the operator's alone.
	Steer string `json:"steer,omitempty"`
}

// RunSubject is the subject of pool's run requests; each is published
// under it, on the subject of its session (SessionSubject), so that a
// session's requests can be found in the order they were queued.
func RunSubject(pool string) string { return runsPrefix + "." + Token(pool) }

// SessionSubject is the subject of pool's run requests for session.
func SessionSubject(pool, session string) string { return RunSubject(pool) + "." + Token(session) }

// poolFilters are the subjects a pool's consumer takes: its sessions'
// requests, and any published on the pool's own subject (by an older
// submit, or by hand).
func poolFilters(pool string) []string { return []string{RunSubject(pool), RunSubject(pool) + ".>"} }

// Queue is the work queue on a JetStream server.
type Queue struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
}

// OpenQueue finds the stream RunsStream, or makes it: work-queue
// retention (a request is removed once a worker acknowledges it), file
// storage, one replica. A stream made beforehand (with three replicas, say)
// is used as it is.
func OpenQueue(ctx context.Context, nc *nats.Conn) (*Queue, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	var st jetstream.Stream
	err = retryWithin(ctx, nc, func(ctx context.Context) (err error) { st, err = js.Stream(ctx, RunsStream); return err }) // through an election
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		st, err = js.CreateStream(ctx, runsStreamConfig(fleetReplicas(ctx, js)))
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			st, err = js.Stream(ctx, RunsStream) // another process made it first
		}
	}
	if err != nil {
		return nil, noJetStream(nc, fmt.Errorf("nats: the run queue %s: %w", RunsStream, err))
	}
	return &Queue{nc: nc, js: js, stream: st}, nil
}

// noJetStream says what to do when the server has no JetStream.
func noJetStream(nc *nats.Conn, err error) error {
	if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) || errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("the NATS server at %s has no JetStream: start it with -js, or use agentty serve (%w)", Redact(nc.ConnectedUrl()), err)
	}
	return err
}

// Submit puts req on pool's queue, with req.ID as the message id. dup is
// set when the server had it already. A publish that fails for a while (a
// leader election on a cluster, a reconnect) is tried again, for up to
// retryFor or until ctx ends: the message id makes a try whose answer was
// lost count once.
func (q *Queue) Submit(ctx context.Context, pool string, req RunRequest) (dup bool, err error) {
	b, err := json.Marshal(req)
	if err != nil {
		return false, err
	}
	var ack *jetstream.PubAck
	err = retry(func(actx context.Context) error {
		actx, cancel := context.WithCancel(actx)
		defer context.AfterFunc(ctx, cancel)()
		ack, err = q.js.Publish(actx, SessionSubject(pool, req.Session), b, jetstream.WithMsgID(req.ID))
		if ctx.Err() != nil {
			return fmt.Errorf("stopped trying: %v", ctx.Err()) // not transient (%v): given up
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("nats: submit: the server did not take the request (%w); nothing was queued twice: submit again to try once more", err)
	}
	return ack.Duplicate, nil
}

// Pending returns the number of requests waiting in pool's queue (those
// taken but not yet acknowledged included).
func (q *Queue) Pending(ctx context.Context, pool string) (uint64, error) {
	var n uint64
	for _, f := range poolFilters(pool) {
		info, err := q.stream.Info(ctx, jetstream.WithSubjectFilter(f))
		if err != nil {
			return 0, err
		}
		for _, c := range info.State.Subjects {
			n += c
		}
	}
	return n, nil
}

// Takers returns how many requests of pool's workers are waiting for work
// and how many runs they hold; ok is false when no worker ever served the
// pool. A request submitted to a pool with neither waits for a worker.
func (q *Queue) Takers(ctx context.Context, pool string) (waiting, running int, ok bool, err error) {
	c, err := q.stream.Consumer(ctx, "workers-"+Token(pool))
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	info, err := c.Info(ctx)
	if err != nil {
		return 0, 0, false, err
	}
	return info.NumWaiting, info.NumAckPending, true, nil
}

// WorkerConfig says how a pool's workers take requests.
type WorkerConfig struct {
	Pool string
	// MaxDeliver is how many times a request is handed out before it is
	// given up (default 5); the worker that gets it once more ends its
	// run with the reason (Delivery.GiveUp). A consumer made beforehand
	// without a limit reads as 0: never given up.
	MaxDeliver int
	// AckWait is how long a worker may stay silent about a request before
	// the server hands it to another (default 30 s; a Delivery signals
	// progress every third of it while its run goes on).
	AckWait time.Duration
}

// Consumer returns the pool's one durable consumer, shared by its workers:
// each request goes to one of them at a time. The first worker makes it
// with cfg; a consumer that exists is used with its own settings (they
// are the server's, for every worker of the pool), and what it has is in
// the Consumer's Config, with a note when it differs from cfg.
func (q *Queue) Consumer(ctx context.Context, cfg WorkerConfig) (*Consumer, error) {
	pool := cfg.Pool
	if pool == "" {
		pool = DefaultPool
	}
	if cfg.MaxDeliver <= 0 {
		cfg.MaxDeliver = 5
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = 30 * time.Second
	}
	name := "workers-" + Token(pool)
	if c, err := q.stream.Consumer(ctx, name); err == nil {
		info := c.CachedInfo()
		if info.Config.FilterSubject == RunSubject(pool) {
			// Made before requests had their session's subject: it
			// takes those too from now on, its settings kept.
			up := info.Config
			up.FilterSubject, up.FilterSubjects = "", poolFilters(pool)
			if c, err = q.stream.CreateOrUpdateConsumer(ctx, up); err != nil {
				return nil, fmt.Errorf("nats: the workers of pool %s: %w", pool, err)
			}
			info = c.CachedInfo()
		}
		have := WorkerConfig{Pool: pool, MaxDeliver: max(info.Config.MaxDeliver-1, 0), AckWait: info.Config.AckWait}
		out := &Consumer{c: c, cfg: have, q: q}
		if have.MaxDeliver != cfg.MaxDeliver || have.AckWait != cfg.AckWait {
			out.Note = fmt.Sprintf("pool %s's workers share the settings of the first: --max-deliver %d --ack-wait %s (not %d and %s)", pool, have.MaxDeliver, have.AckWait, cfg.MaxDeliver, cfg.AckWait)
		}
		return out, nil
	} else if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("nats: the workers of pool %s: %w", pool, err)
	}
	c, err := q.stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:        name,
		Description:    "agentty workers of pool " + pool,
		FilterSubjects: poolFilters(pool),
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        cfg.AckWait,
		// One more than MaxDeliver: that delivery ends the run with why.
		MaxDeliver:    cfg.MaxDeliver + 1,
		MaxAckPending: -1,
	})
	if err != nil {
		return nil, fmt.Errorf("nats: the workers of pool %s: %w", pool, err)
	}
	return &Consumer{c: c, cfg: cfg, q: q}, nil
}

// Consumer hands out a pool's requests.
type Consumer struct {
	c   jetstream.Consumer
	cfg WorkerConfig
	q   *Queue
	// Note says when the pool's settings are not the ones asked for.
	Note string
}

// Config is the pool's settings, as the server has them.
func (c *Consumer) Config() WorkerConfig { return c.cfg }

// Next waits for the next request, up to wait; nil, nil when none came.
func (c *Consumer) Next(ctx context.Context, wait time.Duration) (*Delivery, error) {
	m, err := c.c.Next(jetstream.FetchMaxWait(wait))
	if errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jetstream.ErrNoMessages) {
		if c.q != nil {
			return nil, denied(c.q.nc, "$JS.API.CONSUMER.MSG.NEXT."+RunsStream, "take runs (it is not a worker)")
		}
		return nil, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		if remade, rerr := c.remake(ctx); rerr == nil && remade {
			return nil, &ConsumerRemadeError{Pool: c.cfg.Pool, Name: c.name(), Cause: err}
		}
		return nil, err
	}
	return c.delivery(m), nil
}

// Take returns up to n requests: those waiting now, without waiting, or
// when none is, the next to come within wait (as Next). A worker with n
// slots free takes n requests with one question to the server, not n one
// after another.
func (c *Consumer) Take(ctx context.Context, n int, wait time.Duration) ([]*Delivery, error) {
	if n > 1 {
		if batch, err := c.c.FetchNoWait(n); err == nil {
			var out []*Delivery
			for m := range batch.Messages() {
				out = append(out, c.delivery(m))
			}
			if len(out) > 0 {
				return out, nil
			}
		}
	}
	d, err := c.Next(ctx, wait)
	if d == nil {
		return nil, err
	}
	return []*Delivery{d}, err
}

// delivery is the request m, as a worker is handed it.
func (c *Consumer) delivery(m jetstream.Msg) *Delivery {
	d := &Delivery{msg: m, ackWait: c.cfg.AckWait}
	md, err := m.Metadata()
	if err == nil {
		d.Attempt = int(md.NumDelivered)
	}
	if c.cfg.MaxDeliver > 0 && d.Attempt > c.cfg.MaxDeliver { // 0: a consumer made without a limit
		d.GiveUp = fmt.Sprintf("the request was handed to workers %d times and never finished (workers died or were stopped mid-run); given up", c.cfg.MaxDeliver)
	}
	if err := json.Unmarshal(m.Data(), &d.Req); err != nil || d.Req.Session == "" {
		d.Bad = fmt.Sprintf("not a run request (%v): %.80q", err, m.Data())
	}
	return d
}

// ConsumerRemadeError is Next's error when the pool's consumer was gone
// (deleted on the server) and was made again: the worker takes requests
// from the new one at once.
type ConsumerRemadeError struct {
	Pool, Name string
	Cause      error
}

func (e *ConsumerRemadeError) Error() string {
	return fmt.Sprintf("pool %s's consumer %s was gone from the server (%v); made it again with the pool's settings", e.Pool, e.Name, e.Cause)
}

func (c *Consumer) name() string { return "workers-" + Token(cmp.Or(c.cfg.Pool, DefaultPool)) }

// remake makes the pool's consumer again when the server has none by its
// name; remade says it did.
func (c *Consumer) remake(ctx context.Context) (remade bool, err error) {
	if c.q == nil {
		return false, nil
	}
	_, err = c.q.stream.Consumer(ctx, c.name())
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return false, err
	}
	n, err := c.q.Consumer(ctx, c.cfg)
	if err != nil {
		return false, err
	}
	c.c = n.c
	return true, nil
}

// Delivery is a request handed to this worker.
type Delivery struct {
	Req RunRequest
	// Attempt counts the times it was handed out, this one included.
	Attempt int
	// GiveUp is set, with why, when it was handed out too often: the run
	// is ended with the reason, not tried again.
	GiveUp string
	// Bad says why the message is no run request (it is dropped).
	Bad     string
	msg     jetstream.Msg
	ackWait time.Duration
}

// KeepAlive tells the server the request is being worked on, every third
// of the ack wait, until the returned stop is called.
func (d *Delivery) KeepAlive() (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(d.ackWait / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				d.msg.InProgress()
			}
		}
	}()
	return func() { close(done) }
}

// Done acknowledges the request, waiting for the server to confirm it: it
// is off the queue for good.
func (d *Delivery) Done(ctx context.Context) error { return d.msg.DoubleAck(ctx) }

// Drop removes the request from the queue without doing it.
func (d *Delivery) Drop(reason string) error { return d.msg.TermWithReason(reason) }

// HandBack puts the request back on the queue, for any worker to take
// after delay. It counts as a delivery.
func (d *Delivery) HandBack(delay time.Duration) error { return d.msg.NakWithDelay(delay) }

// Requeue puts the request at the back of the queue as a new message and
// takes this one off: a drained worker's request, which must not count
// toward the deliveries after which it is given up. The new message is
// stored (acknowledged by the server) before the old one is removed; a
// worker that dies between the two leaves both, and the second finds its
// run done.
func (d *Delivery) Requeue(ctx context.Context, q *Queue) error {
	b, err := json.Marshal(d.Req)
	if err != nil {
		return err
	}
	if _, err := q.js.Publish(ctx, d.msg.Subject(), b, jetstream.WithMsgID(d.Req.ID+"/"+strconv.FormatInt(time.Now().UnixNano(), 36))); err != nil {
		return fmt.Errorf("nats: requeue: %w", err)
	}
	return d.msg.DoubleAck(ctx)
}
