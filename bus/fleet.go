package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentty/agentty/engine"
)

// The fleet: each worker puts a heartbeat in the bucket WorkersBucket, its
// runs with it, every BeatEvery; a key not renewed within BeatTTL (a
// worker killed) expires. agentty top reads the bucket and the queue, and
// agentty cancel asks on CancelSubject whoever runs a session to stop it.

// WorkersBucket is the key-value bucket of the workers' heartbeats.
const WorkersBucket = "AGENTTY_WORKERS"

// BeatEvery is how often a worker says it is alive; BeatTTL how long its
// heartbeat lasts unless renewed.
const (
	BeatEvery = 2 * time.Second
	BeatTTL   = 10 * time.Second
)

// WorkerBeat is a worker's heartbeat: who it is, what it serves, and its
// runs now.
type WorkerBeat struct {
	ID          string    `json:"id"`
	Host        string    `json:"host"`
	PID         int       `json:"pid"`
	Pool        string    `json:"pool"`
	Model       string    `json:"model,omitempty"`
	Concurrency int       `json:"concurrency"`
	Started     time.Time `json:"started"`
	Beat        time.Time `json:"beat"`
	Done        int64     `json:"done"` // requests it finished
	Runs        []RunBeat `json:"runs"`
}

// RunBeat is one run of a worker, as it was at the heartbeat.
type RunBeat struct {
	Session string `json:"session"`
	Request string `json:"request"`
	Run     string `json:"run,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Task    string `json:"task,omitempty"`
	Step    int    `json:"step"`
	// State is deciding, acting, paused, asking (the person), starting.
	State string    `json:"state"`
	Since time.Time `json:"since"` // when the run started here
	// Paused is when the run began to wait for an answer (a pause, a
	// question) that has not come; zero when it waits for none.
	Paused    time.Time    `json:"paused,omitzero"`
	Usage     engine.Usage `json:"usage"` // the session's, so far
	LastError string       `json:"last_error,omitempty"`
}

// Fleet reads and writes the workers' heartbeats.
type Fleet struct {
	kv jetstream.KeyValue
}

// OpenFleet finds the workers' bucket or makes it.
func OpenFleet(ctx context.Context, nc *nats.Conn) (*Fleet, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	kv, err := js.KeyValue(ctx, WorkersBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, workersBucketConfig(fleetReplicas(ctx, js)))
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, WorkersBucket)
		}
	}
	if err != nil {
		return nil, noJetStream(nc, fmt.Errorf("nats: the workers' bucket %s: %w", WorkersBucket, err))
	}
	return &Fleet{kv: kv}, nil
}

// Beat puts b as its worker's heartbeat.
func (f *Fleet) Beat(ctx context.Context, b WorkerBeat) error {
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	_, err = f.kv.Put(ctx, Token(b.ID), data)
	return err
}

// Gone removes a worker's heartbeat (it stops).
func (f *Fleet) Gone(ctx context.Context, id string) error {
	return f.kv.Delete(ctx, Token(id))
}

// Workers returns the workers alive, by id.
func (f *Fleet) Workers(ctx context.Context) ([]WorkerBeat, error) {
	keys, err := f.kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	defer keys.Stop()
	var out []WorkerBeat
	for k := range keys.Keys() {
		e, err := f.kv.Get(ctx, k)
		if err != nil {
			continue // expired meanwhile
		}
		var b WorkerBeat
		if json.Unmarshal(e.Value(), &b) == nil {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b WorkerBeat) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// CancelSubject is where agentty cancel asks a session's run to stop; the
// worker running it answers.
func CancelSubject(session string) string { return cancelPrefix + "." + Token(session) }

const cancelPrefix = "agentty.cancel"

// CancelAll is the subject a worker listens on for every session.
const CancelAll = cancelPrefix + ".*"

// Queued is a request waiting in a pool's queue (or taken and not yet
// finished).
type Queued struct {
	Seq uint64 `json:"seq"`
	// Partition is the queue's partition that holds it (Seq is its
	// stream's).
	Partition int        `json:"partition"`
	Pool      string     `json:"pool"`
	Submitted time.Time  `json:"submitted"`
	Request   RunRequest `json:"request"`
}

// List returns the requests in the queue, oldest first: pool's, or every
// pool's for "", from every partition. It reads them without taking them.
func (q *Queue) List(ctx context.Context, pool string) ([]Queued, error) {
	var out []Queued
	for p, st := range q.streams {
		got, err := q.list(ctx, p, st, pool)
		out = append(out, got...)
		if err != nil {
			return out, err
		}
	}
	slices.SortStableFunc(out, func(a, b Queued) int { return a.Submitted.Compare(b.Submitted) })
	return out, nil
}

// list is List of partition p, whose stream is st.
func (q *Queue) list(ctx context.Context, p int, st jetstream.Stream, pool string) ([]Queued, error) {
	info, err := st.Info(ctx)
	if err != nil {
		return nil, err
	}
	prefix := q.layout.runsPrefix(p)
	subject := prefix + ".>"
	if pool != "" {
		subject = prefix + "." + Token(pool) + ".>"
	}
	var out []Queued
	for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break // none from here on
		}
		if err != nil {
			return out, err
		}
		seq = m.Sequence
		var req RunRequest
		json.Unmarshal(m.Data, &req)
		pl, _, _ := strings.Cut(m.Subject[len(prefix)+1:], ".")
		out = append(out, Queued{Seq: m.Sequence, Partition: p, Pool: pl, Submitted: m.Time, Request: req})
	}
	return out, nil
}

// Earlier reports whether a request of d's session queued before d is
// still on the queue: being carried out by a worker, or waiting. A
// session's requests are carried out in the order they were queued; they
// are all in its partition, on one subject.
func (q *Queue) Earlier(ctx context.Context, d *Delivery) (bool, error) {
	md, err := d.msg.Metadata()
	if err != nil {
		return false, err
	}
	st := q.streams[d.Partition]
	subject := d.msg.Subject()
	for seq := uint64(1); ; seq++ {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		seq = m.Sequence
		if seq == md.Sequence.Stream {
			continue
		}
		var r RunRequest
		if json.Unmarshal(m.Data, &r) == nil && r.Session == d.Req.Session &&
			(r.Submitted.Before(d.Req.Submitted) || r.Submitted.Equal(d.Req.Submitted) && r.ID < d.Req.ID) {
			return true, nil
		}
	}
}

// Get returns request seq of the queue's partition p.
func (q *Queue) Get(ctx context.Context, p int, seq uint64) (RunRequest, error) {
	var r RunRequest
	if p < 0 || p >= len(q.streams) {
		return r, fmt.Errorf("the queue has no partition %d", p)
	}
	m, err := q.streams[p].GetMsg(ctx, seq)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(m.Data, &r); err != nil || r.Session == "" {
		return r, fmt.Errorf("message %d is not a run request (%v)", seq, err)
	}
	return r, nil
}

// MaxDeliveriesSubjects are where the server says that pool's consumer of
// each partition handed a request out for the last time and it was not
// acknowledged: the worker that had it died. Its data is a JSON advisory
// with stream (PartitionOf) and stream_seq.
func (q *Queue) MaxDeliveriesSubjects(pool string) []string {
	out := make([]string, q.layout.N())
	for p := range out {
		out[p] = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + q.layout.RunsStream(p) + ".workers-" + Token(pool)
	}
	return out
}

// PartitionOf is the partition whose run queue stream is named stream.
func (q *Queue) PartitionOf(stream string) (int, bool) {
	for p := range q.layout.N() {
		if q.layout.RunsStream(p) == stream {
			return p, true
		}
	}
	return 0, false
}

// Remove takes request seq of partition p off the queue. A user who may
// not (the submit user) is told at once, a DeniedError, not after the
// request's timeout: the server does not answer a request it refuses.
func (q *Queue) Remove(ctx context.Context, p int, seq uint64) error {
	if p < 0 || p >= len(q.streams) {
		return fmt.Errorf("the queue has no partition %d", p)
	}
	if err := MayPublish(q.nc, "$JS.API.STREAM.MSG.DELETE."+q.layout.RunsStream(p), "take a request off the queue (cancel it)"); err != nil {
		return err
	}
	return q.streams[p].DeleteMsg(ctx, seq)
}
