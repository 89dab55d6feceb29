package bus

import (
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

// Queue is the work queue on a JetStream server: one stream per
// partition (partition.go).
type Queue struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	layout  Layout
	streams []jetstream.Stream // by partition
}

// OpenQueue finds the run queue's streams, or, for one partition, makes
// it: work-queue retention (a request is removed once a worker
// acknowledges it), file storage, the fleet's replicas. A stream made
// beforehand (with three replicas, say) is used as it is. A partition's
// stream that is missing is the operator's to make (missingPartition).
func OpenQueue(ctx context.Context, nc *nats.Conn) (*Queue, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	q := &Queue{nc: nc, js: js}
	if q.layout, err = fleetLayout(ctx, nc, js); err != nil {
		return nil, noJetStream(nc, err)
	}
	for p := range q.layout.N() {
		name := q.layout.RunsStream(p)
		var st jetstream.Stream
		err = retryWithin(ctx, nc, func(ctx context.Context) (err error) { st, err = js.Stream(ctx, name); return err }) // through an election
		if errors.Is(err, jetstream.ErrStreamNotFound) && q.layout.split() {
			err = missingPartition(name, q.layout)
		} else if errors.Is(err, jetstream.ErrStreamNotFound) {
			st, err = js.CreateStream(ctx, runsStreamConfig(fleetReplicas(ctx, js)))
			if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
				st, err = js.Stream(ctx, RunsStream) // another process made it first
			}
		}
		if err != nil {
			return nil, noJetStream(nc, fmt.Errorf("nats: the run queue %s: %w", name, err))
		}
		q.streams = append(q.streams, st)
	}
	return q, nil
}

// Layout is the partitions the queue was opened with.
func (q *Queue) Layout() Layout { return q.layout }

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
		ack, err = q.js.Publish(actx, q.layout.SessionSubject(pool, req.Session), b, jetstream.WithMsgID(req.ID))
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
	for p, st := range q.streams {
		for _, f := range q.layout.poolFilters(pool, p) {
			info, err := st.Info(ctx, jetstream.WithSubjectFilter(f))
			if err != nil {
				return 0, err
			}
			for _, c := range info.State.Subjects {
				n += c
			}
		}
	}
	return n, nil
}

// Takers returns how many requests of pool's workers are waiting for work
// and how many runs they hold; ok is false when no worker ever served the
// pool. A request submitted to a pool with neither waits for a worker.
func (q *Queue) Takers(ctx context.Context, pool string) (waiting, running int, ok bool, err error) {
	for _, st := range q.streams {
		c, err := st.Consumer(ctx, "workers-"+Token(pool))
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			continue
		}
		if err != nil {
			return 0, 0, false, err
		}
		info, err := c.Info(ctx)
		if err != nil {
			return 0, 0, false, err
		}
		waiting, running, ok = waiting+info.NumWaiting, running+info.NumAckPending, true
	}
	return waiting, running, ok, nil
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
	Bad string
	// Misplaced says why a request published to a partition that does
	// not hold its session is refused (its session journals it).
	Misplaced string
	// Partition is the queue's partition it came from.
	Partition int
	msg       jetstream.Msg
	ackWait   time.Duration
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
