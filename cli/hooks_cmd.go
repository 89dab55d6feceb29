package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/hooks"
)

// hooksOptions are the flags of agentty hooks.
type hooksOptions struct {
	*factory
	JSON bool
}

// newHooksCmd binds the flags of agentty hooks.
func newHooksCmd(f *factory) *cobra.Command {
	opts := &hooksOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "hooks [--json]",
		Short: "List the hooks that would run here (Claude Code's settings, agentty's config, plugins), from where, and whether trust lets them",
		Example: `  agentty hooks
  agentty hooks --json | jq '.hooks[] | select(.runs)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit(hooksRun(cmd.Context(), opts))
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// hookRow is a hook as agentty hooks lists it.
type hookRow struct {
	Event   engine.HookEvent `json:"event"`
	Matcher string           `json:"matcher,omitempty"`
	Command string           `json:"command"`
	Timeout string           `json:"timeout"`
	Source  string           `json:"source"`
	Scope   string           `json:"scope"`
	Runs    bool             `json:"runs"`
	Why     string           `json:"why_not,omitempty"`
}

// hooksRun lists the hooks of the person's files and the workspace's.
func hooksRun(ctx context.Context, opts *hooksOptions) int {
	o := *opts.App
	if o.Model == "" {
		o.Model = offline.Name // listing hooks needs no model
	}
	o.MaxSteps = engine.DefaultMaxSteps
	st, err := app.Build(ctx, o, nil, opts.Getenv)
	if err != nil {
		fmt.Fprintln(opts.Err, "agentty hooks:", err)
		return codeOf(err)
	}
	defer st.Close()
	dir := st.Workspace().Dir()
	var rows []hookRow
	for _, d := range st.Hooks().Defs() {
		t := d.Timeout
		if t == 0 {
			t = hooks.DefaultTimeout
		}
		rows = append(rows, hookRow{Event: d.Event, Matcher: d.Matcher, Command: st.Redact(d.Command), Timeout: t.String(),
			Source: d.Where(dir), Scope: d.Scope, Runs: d.Skip == "", Why: d.Skip})
	}
	if opts.JSON {
		return printJSON(opts.Out, map[string]any{"hooks": nonNil(rows), "notes": nonNil(st.Notices)})
	}
	for _, n := range st.Notices {
		fmt.Fprintln(opts.Err, "agentty hooks: warning:", n)
	}
	if len(rows) == 0 {
		fmt.Fprintln(opts.Out, "No hooks. They are read from ~/.claude/settings.json, agentty's config (hooks), the plugins you added, and, in a trusted folder, .claude/settings.json, .claude/settings.local.json and .agentty.json (see docs/hooks.md).")
		return 0
	}
	tw := tabwriter.NewWriter(opts.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EVENT\tMATCHER\tCOMMAND\tFROM\tRUNS")
	for _, r := range rows {
		runs := "yes"
		if !r.Runs {
			runs = "no: " + r.Why
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Event, r.Matcher, engine.OneLine(r.Command, 60), r.Source, runs)
	}
	if err := tw.Flush(); err != nil {
		return codeOf(err)
	}
	return 0
}
