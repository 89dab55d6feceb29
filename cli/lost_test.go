package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// A request whose last delivery went to a worker that died with it is not
// left on the queue with its session interrupted and no word: a live
// worker hears the server give it up, journals why, and takes it off the
// queue.
func TestRequestLostOnItsLastDelivery(t *testing.T) {
	srv := natsServer(t)
	url := srv.URL()
	ctx := context.Background()
	nc, q := openQueueAt(t, url)
	// The pool's consumer as a worker makes it: --max-deliver 1 (two
	// deliveries, the second to end the run) and --ack-wait 1s.
	if _, err := q.Consumer(ctx, bus.WorkerConfig{Pool: bus.DefaultPool, MaxDeliver: 1, AckWait: time.Second}); err != nil {
		t.Fatal(err)
	}
	req := bus.RunRequest{ID: sessions.NewID(), Session: sessions.NewID(), Task: "what is 6*7?", Submitted: time.Now().UTC()}
	if _, err := q.Submit(ctx, bus.DefaultPool, req); err != nil {
		t.Fatal(err)
	}
	// Two workers take it and die without a word: neither acknowledges.
	js, _ := jetstream.New(nc)
	c, err := js.Consumer(ctx, bus.RunsStream, "workers-default")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		m, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatalf("delivery %d: %v", i+1, err)
		}
		if md, _ := m.Metadata(); md.NumDelivered != uint64(i+1) {
			t.Fatalf("delivery %d is the %dth", i+1, md.NumDelivered)
		}
	}
	startWorker(t, url, "", "--max-deliver", "1", "--ack-wait", "1s")
	store := natsStoreAt(t, url)
	l := waitAnswered(t, store, []string{req.Session})[req.Session]
	if last := l.Session.LastRun(); last.Stop != engine.StopError || !strings.Contains(last.Error, "the last one died with it; given up") {
		t.Errorf("the session ended %s: %q", last.Stop, last.Error)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if n, err := q.Pending(ctx, bus.DefaultPool); err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request is still on the queue")
		}
	}
}
