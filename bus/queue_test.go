package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/nats-io/nats.go/jetstream"
)

// TestQueueUnlimitedConsumer: a pool whose consumer an operator made with
// no delivery limit never gives a request up, and a worker asking for
// other settings is told the pool's.
func TestQueueUnlimitedConsumer(t *testing.T) {
	srv := startServer(t)
	nc, err := bus.Connect(bus.Config{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	q, err := bus.OpenQueue(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
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
