package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/nats-io/nats.go"
)

// QueueConfig are the work queue's flags, shared by worker and serve.
type QueueConfig struct {
	Pool        string
	Concurrency int
	MaxDeliver  int
	AckWait     time.Duration
	GateTimeout time.Duration
	// Partitions limits the worker to these partitions of the queue
	// (none: every one).
	Partitions []int
}

// Run connects, takes requests until ctx ends, and drains.
func Run(ctx context.Context, o app.Options, q QueueConfig, url string, getenv func(string) string, log func(string, ...any)) (int, error) {
	if q.Concurrency < 1 || q.MaxDeliver < 1 || q.AckWait < time.Second {
		return app.ExitUsage, fmt.Errorf("--concurrency and --max-deliver must be at least 1 and --ack-wait at least 1s")
	}
	if strings.TrimSpace(q.Pool) == "" {
		return app.ExitUsage, fmt.Errorf("--pool is empty (the default pool is %q)", bus.DefaultPool)
	}
	o.NATS = url
	reconnected := make(chan struct{}, 1)
	nc, err := bus.Connect(o.NATSConfig("agentty worker "+q.Pool, getenv),
		// One line each way: the queue's own loop says no more while the
		// connection is down than once a backoff period.
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log("lost the NATS server (%v); reconnecting", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log("reconnected to %s", bus.Redact(nc.ConnectedUrlRedacted()))
			select {
			case reconnected <- struct{}{}:
			default:
			}
		}))
	if errors.As(err, new(bus.UsageError)) {
		return app.ExitUsage, err
	}
	if err != nil {
		return app.ExitError, err
	}
	defer nc.Close()
	store, err := o.Store(getenv)
	if err != nil {
		return app.ExitError, err
	}
	defer store.Close()
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	queue, err := bus.OpenQueue(octx, nc)
	var cons *bus.Consumer
	if err == nil {
		cons, err = queue.Consumer(octx, bus.WorkerConfig{Pool: q.Pool, MaxDeliver: q.MaxDeliver, AckWait: q.AckWait, Partitions: q.Partitions})
	}
	if ctx.Err() != nil {
		return 0, nil // stopped while starting: nothing was taken
	}
	if err != nil {
		return exitOf(err), err
	}
	q.MaxDeliver, q.AckWait = cons.Config().MaxDeliver, cons.Config().AckWait
	w := &worker{o: o, getenv: getenv, log: log, store: store, nc: nc, pub: bus.NewSink(nc), queue: queue, cons: cons, concurrency: q.Concurrency, gateTimeout: q.GateTimeout, reconnected: reconnected, beatNow: make(chan struct{}, 1)}
	if err := w.startChecks(octx); err != nil {
		return app.ExitUsage, err
	}
	log("taking runs from pool %q on %s, %d at once%s; sessions in %s; Ctrl+C drains", q.Pool, bus.Redact(url), q.Concurrency, partitionsNote(queue, cons), store.Where())
	stopCancel, err := w.cancelling()
	if err != nil {
		log("agentty cancel cannot reach this worker's runs: %v", err)
	}
	stopLost, err := w.watchLost(q.Pool)
	if err != nil {
		log("a request the server gives up on will not be ended here: %v", err)
	}
	defer stopLost()
	bctx, stopBeat := context.WithCancel(context.Background())
	beaten := make(chan struct{})
	go func() { defer close(beaten); w.beating(bctx, q.Pool) }()
	w.serve(ctx)
	stopCancel()
	stopBeat()
	<-beaten
	n, back := int(w.done.Load()), int(w.requeued.Load())
	log("stopped: %d %s done, %d put back on the queue", n, engine.Plural(n, "request"), back)
	if w.lost != nil {
		return app.ExitError, w.lost
	}
	return 0, nil
}

// startChecks refuses to start a worker whose own settings cannot make a
// run (every run would end in that error), and warns of agentty's streams
// and buckets that keep fewer copies than the fleet's setting.
func (w *worker) startChecks(ctx context.Context) error {
	if w.cons.Note != "" {
		w.log("%s", w.cons.Note)
	}
	// A user who may not take runs would wait for ever, quietly.
	if err := bus.MayPublish(w.nc, "$JS.ACK."+bus.RunsStream+".agentty-probe", "take runs (it is not a worker)"); err != nil {
		return err
	}
	if _, err := w.setupFor(ctx, bus.RunRequest{}); err != nil {
		return fmt.Errorf("the worker cannot run with its own settings (--model, --agent, the config): %w", err)
	}
	short, err := bus.CheckReplicas(ctx, w.nc)
	for _, s := range short {
		w.log("warning: %s", s)
	}
	if err != nil {
		w.log("warning: the streams' replicas cannot be checked: %v", err)
	}
	return nil
}

// partitionsNote says which partitions of the queue the worker takes
// from, when it has several.
func partitionsNote(q *bus.Queue, c *bus.Consumer) string {
	n := q.Layout().N()
	if n == 1 {
		return ""
	}
	ps := c.Partitions()
	if len(ps) == n {
		return fmt.Sprintf(", from each of its %d partitions in turn", n)
	}
	return fmt.Sprintf(", from partitions %v of its %d", ps, n)
}

// exitOf is the exit code of an error that stops a worker from starting:
// a setting given wrong is a usage error.
func exitOf(err error) int {
	if errors.As(err, new(bus.UsageError)) {
		return app.ExitUsage
	}
	return app.ExitError
}
