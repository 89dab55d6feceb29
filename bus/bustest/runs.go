package bustest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The queue's floor: what the bus can do for agentty's queue with nothing
// of agentty's in between, as bench/floor is for the engine.

// floorNames are the streams, buckets and consumer RunOps uses, beside
// agentty's own and made like them (file storage).
const (
	floorRuns     = "BUSTEST_RUNS"
	floorJournal  = "BUSTEST_JOURNAL"
	floorSessions = "BUSTEST_SESSIONS"
	floorWriters  = "BUSTEST_WRITERS"
)

// floor is what RunOps works on.
type floor struct {
	js                jetstream.JetStream
	runs, journal     jetstream.Stream
	sessions, writers jetstream.KeyValue
	cons              jetstream.Consumer
	request, big, end []byte
	meta, lease       []byte
}

// RunOps is runs a second through the bus alone: runsAtOnce goroutines,
// each doing a run's operations on the bus as an agentty worker does them
// for an instant run, one after another with nothing in between, for
// about d. A run is: its request published on a work queue and taken from
// it; the two reads of whether an earlier request of its session waits;
// the writer's lease taken; the journal's last message, the meta and the
// request read (at once, as Journals.Open does); the run's start appended
// to the journal and the meta written; its end appended and the meta
// written; the lease given up; the request acknowledged. Seven synced
// writes, as agentty's runs make.
func RunOps(ctx context.Context, js jetstream.JetStream, runsAtOnce int, d time.Duration) (float64, error) {
	f, err := newFloor(ctx, js)
	if err != nil {
		return 0, err
	}
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	return perSecond(runsAtOnce, d, func(w, i int) error {
		return f.run(ctx, strconv.Itoa(w)+"x"+strconv.Itoa(i)+"x"+stamp)
	})
}

func newFloor(ctx context.Context, js jetstream.JetStream) (*floor, error) {
	f := &floor{js: js, request: []byte(strings.Repeat("r", 120)), big: []byte(strings.Repeat("s", 6000)),
		end: []byte(strings.Repeat("e", 760)), meta: []byte(strings.Repeat("m", 280)), lease: []byte(strings.Repeat("l", 60))}
	var err error
	if f.runs, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: floorRuns, Subjects: []string{"bustest.runs.>"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage}); err != nil {
		return nil, err
	}
	if f.journal, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: floorJournal, Subjects: []string{"bustest.journal.>"},
		Storage: jetstream.FileStorage}); err != nil {
		return nil, err
	}
	if f.sessions, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: floorSessions, Storage: jetstream.FileStorage}); err != nil {
		return nil, err
	}
	if f.writers, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: floorWriters, Storage: jetstream.FileStorage}); err != nil {
		return nil, err
	}
	f.cons, err = f.runs.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "floor", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second})
	return f, err
}

// run is one run's operations on the bus.
func (f *floor) run(ctx context.Context, sid string) error {
	if _, err := f.js.Publish(ctx, "bustest.runs.default."+sid, f.request, jetstream.WithMsgID(sid)); err != nil {
		return err
	}
	m, err := f.cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		return fmt.Errorf("take a request: %w", err)
	}
	sid = m.Subject()[strings.LastIndexByte(m.Subject(), '.')+1:] // perhaps another goroutine's
	md, err := m.Metadata()
	if err != nil {
		return err
	}
	if err := f.earlier(ctx, m.Subject(), md.Sequence.Stream); err != nil {
		return err
	}
	if _, err := f.writers.Create(ctx, sid, f.lease); err != nil {
		return fmt.Errorf("lease: %w", err)
	}
	if err := f.read(ctx, sid); err != nil {
		return err
	}
	subj := "bustest.journal." + sid
	ack, err := f.js.Publish(ctx, subj, f.big, jetstream.WithMsgID(sid+"/0"), jetstream.WithExpectLastSequencePerSubject(0))
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := f.sessions.Put(ctx, sid, f.meta); err != nil {
		return err
	}
	if _, err := f.js.Publish(ctx, subj, f.end, jetstream.WithMsgID(sid+"/1"), jetstream.WithExpectLastSequencePerSubject(ack.Sequence)); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := f.sessions.Put(ctx, sid, f.meta); err != nil {
		return err
	}
	if err := f.writers.Delete(ctx, sid); err != nil {
		return err
	}
	return m.DoubleAck(ctx)
}

// earlier reads the requests of subj around seq, as Queue.Earlier does.
func (f *floor) earlier(ctx context.Context, subj string, seq uint64) error {
	m, err := f.runs.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(subj))
	if err != nil {
		return fmt.Errorf("earlier: %w", err)
	}
	if _, err := f.runs.GetMsg(ctx, max(m.Sequence, seq)+1, jetstream.WithGetMsgSubject(subj)); !errors.Is(err, jetstream.ErrMsgNotFound) {
		return fmt.Errorf("earlier: %v", err)
	}
	return nil
}

// read reads a new session as Journals.Open does: its journal's last
// message, its meta and its request, at once.
func (f *floor) read(ctx context.Context, sid string) error {
	var wg sync.WaitGroup
	errs := make([]error, 3)
	wg.Go(func() { _, errs[0] = f.journal.GetLastMsgForSubject(ctx, "bustest.journal."+sid) })
	wg.Go(func() { _, errs[1] = f.sessions.Get(ctx, sid) })
	wg.Go(func() { _, errs[2] = f.runs.GetLastMsgForSubject(ctx, "bustest.runs.*."+sid) })
	wg.Wait()
	for i, want := range []error{jetstream.ErrMsgNotFound, jetstream.ErrKeyNotFound, nil} {
		if !errors.Is(errs[i], want) && errs[i] != want {
			return fmt.Errorf("read the session: %v", errs[i])
		}
	}
	return nil
}
