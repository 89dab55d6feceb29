package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
)

// workerCmd is `agentty worker [--pool P] [--concurrency N] [flags]`: take
// run requests from the queue until Ctrl+C, which drains.
func workerCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("worker", stderr)
	var o app.Options
	register(&o, fs)
	var q app.QueueConfig
	registerQueue(&q, fs, runtime.NumCPU())
	fs.BoolVar(&o.Yes, "yes", false, "approve tools that ask (without it they are denied, unless the run was submitted with --step)")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty worker: "+format+"\n", a...)
		return code
	}
	if fs.NArg() > 0 {
		return fail(app.ExitUsage, "unexpected %q (usage: agentty worker [--pool P] [--concurrency N] [flags])", fs.Arg(0))
	}
	o.MaxStepsSet = flagSet(fs, "max-steps")
	url := o.NATSURL(getenv)
	if url == "" {
		return fail(app.ExitUsage, "no NATS server: pass --nats URL or set AGENTTY_NATS_URL (agentty serve runs one, with workers)")
	}
	code, err := app.RunWorker(ctx, o, q, url, getenv, func(format string, a ...any) {
		fmt.Fprintf(stderr, "agentty worker: "+format+"\n", a...)
	})
	if err != nil {
		return fail(code, "%v", err)
	}
	return 0
}

func registerQueue(q *app.QueueConfig, fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}, workers int) {
	fs.StringVar(&q.Pool, "pool", bus.DefaultPool, "the queue's pool: workers take the requests submitted to it")
	if workers > 0 { // serve has --workers instead
		fs.IntVar(&q.Concurrency, "concurrency", workers, "runs at once")
	}
	fs.IntVar(&q.MaxDeliver, "max-deliver", 5, "times a request is handed out before its run ends with error")
	fs.DurationVar(&q.AckWait, "ack-wait", 30*time.Second, "silence after which a worker is taken for dead and its request handed to another")
	fs.DurationVar(&q.GateTimeout, "gate-timeout", 0, "how long a run submitted with --step waits for a console to answer before it is cancelled (0: forever)")
}
