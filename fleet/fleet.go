package fleet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// Snapshot is the fleet at one moment (agentty top): the workers alive,
// the runs they carry out, the requests waiting, by pool.
type Snapshot struct {
	At      time.Time        `json:"at"`
	Workers []bus.WorkerBeat `json:"workers"`
	Running []TopRun         `json:"running"`
	Queued  []bus.Queued     `json:"queued"`
	Pools   []PoolStat       `json:"pools"`
}

// TopRun is a run going on, and the worker it runs on.
type TopRun struct {
	Worker string `json:"worker"`
	bus.RunBeat
}

// PoolStat is a pool's queue: how many requests wait, since when.
type PoolStat struct {
	Pool    string    `json:"pool"`
	Waiting int       `json:"waiting"`
	Running int       `json:"running"`
	Workers int       `json:"workers"`
	Oldest  time.Time `json:"oldest,omitzero"`
}

// TakeSnapshot reads the fleet from the NATS server nc is connected to:
// the workers' heartbeats and the run queue (pool's, or every pool's for
// ""). A request a worker runs is listed as running, not queued.
func TakeSnapshot(ctx context.Context, nc *nats.Conn, pool string) (Snapshot, error) {
	snap := Snapshot{At: time.Now().UTC(), Workers: []bus.WorkerBeat{}, Running: []TopRun{}, Queued: []bus.Queued{}, Pools: []PoolStat{}}
	fleet, err := bus.OpenFleet(ctx, nc)
	if err != nil {
		return snap, err
	}
	if snap.Workers, err = fleet.Workers(ctx); err != nil {
		return snap, err
	}
	queue, err := bus.OpenQueue(ctx, nc)
	if err != nil {
		return snap, err
	}
	all, err := queue.List(ctx, pool)
	if err != nil {
		return snap, err
	}
	stats := map[string]*PoolStat{}
	stat := func(p string) *PoolStat {
		if stats[p] == nil {
			stats[p] = &PoolStat{Pool: p}
		}
		return stats[p]
	}
	running := map[string]bool{}
	for _, w := range snap.Workers {
		if pool != "" && bus.Token(w.Pool) != bus.Token(pool) {
			continue
		}
		stat(bus.Token(w.Pool)).Workers++
		for _, r := range w.Runs {
			snap.Running = append(snap.Running, TopRun{Worker: w.ID, RunBeat: r})
			running[r.Request] = true
			stat(bus.Token(w.Pool)).Running++
		}
	}
	for _, q := range all {
		if running[q.Request.ID] {
			continue
		}
		snap.Queued = append(snap.Queued, q)
		s := stat(q.Pool)
		s.Waiting++
		if s.Oldest.IsZero() || q.Submitted.Before(s.Oldest) {
			s.Oldest = q.Submitted
		}
	}
	for _, p := range slices.Sorted(maps.Keys(stats)) {
		snap.Pools = append(snap.Pools, *stats[p])
	}
	return snap, nil
}

// ErrNothingToCancel: no run or queued request goes by that name.
var ErrNothingToCancel = errors.New("nothing to cancel")

// Cancel stops target, a session or a request: a run going on is
// cancelled at once by the worker running it (its run ends cancelled); a
// request still queued is taken off the queue and its session journals
// why. It says what it did.
func Cancel(ctx context.Context, nc *nats.Conn, store *sessions.Store, target string) (string, error) {
	snap, err := TakeSnapshot(ctx, nc, "")
	if err != nil {
		return "", err
	}
	for _, r := range snap.Running {
		if r.Session == target || r.Request == target {
			if err := askCancel(ctx, nc, r.Session); err != nil {
				return "", fmt.Errorf("session %s runs on worker %s: %w", r.Session, r.Worker, err)
			}
			return fmt.Sprintf("cancelled the run of session %s on worker %s", r.Session, r.Worker), nil
		}
	}
	queue, err := bus.OpenQueue(ctx, nc)
	if err != nil {
		return "", err
	}
	for _, q := range snap.Queued {
		if q.Request.Session != target && q.Request.ID != target {
			continue
		}
		if err := queue.Remove(ctx, q.Partition, q.Seq); err != nil {
			return "", fmt.Errorf("taking request %s off the queue: %w", q.Request.ID, err)
		}
		if err := journalCancelled(ctx, store, q.Request); err != nil {
			return "", fmt.Errorf("request %s is off the queue, and its session does not say why: %w", q.Request.ID, err)
		}
		return fmt.Sprintf("took request %s (session %s) off the queue of pool %s", q.Request.ID, q.Request.Session, q.Pool), nil
	}
	return "", fmt.Errorf("%w: no run goes on and no request waits for %s", ErrNothingToCancel, target)
}

// askCancel asks the worker running session to cancel it, and waits for
// its answer. A user the server does not let publish a cancel is told at
// once (the server's refusal comes before the flush's answer).
func askCancel(ctx context.Context, nc *nats.Conn, session string) error {
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(bus.CancelSubject(session), inbox, []byte(session)); err != nil {
		return err
	}
	if err := nc.FlushWithContext(ctx); err != nil {
		return err
	}
	if le := nc.LastError(); le != nil && strings.Contains(strings.ToLower(le.Error()), "permissions violation") {
		return fmt.Errorf("this user may not cancel runs (%v): cancel as the operator", le)
	}
	if _, err := sub.NextMsgWithContext(ctx); err != nil {
		return fmt.Errorf("its worker did not answer: %w", err)
	}
	return nil
}

// journalCancelled ends a queued request in its session's journal: a run
// of its task, cancelled before it ran.
func journalCancelled(ctx context.Context, store *sessions.Store, req bus.RunRequest) error {
	j, l, err := store.OpenWriter(req.Session)
	s := (*engine.Session)(nil)
	switch {
	case errors.Is(err, sessions.ErrNotFound):
		if j, err = store.CreateID(req.Session); err != nil {
			return err
		}
		s = engine.NewSession(req.Session)
	case err != nil:
		return err
	default:
		s = l.Session
	}
	defer j.Close()
	eng := app.NewGiveUpEngine()
	eng.EndRequest(ctx, s, req.Task, req.ID, engine.StopCancelled, "cancelled by agentty cancel before it ran: it was taken off the queue", j)
	return j.Close()
}
