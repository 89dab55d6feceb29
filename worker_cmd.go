package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/nats-io/nats.go"
)

// queueFlags are the work queue's flags, shared by worker and serve.
type queueFlags struct {
	pool        string
	concurrency int
	maxDeliver  int
	ackWait     time.Duration
	gateTimeout time.Duration
}

// workerCmd is `agentty worker [--pool P] [--concurrency N] [flags]`: take
// run requests from the queue until Ctrl+C, which drains.
func workerCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("worker", stderr)
	var o options
	o.register(fs)
	var q queueFlags
	q.register(fs, runtime.NumCPU())
	fs.BoolVar(&o.yes, "yes", false, "approve tools that ask (without it they are denied, unless the run was submitted with --step)")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty worker: "+format+"\n", a...)
		return code
	}
	if fs.NArg() > 0 {
		return fail(exitUsage, "unexpected %q (usage: agentty worker [--pool P] [--concurrency N] [flags])", fs.Arg(0))
	}
	o.maxStepsSet = flagSet(fs, "max-steps")
	url := o.natsURL(getenv)
	if url == "" {
		return fail(exitUsage, "no NATS server: pass --nats URL or set AGENTTY_NATS_URL (agentty serve runs one, with workers)")
	}
	code, err := runWorker(ctx, o, q, url, getenv, func(format string, a ...any) {
		fmt.Fprintf(stderr, "agentty worker: "+format+"\n", a...)
	})
	if err != nil {
		return fail(code, "%v", err)
	}
	return 0
}

func (q *queueFlags) register(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}, workers int) {
	fs.StringVar(&q.pool, "pool", bus.DefaultPool, "the queue's pool: workers take the requests submitted to it")
	if workers > 0 { // serve has --workers instead
		fs.IntVar(&q.concurrency, "concurrency", workers, "runs at once")
	}
	fs.IntVar(&q.maxDeliver, "max-deliver", 5, "times a request is handed out before its run ends with error")
	fs.DurationVar(&q.ackWait, "ack-wait", 30*time.Second, "silence after which a worker is taken for dead and its request handed to another")
	fs.DurationVar(&q.gateTimeout, "gate-timeout", 0, "how long a run submitted with --step waits for a console to answer before it is cancelled (0: forever)")
}

// runWorker connects, takes requests until ctx ends, and drains.
func runWorker(ctx context.Context, o options, q queueFlags, url string, getenv func(string) string, log func(string, ...any)) (int, error) {
	if q.concurrency < 1 || q.maxDeliver < 1 || q.ackWait < time.Second {
		return exitUsage, fmt.Errorf("--concurrency and --max-deliver must be at least 1 and --ack-wait at least 1s")
	}
	if strings.TrimSpace(q.pool) == "" {
		return exitUsage, fmt.Errorf("--pool is empty (the default pool is %q)", bus.DefaultPool)
	}
	o.nats = url
	reconnected := make(chan struct{}, 1)
	nc, err := bus.Connect(bus.Config{URL: url, Creds: o.natsCreds, Name: "agentty worker " + q.pool},
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
		return exitUsage, err
	}
	if err != nil {
		return exitError, err
	}
	defer nc.Close()
	store, err := o.store(getenv)
	if err != nil {
		return exitError, err
	}
	defer store.Close()
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	queue, err := bus.OpenQueue(octx, nc)
	var cons *bus.Consumer
	if err == nil {
		cons, err = queue.Consumer(octx, bus.WorkerConfig{Pool: q.pool, MaxDeliver: q.maxDeliver, AckWait: q.ackWait})
	}
	if ctx.Err() != nil {
		return 0, nil // stopped while starting: nothing was taken
	}
	if err != nil {
		return exitError, err
	}
	if cons.Note != "" {
		log("%s", cons.Note)
	}
	q.maxDeliver, q.ackWait = cons.Config().MaxDeliver, cons.Config().AckWait
	w := &worker{o: o, getenv: getenv, log: log, store: store, nc: nc, pub: bus.NewSink(nc), queue: queue, cons: cons, concurrency: q.concurrency, gateTimeout: q.gateTimeout, reconnected: reconnected}
	log("taking runs from pool %q on %s, %d at once; sessions in %s; Ctrl+C drains", q.pool, bus.Redact(url), q.concurrency, store.Where())
	w.serve(ctx)
	n, back := int(w.done.Load()), int(w.requeued.Load())
	log("stopped: %d %s done, %d put back on the queue", n, engine.Plural(n, "request"), back)
	if w.lost != nil {
		return exitError, w.lost
	}
	return 0, nil
}
