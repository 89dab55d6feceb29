package cli

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/nats-io/nats.go"
)

// queueSetupOptions are the flags of agentty queue setup.
type queueSetupOptions struct {
	*factory
	Replicas   int
	Partitions int
	// Check only says who leads what (and what keeps too few copies).
	Check bool
}

// newQueueSetupCmd is `agentty queue setup --replicas N`.
func newQueueSetupCmd(f *factory) *cobra.Command {
	opts := &queueSetupOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "setup [--replicas N] [--partitions K] [--check]",
		Short: "Make every stream and bucket agentty uses, with N copies each, as the operator",
		Example: `  agentty queue setup --nats nats://a:4222,nats://b:4222,nats://c:4222 --replicas 3 --partitions 3
  agentty queue setup --check      which node leads what
  (agentty serve does it itself, with one copy)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit(queueSetupRun(cmd.Context(), opts))
		},
	}
	cmd.Flags().IntVar(&opts.Replicas, "replicas", 1, "copies of each stream and bucket (3 on a three-node cluster)")
	cmd.Flags().IntVar(&opts.Partitions, "partitions", 0, "the journal, the run queue and the sessions' and writers' buckets in K partitions, a session in one (0: as the fleet has them, 1 for a new one); fixed once set")
	cmd.Flags().BoolVar(&opts.Check, "check", false, "set up nothing: say which node leads each stream, and warn when one leads most")
	return cmd
}

// queueSetupRun makes the streams and buckets, records the setting and
// the operator's steering key (this data folder's), and says what is there.
func queueSetupRun(ctx context.Context, opts *queueSetupOptions) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(opts.Err, "agentty queue setup:", err)
		return code
	}
	if opts.Partitions < 0 || opts.Partitions > bus.MaxPartitions {
		return fail(app.ExitUsage, fmt.Errorf("--partitions %d: want 1 to %d (0: as the fleet has them)", opts.Partitions, bus.MaxPartitions))
	}
	if opts.Replicas < 1 || opts.Replicas > 5 {
		return fail(app.ExitUsage, fmt.Errorf("--replicas %d: JetStream keeps 1 to 5 copies", opts.Replicas))
	}
	nc, err := fleetConn(&topOptions{factory: opts.factory}, "agentty queue setup")
	if err != nil {
		return fail(codeOf(err), err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if opts.Check {
		return queueCheck(ctx, opts, nc)
	}
	signer, err := opts.App.Signer(opts.Getenv, true)
	if err != nil {
		return fail(app.ExitError, err)
	}
	layout, err := bus.SetupWith(ctx, nc, bus.Settings{Replicas: opts.Replicas, Partitions: opts.Partitions}, signer)
	if err != nil {
		return fail(app.ExitError, err)
	}
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	err = bus.SpreadLeaders(sctx, nc)
	scancel()
	if err != nil {
		fmt.Fprintln(opts.Err, "agentty queue setup: warning: the leaders were not spread over the nodes:", err)
	}
	short, err := bus.CheckReplicas(ctx, nc)
	if err != nil {
		return fail(app.ExitError, err)
	}
	for _, s := range short {
		fmt.Fprintln(opts.Err, "agentty queue setup: warning:", s)
	}
	fmt.Fprintf(opts.Out, "agentty's streams and buckets keep %d %s each, in %d %s; the operator's steering key is this data folder's (%s)\n",
		opts.Replicas, map[bool]string{true: "copy", false: "copies"}[opts.Replicas == 1], layout.N(), map[bool]string{true: "partition", false: "partitions"}[layout.N() == 1], opts.App.DataHome(opts.Getenv))
	if layout.N() > 1 {
		fmt.Fprintf(opts.Out, "clients that publish the documented subjects need the servers' mappings: agentty queue users --partitions %d\n", layout.N())
	}
	return queueCheck(ctx, opts, nc)
}

// queueCheck says which node leads each of agentty's streams and buckets,
// and warns when one leads more than half of them.
func queueCheck(ctx context.Context, opts *queueSetupOptions, nc *nats.Conn) int {
	leads, err := bus.Leaders(ctx, nc)
	if err != nil {
		fmt.Fprintln(opts.Err, "agentty queue setup:", err)
		return app.ExitError
	}
	for _, l := range leads {
		fmt.Fprintf(opts.Out, "%-24s led by %s\n", l.Stream, cmp.Or(l.Leader, "(this server: no cluster)"))
	}
	if node, n := bus.Crowded(leads); node != "" {
		fmt.Fprintf(opts.Err, "agentty queue setup: warning: %s leads %d of the %d streams and buckets: it orders most of the fleet's synced writes (agentty queue setup spreads them again)\n", node, n, len(leads))
	}
	return 0
}
