package bus

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestSubmitterKeepsNoConsumer (issue 52, hole 12): the submit user may
// make consumers on the streams it reads (the journal, the buckets), but
// none is kept: a durable one is deleted by the server once unused for
// ReaderIdle, and one that asks to live longer is refused.
func TestSubmitterKeepsNoConsumer(t *testing.T) {
	u, srv := usersServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := Setup(ctx, as(t, srv, u.Operator), 1, nil); err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(as(t, srv, u.Submit))
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []string{JournalStream, kvStream(SessionsBucket), kvStream(WritersBucket), kvStream(WorkersBucket)} {
		c, err := js.CreateConsumer(ctx, stream, jetstream.ConsumerConfig{Durable: "hoard"})
		if err != nil {
			t.Errorf("%s: the submit user makes a consumer to read: %v", stream, err)
			continue
		}
		if idle := c.CachedInfo().Config.InactiveThreshold; idle <= 0 || idle > ReaderIdle {
			t.Errorf("%s: the submit user's durable consumer lives %v unused, want at most %v", stream, idle, ReaderIdle)
		}
		if _, err := js.CreateConsumer(ctx, stream, jetstream.ConsumerConfig{Durable: "hoard-long", InactiveThreshold: 24 * time.Hour}); err == nil {
			t.Errorf("%s: the submit user made a consumer that lives a day unused", stream)
		}
	}
}
