package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/plugins"
)

// pluginOptions are the flags and arguments of agentty plugin add|ls|rm.
type pluginOptions struct {
	*factory
	Ref  string
	JSON bool
	Arg  string
}

// newPluginCmd is `agentty plugin`, whose commands are add, ls and rm.
func newPluginCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin add|ls|rm",
		Short: "Add, list and remove Claude Code plugins (commands, agents, skills, hooks, MCP servers) and marketplaces",
		Args:  commandArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(f.Err, "agentty plugin: say add, ls or rm (agentty plugin -h)")
			return exit(app.ExitUsage)
		},
	}
	opts := &pluginOptions{factory: f}
	add := &cobra.Command{
		Use:   "add DIR|GIT-URL|NAME@MARKETPLACE [--ref R]",
		Short: "Install a plugin (a folder, copied; a repository, cloned and pinned) or add a marketplace",
		Long: `Copies a plugin's folder, or clones its git repository (pinned to a commit: --ref
picks a branch, a tag or a commit), into the data folder's plugins/. From then on its
commands (as /PLUGIN:name), agents, skills, hooks (hooks/hooks.json) and MCP servers
(.mcp.json) load as your own, everywhere agentty runs. Nothing of a plugin is read or
run before you add it. A folder or repository holding .claude-plugin/marketplace.json
is a marketplace: it is kept by its name and its plugins are listed; add one of them
with NAME@MARKETPLACE. See docs/plugins.md.`,
		Example: `  agentty plugin add ./my-plugin
  agentty plugin add https://github.com/anthropics/claude-plugins-official
  agentty plugin add commit-commands@claude-plugins-official
  agentty plugin add git@github.com:me/plugin.git --ref v1.2.0`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Arg = args[0]
			return exit(pluginAddRun(cmd.Context(), opts))
		},
	}
	add.Flags().StringVar(&opts.Ref, "ref", "", "a git source's branch, tag or commit (default: its default branch)")
	ls := &cobra.Command{
		Use:     "ls [MARKETPLACE] [--json]",
		Short:   "List the plugins installed and what each brings (or a marketplace's plugins)",
		Example: "  agentty plugin ls\n  agentty plugin ls --json\n  agentty plugin ls claude-plugins-official",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Arg = ""
			if len(args) == 1 {
				opts.Arg = args[0]
			}
			return exit(pluginLsRun(opts))
		},
	}
	ls.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	rm := &cobra.Command{
		Use:     "rm NAME",
		Short:   "Remove an installed plugin (or a marketplace)",
		Example: "  agentty plugin rm commit-commands",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Arg = args[0]
			return exit(pluginRmRun(opts))
		},
	}
	rm.ValidArgsFunction = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return installedNames(opts, true), cobra.ShellCompDirectiveNoFileComp
	}
	ls.ValidArgsFunction = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return installedNames(opts, false), cobra.ShellCompDirectiveNoFileComp
	}
	cmd.AddCommand(add, ls, rm)
	return cmd
}

// installedNames are the installed plugins' names (when plugins) and the
// marketplaces', for completion.
func installedNames(opts *pluginOptions, withPlugins bool) []cobra.Completion {
	st, err := pluginStore(opts)
	if err != nil {
		return nil
	}
	recs, markets, _ := st.Installed()
	var out []cobra.Completion
	for _, r := range recs {
		if withPlugins {
			out = append(out, r.Name)
		}
	}
	for _, m := range markets {
		out = append(out, m.Name)
	}
	return out
}

// pluginStore is the data folder's plugins store.
func pluginStore(opts *pluginOptions) (plugins.Store, error) {
	home := opts.App.DataHome(opts.Getenv)
	if home == "" {
		return plugins.Store{}, fmt.Errorf("no data folder (set --data-dir, AGENTTY_HOME or HOME)")
	}
	return plugins.Open(home), nil
}

// pluginAddRun installs a plugin or adds a marketplace, and says what it
// brings or lists.
func pluginAddRun(ctx context.Context, opts *pluginOptions) int {
	st, err := pluginStore(opts)
	if err == nil {
		var a *plugins.Added
		if a, err = st.Add(ctx, opts.Arg, opts.Ref); err == nil {
			printAdded(opts.Out, a)
			return 0
		}
	}
	fmt.Fprintln(opts.Err, "agentty plugin add:", err)
	return app.ExitError
}

// printAdded says what an add did.
func printAdded(w io.Writer, a *plugins.Added) {
	if m := a.Market; m != nil {
		fmt.Fprintf(w, "Added marketplace %s from %s%s: %d %s.\n", m.Name, m.Source, pinned(m.Commit), len(a.Listed), plural(len(a.Listed), "plugin"))
		printEntries(w, m.Name, a.Listed)
	} else {
		r := a.Plugin
		fmt.Fprintf(w, "Added plugin %s%s from %s%s: %s.\n", r.Name, withVersion(r.Version), r.Source, pinned(r.Commit), brings(a.Brings))
	}
	for _, n := range a.Notes {
		fmt.Fprintln(w, "  note:", n)
	}
}

// printEntries lists a marketplace's plugins.
func printEntries(w io.Writer, market string, es []plugins.Entry) {
	for _, e := range es {
		d := e.Description
		if len(d) > 70 {
			d = d[:strings.LastIndex(d[:70], " ")+1] + "…"
		}
		fmt.Fprintf(w, "  %-32s %s\n", e.Name+"@"+market, d)
	}
	if len(es) > 0 {
		fmt.Fprintf(w, "Install one with: agentty plugin add %s@%s\n", es[0].Name, market)
	}
}

func pinned(commit string) string {
	if len(commit) >= 12 {
		return " at commit " + commit[:12]
	}
	return ""
}

func withVersion(v string) string {
	if v != "" {
		return " " + v
	}
	return ""
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// brings says what a plugin brings, counted.
func brings(b plugins.Brings) string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{len(b.Commands), "command"}, {len(b.Agents), "agent"}, {len(b.Skills), "skill"}, {len(b.Hooks), "hook"}, {len(b.MCPServers), "MCP server"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, plural(c.n, c.what)))
		}
	}
	if len(parts) == 0 {
		return "nothing agentty loads"
	}
	return strings.Join(parts, ", ")
}

// pluginRow is one plugin of plugin ls --json.
type pluginRow struct {
	plugins.Record
	Brings plugins.Brings `json:"brings"`
}

// pluginLsRun lists the installed plugins and marketplaces, or one
// marketplace's plugins.
func pluginLsRun(opts *pluginOptions) int {
	fail := func(err error) int {
		fmt.Fprintln(opts.Err, "agentty plugin ls:", err)
		return app.ExitError
	}
	st, err := pluginStore(opts)
	if err != nil {
		return fail(err)
	}
	if opts.Arg != "" {
		es, err := st.Listing(opts.Arg)
		if err != nil {
			return fail(fmt.Errorf("marketplace %s: %v", opts.Arg, err))
		}
		if opts.JSON {
			return writeJSON(opts.Out, es)
		}
		printEntries(opts.Out, opts.Arg, es)
		return 0
	}
	recs, markets, err := st.Installed()
	if err != nil {
		return fail(err)
	}
	set := st.Load()
	rows := make([]pluginRow, 0, len(recs))
	for _, r := range recs {
		row := pluginRow{Record: r}
		if i := slices.IndexFunc(set.Plugins, func(p *plugins.Plugin) bool { return p.Name == r.Name }); i >= 0 {
			row.Brings = set.Plugins[i].Brings()
		}
		rows = append(rows, row)
	}
	if opts.JSON {
		return writeJSON(opts.Out, map[string]any{"plugins": rows, "marketplaces": nonNil(markets), "notes": nonNil(set.Notes)})
	}
	printPlugins(opts.Out, rows, markets, set.Notes)
	return 0
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return app.ExitError
	}
	fmt.Fprintln(w, string(b))
	return 0
}

// printPlugins prints plugin ls's table.
func printPlugins(w io.Writer, rows []pluginRow, markets []plugins.Market, notes []string) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "No plugins. Add one with agentty plugin add DIR|GIT-URL|NAME@MARKETPLACE (see docs/plugins.md).")
	}
	for _, r := range rows {
		from := r.Source
		if r.Marketplace != "" {
			from = "marketplace " + r.Marketplace + " (" + r.Source + ")"
		}
		fmt.Fprintf(w, "%s%s  from %s%s\n  brings %s\n", r.Name, withVersion(r.Version), from, pinned(r.Commit), brings(r.Brings))
		for _, l := range [][]string{r.Brings.Commands, r.Brings.Agents, r.Brings.Skills, r.Brings.MCPServers} {
			if len(l) > 0 {
				fmt.Fprintf(w, "    %s\n", strings.Join(l, ", "))
			}
		}
	}
	for _, m := range markets {
		fmt.Fprintf(w, "marketplace %s  from %s%s (agentty plugin ls %s lists its plugins)\n", m.Name, m.Source, pinned(m.Commit), m.Name)
	}
	for _, n := range notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// pluginRmRun removes an installed plugin or a marketplace.
func pluginRmRun(opts *pluginOptions) int {
	st, err := pluginStore(opts)
	if err == nil {
		if err = st.Remove(opts.Arg); err == nil {
			fmt.Fprintf(opts.Out, "Removed %s.\n", opts.Arg)
			return 0
		}
	}
	fmt.Fprintln(opts.Err, "agentty plugin rm:", err)
	return app.ExitError
}
