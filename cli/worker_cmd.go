package cli

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/worker"
)

// workerOptions are the flags and arguments of agentty worker.
type workerOptions struct {
	*factory
	Queue worker.QueueConfig

	Args []string
}

// newWorkerCmd binds the flags of its command into its options.
func newWorkerCmd(f *factory) *cobra.Command {
	opts := &workerOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "worker [--pool P] [--concurrency N] [flags]",
		Short: "Take queued runs and carry them out; Ctrl+C drains",
		Example: `  agentty worker --nats nats://10.0.0.5:4222 --concurrency 4
  agentty worker --pool gpu --model qwen2.5-coder:32b --base-url http://localhost:8000/v1`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			withRunFlags(cmd, f.App)
			return exit(workerRun(cmd.Context(), opts))
		},
	}
	fs := cmd.Flags()
	addRunFlags(fs, f.App)
	registerQueue(&opts.Queue, fs, runtime.NumCPU())
	fs.BoolVar(&f.App.Yes, "yes", false, "approve tools that ask (without it they are denied, unless the run was submitted with --step)")
	return cmd
}

// workerRun is `agentty worker [--pool P] [--concurrency N] [flags]`: take
// run requests from the queue until Ctrl+C, which drains.
func workerRun(ctx context.Context, opts *workerOptions) int {
	q := opts.Queue
	o := *opts.App
	stderr, getenv := opts.Err, opts.Getenv
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty worker: "+format+"\n", a...)
		return code
	}
	if len(opts.Args) > 0 {
		return fail(app.ExitUsage, "unexpected %q (usage: agentty worker [--pool P] [--concurrency N] [flags])", arg(opts.Args, 0))
	}
	url := o.NATSURL(getenv)
	if url == "" {
		return fail(app.ExitUsage, "no NATS server: pass --nats URL or set AGENTTY_NATS_URL (agentty serve runs one, with workers)")
	}
	code, err := worker.Run(ctx, o, q, url, getenv, func(format string, a ...any) {
		fmt.Fprintf(stderr, "agentty worker: "+format+"\n", a...)
	})
	if err != nil {
		return fail(code, "%v", err)
	}
	return 0
}

func registerQueue(q *worker.QueueConfig, fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	DurationVar(*time.Duration, string, time.Duration, string)
	IntSliceVar(*[]int, string, []int, string)
}, workers int) {
	fs.StringVar(&q.Pool, "pool", bus.DefaultPool, "the queue's pool: workers take the requests submitted to it")
	if workers > 0 { // serve has --workers instead
		fs.IntVar(&q.Concurrency, "concurrency", workers, "runs at once")
	}
	fs.IntVar(&q.MaxDeliver, "max-deliver", 5, "times a request is handed out before its run ends with error")
	fs.DurationVar(&q.AckWait, "ack-wait", 30*time.Second, "silence after which a worker is taken for dead and its request handed to another")
	fs.DurationVar(&q.GateTimeout, "gate-timeout", 0, "how long a run submitted with --step waits for a console to answer before it is cancelled (0: forever)")
	fs.IntSliceVar(&q.Partitions, "only-partitions", nil, "take runs from these partitions of the queue only, e.g. 0,2 (default: every one, in turn)")
}
