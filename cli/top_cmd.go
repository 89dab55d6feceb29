package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/fleet"
	"github.com/agentty/agentty/sessions"
)

// topOptions are the flags of agentty top, queue ls and cancel.
type topOptions struct {
	*factory
	Pool   string
	AsJSON bool
	Every  time.Duration
	Args   []string
}

// newTopCmd binds the flags of agentty top.
func newTopCmd(f *factory) *cobra.Command {
	opts := &topOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "top [--pool P] [--json]",
		Short: "What runs and waits across the workers: runs, workers, queues, cost",
		Example: `  agentty top --nats nats://127.0.0.1:4222
  agentty top --json | jq '.running[] | {session, worker, state, step}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return exit(topRun(cmd.Context(), opts)) },
	}
	cmd.Flags().StringVar(&opts.Pool, "pool", "", "only this pool (default: every pool)")
	cmd.Flags().BoolVar(&opts.AsJSON, "json", false, "print one snapshot as JSON and exit")
	cmd.Flags().DurationVar(&opts.Every, "every", 2*time.Second, "how often the screen is drawn again")
	return cmd
}

// fleetConn connects to the NATS server of --nats, for the fleet commands.
func fleetConn(opts *topOptions, name string) (*nats.Conn, error) {
	url := opts.App.NATSURL(opts.Getenv)
	if url == "" {
		return nil, app.Usage(errors.New("no NATS server: pass --nats URL or set AGENTTY_NATS_URL (agentty serve runs one)"))
	}
	return bus.Connect(opts.App.NATSConfig(name, opts.Getenv))
}

// topRun is `agentty top`: a snapshot as JSON; on a terminal the fleet
// screen (Enter on a run opens its console: agentty watch); else one
// snapshot as text.
func topRun(ctx context.Context, opts *topOptions) int {
	fail := func(err error) int {
		fmt.Fprintln(opts.Err, "agentty top:", err)
		return codeOf(err)
	}
	if opts.App.NATSURL(opts.Getenv) == "" {
		return topLocal(opts)
	}
	nc, err := fleetConn(opts, "agentty top")
	if err != nil {
		return fail(err)
	}
	defer nc.Close()
	if opts.AsJSON || !app.OnTerminal(opts.Out) {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		snap, err := fleet.TakeSnapshot(sctx, nc, opts.Pool)
		cancel()
		if err != nil {
			return fail(err)
		}
		if opts.AsJSON {
			return printJSON(opts.Out, snap)
		}
		printSnapshot(opts.Out, snap)
		return 0
	}
	store, err := opts.App.Store(opts.Getenv)
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	watch, err := fleet.RunTop(ctx, nc, store, opts.Pool, max(opts.Every, 200*time.Millisecond))
	if err != nil {
		return fail(err)
	}
	if watch == "" {
		return 0
	}
	return watchRun(ctx, &watchOptions{factory: opts.factory, Args: []string{watch}})
}

// topLocal is agentty top without NATS: the sessions an agentty on this
// machine is running now (their writer's lock is held).
func topLocal(opts *topOptions) int {
	store, err := opts.App.Store(opts.Getenv)
	if err != nil {
		fmt.Fprintln(opts.Err, "agentty top:", err)
		return app.ExitError
	}
	defer store.Close()
	list, err := store.List()
	if err != nil {
		fmt.Fprintln(opts.Err, "agentty top:", err)
		return app.ExitError
	}
	running := []sessions.Listing{}
	for _, l := range list {
		if l.Writing {
			running = append(running, l)
		}
	}
	if opts.AsJSON {
		return printJSON(opts.Out, map[string]any{"running": running})
	}
	fmt.Fprintf(opts.Out, "agentty top · %d running on this machine (in %s; --nats URL shows a fleet)\n\n", len(running), store.Where())
	tw := tabwriter.NewWriter(opts.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSTEP\tUPDATED\tCOST\tMODEL\tTITLE")
	for _, l := range running {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", l.ID, l.LastStep, ago(l.Updated), l.Usage.CostString(), l.Model, l.Title)
	}
	tw.Flush()
	return 0
}

// printSnapshot writes a snapshot as text: the runs, the queues, the
// workers.
func printSnapshot(w io.Writer, s fleet.Snapshot) {
	v := fleet.TopView(s)
	fmt.Fprintf(w, "%s\n\n%s\n", v.Title, v.Head)
	for _, r := range v.Rows {
		fmt.Fprintln(w, r.Line)
	}
	fmt.Fprintf(w, "\n%s\n", strings.Join(v.Foot, "\n"))
}

// newQueueCmd is `agentty queue ls`.
func newQueueCmd(f *factory) *cobra.Command {
	opts := &topOptions{factory: f}
	cmd := &cobra.Command{Use: "queue", Short: "The run requests waiting for a worker"}
	ls := &cobra.Command{
		Use:     "ls [--pool P] [--json]",
		Short:   "List the requests waiting in the queue, oldest first",
		Example: "  agentty queue ls --nats nats://127.0.0.1:4222",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, err := fleetConn(opts, "agentty queue")
			if err != nil {
				fmt.Fprintln(opts.Err, "agentty queue:", err)
				return exit(codeOf(err))
			}
			defer nc.Close()
			snap, err := fleet.TakeSnapshot(cmd.Context(), nc, opts.Pool)
			if err != nil {
				fmt.Fprintln(opts.Err, "agentty queue:", err)
				return exit(app.ExitError)
			}
			if opts.AsJSON {
				return exit(printJSON(opts.Out, snap.Queued))
			}
			if len(snap.Queued) == 0 {
				fmt.Fprintln(opts.Out, "The queue is empty: every request submitted was taken by a worker.")
				return nil
			}
			tw := tabwriter.NewWriter(opts.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "REQUEST\tSESSION\tPOOL\tAGE\tTASK")
			for _, q := range snap.Queued {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", q.Request.ID, q.Request.Session, q.Pool, snap.At.Sub(q.Submitted).Round(time.Second), engine.OneLine(q.Request.Task, 60))
			}
			return tw.Flush()
		},
	}
	ls.Flags().StringVar(&opts.Pool, "pool", "", "only this pool (default: every pool)")
	ls.Flags().BoolVar(&opts.AsJSON, "json", false, "print JSON")
	cmd.AddCommand(ls, newQueueSetupCmd(f), newQueueUsersCmd(f))
	return cmd
}

// newCancelCmd is `agentty cancel SESSION|REQUEST`.
func newCancelCmd(f *factory) *cobra.Command {
	opts := &topOptions{factory: f}
	return &cobra.Command{
		Use:   "cancel SESSION|REQUEST",
		Short: "Cancel a run on any worker at once, or take a request off the queue",
		Example: `  agentty cancel --nats nats://127.0.0.1:4222 0mx4abc123
  agentty top      to see what runs`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fail := func(err error) error {
				fmt.Fprintln(opts.Err, "agentty cancel:", err)
				return exit(codeOf(err))
			}
			nc, err := fleetConn(opts, "agentty cancel")
			if err != nil {
				return fail(err)
			}
			defer nc.Close()
			store, err := opts.App.Store(opts.Getenv)
			if err != nil {
				return fail(err)
			}
			defer store.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
			defer cancel()
			said, err := fleet.Cancel(ctx, nc, store, args[0])
			if err != nil {
				return fail(err)
			}
			fmt.Fprintln(opts.Out, said)
			return nil
		},
	}
}
