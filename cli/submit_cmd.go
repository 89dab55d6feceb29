package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/console"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/gates"
	"github.com/agentty/agentty/sessions"
	"github.com/nats-io/nats.go"
)

// submitOptions are the flags and arguments of agentty submit.
type submitOptions struct {
	*factory
	Pool string
	Step bool
	Wait bool
	Args []string
}

// newSubmitCmd binds the flags of its command into its options.
func newSubmitCmd(f *factory) *cobra.Command {
	opts := &submitOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "submit [flags] TASK",
		Short: "Queue a run for a worker and print its session id",
		Example: `  agentty submit --nats nats://127.0.0.1:4222 "summarise the open issues"
  agentty submit --wait --agent reviewer "review the last commit"
  agentty submit --step TASK      then answer its pauses: agentty watch ID`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			return exit(submitRun(cmd.Context(), opts))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.App.Session, "session", "", "run in this session (default: a new one)")
	fs.StringVar(&opts.Pool, "pool", bus.DefaultPool, "the pool whose workers take it")
	fs.BoolVar(&opts.Step, "step", false, "pause before each decide and tool call until a console watching the session (agentty watch ID) answers")
	addBreakFlag(fs, f.App)
	fs.BoolVar(&opts.Wait, "wait", false, "follow the run and exit with run's exit codes: 0 answered, 1 error, 3 step limit, 130 cancelled")
	fs.BoolVar(&f.App.JSON, "json", false, "with --wait, print every event as one JSON line")
	cmd.RegisterFlagCompletionFunc("session", completeSessions(f))
	return cmd
}

// submitRun is `agentty submit [flags] TASK`: put a run request on the
// queue and print its session's id; with --wait, follow the run and exit as
// `agentty run` would.
func submitRun(ctx context.Context, opts *submitOptions) int {
	o := *opts.App
	stdin, stdout, stderr, getenv := opts.In, opts.Out, opts.Err, opts.Getenv
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty submit: "+format+"\n", a...)
		return code
	}
	task, err := taskArg(opts.Args, stdin)
	if err != nil {
		return fail(app.ExitError, "reading the task: %v", err)
	}
	if err := submitCheck(opts, task); err != nil {
		return fail(app.ExitUsage, "%v", err)
	}
	nc, err := bus.Connect(o.NATSConfig("agentty submit", getenv))
	if errors.As(err, new(bus.UsageError)) {
		return fail(app.ExitUsage, "%v", err)
	}
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	defer nc.Close()
	store, err := o.Store(getenv)
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	defer store.Close()
	signer, err := o.Signer(getenv, true)
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	req := bus.RunRequest{ID: sessions.NewID(), Session: o.Session, Task: task, Agent: o.Agent, Model: o.Model, Step: opts.Step, Breaks: o.Breaks,
		Submitted: time.Now().UTC()}
	if signer != nil {
		req.Steer = signer.Public()
	}
	if req.Session == "" {
		// Listed (and watchable) at once, from its request on the queue.
		req.Session = sessions.NewID()
	} else if _, err := store.Meta(req.Session); err != nil {
		return fail(app.ExitError, "%v", err)
	}
	var events *nats.Subscription
	var ch chan *nats.Msg
	if opts.Wait { // subscribed before the request is out: nothing is missed
		ch = make(chan *nats.Msg, 4096)
		if events, err = nc.ChanSubscribe(bus.Filter(req.Session), ch); err == nil {
			err = nc.Flush()
		}
		if err != nil {
			return fail(app.ExitError, "subscribe: %v", err)
		}
		defer events.Unsubscribe()
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second) // through a leader election
	defer cancel()
	queue, err := bus.OpenQueue(sctx, nc)
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	if _, err := queue.Submit(ctx, opts.Pool, req); err != nil { // tried again for a while during an election
		return fail(app.ExitError, "%v", err)
	}
	fmt.Fprintln(stdout, req.Session)
	follow := "--nats " + o.NATSURL(getenv)
	if url := o.NATSURL(getenv); url != bus.Redact(url) {
		follow = "--nats URL" // the URL holds a password: not printed; the same one as here
	}
	fmt.Fprintf(stderr, "agentty submit: queued in pool %q; follow it with: agentty watch %s %s\n", opts.Pool, follow, req.Session)
	submitWorkers(sctx, queue, opts.Pool, stderr)
	if opts.Step {
		fmt.Fprintf(stderr, "agentty submit: the run pauses before each decision and tool call until a console answers (agentty watch %s)\n", req.Session)
	} else if len(o.Breaks) > 0 {
		fmt.Fprintf(stderr, "agentty submit: the run pauses at %s until a console answers (agentty watch %s)\n", strings.Join(o.Breaks, " or "), req.Session)
	}
	if !opts.Wait {
		return 0
	}
	return followRun(ctx, store, req, ch, o.JSON, stdout, stderr)
}

// submitCheck refuses a request that no worker should get, before anything
// is queued.
func submitCheck(opts *submitOptions, task string) error {
	o := opts.App
	switch {
	case task == "":
		return fmt.Errorf("no task given (usage: agentty submit [--pool P] [--session ID] [--wait] TASK)")
	case strings.TrimSpace(opts.Pool) == "":
		return fmt.Errorf("--pool is empty (the default pool is %q)", bus.DefaultPool)
	case o.JSON && !opts.Wait:
		return fmt.Errorf("--json prints the run's events: it needs --wait")
	case strings.HasPrefix(o.Model, "script:"):
		// A worker refuses it (a file on its machine, named by whoever can
		// submit); said here, before anything is queued.
		return fmt.Errorf("--model %s: a submitted run may not name a script model (a worker's own --model may)", o.Model)
	}
	if _, err := gates.ParseBreaks(o.Breaks); err != nil {
		return fmt.Errorf("--break: %v", err)
	}
	if o.Session != "" {
		if err := sessions.CheckID(o.Session); err != nil {
			return fmt.Errorf("--session: %v", err)
		}
	}
	if o.NATSURL(opts.Getenv) == "" {
		return errors.New("no NATS server: pass --nats URL or set AGENTTY_NATS_URL (agentty serve runs one)")
	}
	return nil
}

// submitWorkers says when no worker takes the pool's runs now: the run
// waits for one.
func submitWorkers(ctx context.Context, queue *bus.Queue, pool string, stderr io.Writer) {
	idle := func() (bool, bool) {
		waiting, running, ok, err := queue.Takers(ctx, pool)
		return err == nil && waiting == 0 && running == 0, ok
	}
	if none, ok := idle(); none && ok {
		time.Sleep(1200 * time.Millisecond) // a worker between two pulls waits at most a second
		none, ok = idle()
	}
	if none, ok := idle(); none {
		why := "no worker has served it yet"
		if ok {
			why = "no worker is taking its runs now"
		}
		fmt.Fprintf(stderr, "agentty submit: pool %q: %s; the run waits for one (agentty worker --pool %s, or agentty serve)\n", pool, why, pool)
	}
}

// followRun waits for the request's run (the one whose run_started names
// the request) to finish: its live events, and the journal every few
// seconds in case they were missed (a reconnect). It prints the answer (or
// every event with --json) and returns run's exit code.
func followRun(ctx context.Context, store *sessions.Store, req bus.RunRequest, ch <-chan *nats.Msg, asJSON bool, stdout, stderr io.Writer) int {
	run := ""
	enc := json.NewEncoder(stdout)
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	seen := map[console.Key]bool{}
	for {
		var fin *engine.RunFinished
		select {
		case <-ctx.Done():
			fmt.Fprintf(stderr, "agentty submit: stopped waiting; the run goes on (agentty watch %s)\n", req.Session)
			return app.ExitCancelled
		case m := <-ch:
			ev, err := engine.DecodeEvent(m.Data)
			if err != nil {
				continue
			}
			if d, ok := ev.Data.(*engine.RunStarted); ok && d.Request == req.ID && ev.ParentRun == "" {
				run = ev.Run
			}
			if asJSON && !seen[console.KeyOf(ev)] {
				seen[console.KeyOf(ev)] = true
				enc.Encode(json.RawMessage(m.Data))
			}
			if d, ok := ev.Data.(*engine.RunFinished); ok && run != "" && ev.Run == run && ev.ParentRun == "" {
				fin = d
			}
		case <-tick.C:
			l, _ := store.Load(req.Session)
			if l == nil {
				continue
			}
			if id, done := app.RequestRun(l.Events, req.ID); done {
				run = id
				for _, ev := range l.Events {
					if d, ok := ev.Data.(*engine.RunFinished); ok && ev.Run == run && ev.ParentRun == "" {
						fin = d
					}
				}
			}
		}
		if fin == nil {
			continue
		}
		switch fin.StopReason {
		case engine.StopAnswered:
			if !asJSON {
				fmt.Fprintln(app.TermSafe(stdout), fin.Answer)
			}
			return app.ExitAnswered
		case engine.StopStepLimit:
			fmt.Fprintf(stderr, "agentty submit: stopped: step limit reached without an answer\n")
			return app.ExitStepLimit
		case engine.StopCancelled:
			fmt.Fprintf(stderr, "agentty submit: cancelled: %s\n", fin.Error)
			return app.ExitCancelled
		case engine.StopBudget:
			fmt.Fprintf(stderr, "agentty submit: stopped: %s\n", fin.Error)
			return app.ExitBudget
		}
		fmt.Fprintf(stderr, "agentty submit: %s\n", fin.Error)
		return app.ExitError
	}
}
