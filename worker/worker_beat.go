package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
)

// errCancelledByOperator is the cause of a run agentty cancel stopped.
var errCancelledByOperator = errors.New("cancelled by agentty cancel")

// beatState is what a worker's heartbeat says of one run, kept up to date
// by the run's events.
type beatState struct {
	mu sync.Mutex
	b  bus.RunBeat
}

// observe notes what ev says of the run: its step, state, usage, errors.
func (s *beatState) observe(ev engine.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &s.b
	if ev.ParentRun == "" && ev.Run != "" {
		b.Run, b.Agent = ev.Run, ev.Agent
	}
	b.Step = max(b.Step, ev.Step)
	switch d := ev.Data.(type) {
	case *engine.ModelRequest:
		b.State = "deciding"
	case *engine.ToolStarted:
		b.State = "acting"
	case *engine.GatePaused:
		b.State, b.Paused = "paused", ev.Time
	case *engine.GateResumed, *engine.StepStarted:
		b.State, b.Paused = "deciding", time.Time{}
	case *engine.QuestionAsked:
		b.State, b.Paused = "asking", ev.Time
	case *engine.QuestionAnswered:
		b.Paused = time.Time{}
	case *engine.UsageRecorded:
		b.Usage.Add(d.Usage)
	case *engine.ToolFinished:
		if d.Status == engine.ToolError {
			b.LastError = engine.OneLine(d.Name+": "+d.Result, 200)
		}
	case *engine.RetryScheduled:
		b.LastError = engine.OneLine(d.Op+": "+d.Cause, 200)
	}
}

func (s *beatState) snapshot() bus.RunBeat {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b
}

// beating is the worker's heartbeat: every BeatEvery, its runs in the
// workers' bucket, until ctx ends; then its key is removed. A failed put
// is tried again at the next beat (the bucket is in memory: a server that
// restarts loses it, and the next beat puts it back).
func (w *worker) beating(ctx context.Context, pool string) {
	fleet, err := bus.OpenFleet(ctx, w.nc)
	if err != nil {
		w.log("no heartbeat (agentty top will not list this worker): %v", err)
		return
	}
	host, _ := os.Hostname()
	var rnd [4]byte
	rand.Read(rnd[:])
	beat := bus.WorkerBeat{ID: host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(rnd[:]), Host: host, PID: os.Getpid(), Pool: pool,
		Model: w.o.Model, Concurrency: w.concurrency, Started: time.Now().UTC()}
	t := time.NewTicker(bus.BeatEvery)
	defer t.Stop()
	for {
		beat.Beat, beat.Done, beat.Runs = time.Now().UTC(), w.done.Load(), w.runBeats()
		pctx, cancel := context.WithTimeout(ctx, bus.BeatEvery)
		fleet.Beat(pctx, beat)
		cancel()
		select {
		case <-t.C:
		case <-w.beatNow:
		case <-ctx.Done():
			gctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			fleet.Gone(gctx, beat.ID)
			cancel()
			return
		}
	}
}

// beatSoon asks for a heartbeat now.
func (w *worker) beatSoon() {
	select {
	case w.beatNow <- struct{}{}:
	default:
	}
}

// runBeats are the worker's runs now.
func (w *worker) runBeats() []bus.RunBeat {
	out := []bus.RunBeat{}
	w.runs.Range(func(_, v any) bool {
		if wr, ok := v.(*workerRun); ok && wr.started.Load() {
			out = append(out, wr.beat.snapshot())
		}
		return true
	})
	return out
}

// cancelling answers agentty cancel: the run of a session this worker
// runs is cancelled at once, mid-decision or mid-tool, and the reply says
// so; a session it does not run gets no reply from it.
func (w *worker) cancelling() (stop func(), err error) {
	sub, err := w.nc.Subscribe(bus.CancelAll, func(m *nats.Msg) {
		session := string(m.Data)
		v, ok := w.runs.Load(session)
		if wr, _ := v.(*workerRun); ok && wr.started.Load() && wr.cancel != nil {
			wr.cancel(errCancelledByOperator)
			w.log("session %s: cancelled (agentty cancel)", session)
			m.Respond([]byte("cancelled"))
		}
	})
	if err != nil {
		return func() {}, err
	}
	return func() { sub.Unsubscribe() }, nil
}
