package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/agents"
	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
)

// agentsOptions are the flags and arguments of agentty agents.
type agentsOptions struct {
	*factory
	AsJSON bool
	Dir    bool
	Args   []string
}

// newAgentsCmd binds the flags of its command into its options.
func newAgentsCmd(f *factory) *cobra.Command {
	opts := &agentsOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "agents [--json | --dir]",
		Short: "List the agents (.agentty/agents/*.md …) and the files that failed to load",
		Example: `  agentty agents
  agentty agents --json | jq '.agents[].name'
  mkdir -p "$(agentty agents --dir)"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			withRunFlags(cmd, f.App)
			return exit(agentsRun(cmd.Context(), opts))
		},
	}
	fs := cmd.Flags()
	addRunFlags(fs, f.App)
	fs.BoolVar(&opts.AsJSON, "json", false, "print JSON")
	fs.BoolVar(&opts.Dir, "dir", false, "print the folder of your agents, for every workspace, and exit")
	return cmd
}

// agentsRun lists the agents: `agentty agents [--json]`. It exits 1 when
// an agent file failed to load (so that CI catches a broken file), 0
// otherwise; the failures are listed either way.
func agentsRun(ctx context.Context, opts *agentsOptions) int {
	o := *opts.App
	stdout, stderr, getenv := opts.Out, opts.Err, opts.Getenv
	if len(opts.Args) > 0 {
		fmt.Fprintf(stderr, "agentty agents: unexpected %q (usage: agentty agents [--json])\n", arg(opts.Args, 0))
		return app.ExitUsage
	}
	if opts.Dir {
		fmt.Fprintln(stdout, agentsDir(getenv))
		return 0
	}
	if o.Model == "" {
		o.Model = offline.Name // listing agents needs no model of the session's
	}
	st, err := app.Build(ctx, o, nil, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "agentty agents:", err)
		if errors.As(err, new(app.UsageError)) {
			return app.ExitUsage
		}
		return app.ExitError
	}
	defer st.Close()
	a := &st.Agents
	ours := map[string]bool{}
	for _, p := range append(a.Errors, a.Notes...) {
		ours[p.String()] = true
	}
	for _, n := range st.Notices {
		if !ours[n] && !strings.HasSuffix(n, " lists them") {
			fmt.Fprintln(stderr, "agentty agents: warning:", n)
		}
	}
	code := 0
	if len(a.Errors) > 0 {
		code = app.ExitError
	}
	if opts.AsJSON {
		out := struct {
			Agents []agents.Row     `json:"agents"`
			Errors []agents.Problem `json:"errors"`
			Notes  []agents.Problem `json:"notes"`
		}{nonNil(a.Rows), nonNil(a.Errors), nonNil(a.Notes)}
		if c := printJSON(stdout, out); c != 0 {
			return c
		}
		return code
	}
	printAgents(stdout, a, agentsDir(getenv))
	return code
}

// agentsDir is the folder of the person's agents: beside their config.
func agentsDir(getenv func(string) string) string {
	return filepath.Join(filepath.Dir(config.Path(getenv)), "agents")
}

// printAgents lists the agents of a, the files that failed to load and the
// notes. dir is the folder of the person's agents, for every workspace.
func printAgents(stdout io.Writer, a *agents.Set, dir string) {
	if len(a.Rows) == 0 {
		fmt.Fprintf(stdout, "No agents. Define one in the workspace's .agentty/agents/NAME.md, or in %s for every folder (see docs/agents.md).\n", dir)
	}
	for i, r := range a.Rows {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "%s  %s, model %s", r.Name, r.Mode, r.Model)
		if r.MaxSteps > 0 {
			fmt.Fprintf(stdout, ", max %d steps", r.MaxSteps)
		}
		fmt.Fprintf(stdout, "  (%s)\n", r.Source)
		fmt.Fprintf(stdout, "  %s\n", engine.OneLine(r.Description, 100))
		tools := "all the session's"
		if r.Tools != nil {
			tools = strings.Join(r.Tools, ", ")
			if tools == "" {
				tools = "none"
			}
		}
		fmt.Fprintf(stdout, "  tools: %s\n", tools)
	}
	if len(a.Errors) > 0 {
		fmt.Fprintf(stdout, "\nFailed to load (%d):\n", len(a.Errors))
		for _, p := range a.Errors {
			fmt.Fprintf(stdout, "  %s\n", p)
		}
	}
	if len(a.Notes) > 0 {
		fmt.Fprintln(stdout, "\nNotes:")
		for _, p := range a.Notes {
			fmt.Fprintf(stdout, "  %s\n", p)
		}
	}
}

// nonNil is s, or an empty slice for nil (JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
