package worker

import (
	"context"
	"sync"
	"time"

	"github.com/agentty/agentty/bus"
)

// Taking requests: the slots free take what waits, and a request waits
// for its session's earlier ones.

// takeFree takes the slots free now, without waiting, and says how many.
func takeFree(slots chan struct{}) int {
	for n := 0; ; n++ {
		select {
		case slots <- struct{}{}:
		default:
			return n
		}
	}
}

// start carries out d in a slot of its own (taken for it).
func (w *worker) start(ctx context.Context, d *bus.Delivery, slots chan struct{}, wg *sync.WaitGroup) {
	if ctx.Err() != nil {
		// Came as the drain began (perhaps a request a drained run
		// just put back): untouched, for another worker, and put
		// back as new, which a hand-back would count as a delivery.
		w.requeue(d, "came as the worker began to drain")
		<-slots
		return
	}
	wg.Go(func() {
		free := sync.OnceFunc(func() { <-slots })
		defer free()
		w.handle(d, free)
	})
}

// await waits until d's turn has come, holding the request: no earlier
// request of its session is left on the queue (a session's requests run in
// the order they were queued) and no run of it goes on in this worker;
// then wr holds the session here. When the session is still busy at wait
// (or the worker drains), the request is put at the back of the queue as
// a new message, which does not count as one of its deliveries, and await
// says false. A session written elsewhere is waited for after (openWaiting).
//
// A request waiting for an earlier one that no run of this worker has,
// while every slot of the worker is taken, is put back after a second:
// the earlier one may be waiting on the queue behind it (a drained run's
// request goes to the back), and this worker, full, could not take it.
func (w *worker) await(ctx context.Context, d *bus.Delivery, wr *workerRun, wait time.Time) bool {
	full := time.Now().Add(time.Second)
	for {
		why := ""
		prev, _ := w.runs.Load(d.Req.Session) // this worker's, finishing
		if earlier, err := w.queue.Earlier(ctx, d); err == nil && earlier {
			why = "an earlier request of it is not done yet"
		} else if p, busy := w.runs.LoadOrStore(d.Req.Session, wr); busy {
			why, prev = "a run of it is going on in this worker", p
		} else {
			return true
		}
		if time.Now().After(wait) || w.draining.Load() || prev == nil && w.full() && time.Now().After(full) {
			w.requeue(d, why)
			return false
		}
		w.pause(prev, wait)
	}
}

// full reports whether every slot of the worker is taken.
func (w *worker) full() bool { return w.slots != nil && len(w.slots) == cap(w.slots) }

// pause waits before await asks again: for the request of the session
// this worker is finishing (prev, when there is one), or a quarter of a
// second for another worker's.
func (w *worker) pause(prev any, wait time.Time) {
	r, ok := prev.(*workerRun)
	if !ok {
		time.Sleep(250 * time.Millisecond)
		return
	}
	t := time.NewTimer(time.Until(wait))
	defer t.Stop()
	var drained <-chan struct{}
	if w.drain != nil {
		drained = w.drain.Done()
	}
	select {
	case <-r.over:
	case <-t.C:
	case <-drained:
	}
}
