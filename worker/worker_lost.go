package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// watchLost ends the requests the server gives up on: a request handed out
// for the last time to a worker that died with it is never handed out
// again, and stays on the queue with its run interrupted and nothing
// journaled. Each worker of the pool hears the server's advisory; the one
// that gets the session's lease journals why, and takes the request off
// the queue (submit --wait then ends).
func (w *worker) watchLost(pool string) (stop func(), err error) {
	sub, err := w.nc.Subscribe(bus.MaxDeliveriesSubject(pool), func(m *nats.Msg) {
		var a struct {
			Seq        uint64 `json:"stream_seq"`
			Deliveries int    `json:"deliveries"`
		}
		if json.Unmarshal(m.Data, &a) == nil && a.Seq > 0 {
			go w.endLost(a.Seq, a.Deliveries)
		}
	})
	if err != nil {
		return func() {}, err
	}
	return func() { sub.Unsubscribe() }, nil
}

// endLost journals why request seq ends and takes it off the queue.
func (w *worker) endLost(seq uint64, deliveries int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := w.queue.Get(ctx, seq)
	if err != nil {
		return // taken off already, or not a request (a worker drops those)
	}
	journal, s, past, err := w.open(req)
	if errors.Is(err, sessions.ErrLocked) {
		return // another worker of the pool does it
	}
	if err != nil {
		w.log("session %s: request %s was given up by the server, and its session cannot be opened to say why: %v", req.Session, req.ID, err)
		return
	}
	if _, finished := app.RequestRun(past, req.ID); !finished {
		reason := fmt.Sprintf("the request was handed to workers %d times and the last one died with it; given up", deliveries)
		w.log("session %s: %s", req.Session, reason)
		var sink engine.Sink = journal
		if w.pub != nil { // published as every run's events are: submit --wait ends
			defer w.pub.Close(2 * time.Second)
			sink = engine.Sinks{journal, w.pub}
		}
		if res := app.NewGiveUpEngine().GiveUp(ctx, s, req.Task, req.ID, reason, sink); res.Err != nil && res.Err.Error() != reason {
			w.log("session %s: journaling why: %v", req.Session, res.Err)
		}
	}
	if err := journal.Close(); err != nil {
		w.log("session %s: %v; request %s stays on the queue", req.Session, err, req.ID)
		return
	}
	if err := w.queue.Remove(ctx, seq); err != nil {
		w.log("session %s: taking request %s off the queue: %v", req.Session, req.ID, err)
	}
}
