package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// openTestQueue starts a server and opens its queue.
func openTestQueue(t *testing.T) (*nats.Conn, *bus.Queue) {
	t.Helper()
	srv := startServer(t)
	nc, err := bus.Connect(bus.Config{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	q, err := bus.OpenQueue(context.Background(), nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, q
}

// TestQueueUnlimitedConsumer: a pool whose consumer an operator made with
// no delivery limit never gives a request up, and a worker asking for
// other settings is told the pool's.
func TestQueueUnlimitedConsumer(t *testing.T) {
	nc, q := openTestQueue(t)
	ctx := context.Background()
	js, _ := jetstream.New(nc)
	st, err := js.Stream(ctx, bus.RunsStream)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "workers-default", FilterSubject: bus.RunSubject(bus.DefaultPool),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Second, MaxDeliver: -1}); err != nil {
		t.Fatal(err)
	}
	c, err := q.Consumer(ctx, bus.WorkerConfig{MaxDeliver: 5, AckWait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Config(); got.MaxDeliver != 0 || got.AckWait != time.Second || c.Note == "" {
		t.Errorf("pool settings %+v, note %q; want no limit, 1s, and a note", got, c.Note)
	}
	if _, err := q.Submit(ctx, bus.DefaultPool, bus.RunRequest{ID: "r1", Session: "s1", Task: "go"}); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt <= 3; attempt++ {
		d, err := c.Next(ctx, 5*time.Second)
		if err != nil || d == nil {
			t.Fatalf("delivery %d: %v", attempt, err)
		}
		if d.Attempt != attempt || d.GiveUp != "" {
			t.Errorf("delivery %d: attempt %d, give up %q", attempt, d.Attempt, d.GiveUp)
		}
		d.HandBack(0)
	}
}

// TestQueueTakeSeveral: a worker with slots free takes the requests
// waiting with one question (issue 42), a bad one among them handed over
// marked bad without harming the others; with none waiting it waits for
// the next, as Next does, and takes nothing when none comes.
func TestQueueTakeSeveral(t *testing.T) {
	nc, q := openTestQueue(t)
	ctx := context.Background()
	c, err := q.Consumer(ctx, bus.WorkerConfig{MaxDeliver: 5, AckWait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"s1", "s2", "s3"} {
		if _, err := q.Submit(ctx, bus.DefaultPool, bus.RunRequest{ID: "r-" + s, Session: s, Task: "go"}); err != nil {
			t.Fatal(err)
		}
	}
	js, _ := jetstream.New(nc)
	if _, err := js.Publish(ctx, bus.RunSubject(bus.DefaultPool)+".s4", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	ds, err := c.Take(ctx, 8, 5*time.Second)
	if err != nil || len(ds) != 4 {
		t.Fatalf("took %d requests (%v), want the 4 waiting", len(ds), err)
	}
	for i, d := range ds[:3] {
		if want := "s" + string(rune('1'+i)); d.Req.Session != want || d.Bad != "" || d.Attempt != 1 {
			t.Errorf("request %d: session %q, bad %q, attempt %d; want %s, good, first", i, d.Req.Session, d.Bad, d.Attempt, want)
		}
		if err := d.Done(ctx); err != nil {
			t.Error(err)
		}
	}
	if ds[3].Bad == "" {
		t.Error("the message that is not a request was not marked bad")
	}
	ds[3].Drop(ds[3].Bad)

	type took struct {
		ds  []*bus.Delivery
		err error
	}
	next := make(chan took)
	go func() {
		ds, err := c.Take(ctx, 8, 5*time.Second)
		next <- took{ds, err}
	}()
	if _, err := q.Submit(ctx, bus.DefaultPool, bus.RunRequest{ID: "r-s5", Session: "s5", Task: "go"}); err != nil {
		t.Fatal(err)
	}
	got := <-next
	if ds, err = got.ds, got.err; err != nil || len(ds) != 1 || ds[0].Req.Session != "s5" {
		t.Fatalf("with none waiting, took %v (%v); want the next to come, s5", ds, err)
	}
	ds[0].Done(ctx)
	if ds, err = c.Take(ctx, 8, 200*time.Millisecond); err != nil || len(ds) != 0 {
		t.Errorf("with none coming, took %v (%v); want none", ds, err)
	}
}
