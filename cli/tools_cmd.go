package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/spf13/cobra"
)

// toolsOptions are the flags and arguments of agentty tools.
type toolsOptions struct {
	*factory
	AsJSON bool
	Args   []string
}

// newToolsCmd binds the flags of its command into its options.
func newToolsCmd(f *factory) *cobra.Command {
	opts := &toolsOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "tools [--json]",
		Short: "List every tool, with its source, policy and schema",
		Example: `  agentty tools
  agentty tools --allow-shell --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			withRunFlags(cmd, f.App)
			return exit(toolsRun(cmd.Context(), opts))
		},
	}
	fs := cmd.Flags()
	addRunFlags(fs, f.App)
	fs.BoolVar(&opts.AsJSON, "json", false, "print JSON")
	return cmd
}

// toolsRun lists every tool: `agentty tools [--json]`.
func toolsRun(ctx context.Context, opts *toolsOptions) int {
	o := *opts.App
	stdout, stderr, getenv := opts.Out, opts.Err, opts.Getenv
	if o.Model == "" {
		o.Model = offline.Name // listing tools needs no model
	}
	st, err := app.Build(ctx, o, nil, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "agentty tools:", err)
		return app.ExitError
	}
	defer st.Close()
	for _, n := range st.Notices {
		fmt.Fprintln(stderr, "agentty tools: warning:", n)
	}
	if opts.AsJSON {
		return printJSON(stdout, st.Rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSOURCE\tPOLICY\tDESCRIPTION")
	for _, r := range st.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Source, r.Policy, engine.OneLine(r.Description, 70))
	}
	tw.Flush()
	return 0
}
