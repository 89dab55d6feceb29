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
	var subs []*nats.Subscription
	stop = func() {
		for _, s := range subs {
			s.Unsubscribe()
		}
	}
	for _, subj := range w.queue.MaxDeliveriesSubjects(pool) {
		sub, err := w.nc.Subscribe(subj, func(m *nats.Msg) {
			var a struct {
				Stream     string `json:"stream"`
				Seq        uint64 `json:"stream_seq"`
				Deliveries int    `json:"deliveries"`
			}
			if json.Unmarshal(m.Data, &a) != nil || a.Seq == 0 {
				return
			}
			if p, ok := w.queue.PartitionOf(a.Stream); ok {
				go w.endLost(p, a.Seq, a.Deliveries)
			}
		})
		if err != nil {
			stop()
			return func() {}, err
		}
		subs = append(subs, sub)
	}
	return stop, nil
}

// endLost journals why request seq of partition p ends and takes it off
// the queue.
func (w *worker) endLost(p int, seq uint64, deliveries int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := w.queue.Get(ctx, p, seq)
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
	if err := w.queue.Remove(ctx, p, seq); err != nil {
		w.log("session %s: taking request %s off the queue: %v", req.Session, req.ID, err)
	}
}

// refuseMisplaced ends a request published to a partition of the queue
// that does not hold its session (by hand, or by a client whose server
// maps another number of partitions): run there, it could overtake an
// earlier request of its session, queued in the right one. Its session
// journals why, and it is taken off the queue; a session busy now has it
// handed back for later.
func (w *worker) refuseMisplaced(ctx context.Context, d *bus.Delivery) {
	journal, s, _, err := w.open(d.Req)
	if err != nil {
		w.log("session %s: %s; its session cannot be opened to say so (%v): tried again later", d.Req.Session, d.Misplaced, err)
		d.HandBack(handBackDelay)
		return
	}
	defer journal.Close()
	w.giveUp(ctx, d, journal, s, d.Req, d.Misplaced)
}

// refused ends d when it is no request to run here: not a run request
// (dropped), or one in a partition not its session's (refuseMisplaced).
func (w *worker) refused(ctx context.Context, d *bus.Delivery) bool {
	switch {
	case d.Bad != "":
		w.log("dropped a message: %s", d.Bad)
		d.Drop(d.Bad)
	case d.Misplaced != "":
		w.refuseMisplaced(ctx, d)
	default:
		return false
	}
	return true
}
