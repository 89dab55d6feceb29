package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
)

// queueSetupOptions are the flags of agentty queue setup.
type queueSetupOptions struct {
	*factory
	Replicas int
}

// newQueueSetupCmd is `agentty queue setup --replicas N`.
func newQueueSetupCmd(f *factory) *cobra.Command {
	opts := &queueSetupOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "setup [--replicas N]",
		Short: "Make every stream and bucket agentty uses, with N copies each, as the operator",
		Example: `  agentty queue setup --nats nats://a:4222,nats://b:4222,nats://c:4222 --replicas 3
  (agentty serve does it itself, with one copy)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit(queueSetupRun(cmd.Context(), opts))
		},
	}
	cmd.Flags().IntVar(&opts.Replicas, "replicas", 1, "copies of each stream and bucket (3 on a three-node cluster)")
	return cmd
}

// queueSetupRun makes the streams and buckets, records the setting and
// the operator's steering key (this data folder's), and says what is there.
func queueSetupRun(ctx context.Context, opts *queueSetupOptions) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(opts.Err, "agentty queue setup:", err)
		return code
	}
	if opts.Replicas < 1 || opts.Replicas > 5 {
		return fail(app.ExitUsage, fmt.Errorf("--replicas %d: JetStream keeps 1 to 5 copies", opts.Replicas))
	}
	nc, err := fleetConn(&topOptions{factory: opts.factory}, "agentty queue setup")
	if err != nil {
		return fail(codeOf(err), err)
	}
	defer nc.Close()
	signer, err := opts.App.Signer(opts.Getenv, true)
	if err != nil {
		return fail(app.ExitError, err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := bus.Setup(ctx, nc, opts.Replicas, signer); err != nil {
		return fail(app.ExitError, err)
	}
	short, err := bus.CheckReplicas(ctx, nc)
	if err != nil {
		return fail(app.ExitError, err)
	}
	for _, s := range short {
		fmt.Fprintln(opts.Err, "agentty queue setup: warning:", s)
	}
	fmt.Fprintf(opts.Out, "agentty's streams and buckets keep %d %s each; the operator's steering key is this data folder's (%s)\n",
		opts.Replicas, map[bool]string{true: "copy", false: "copies"}[opts.Replicas == 1], opts.App.DataHome(opts.Getenv))
	return 0
}
