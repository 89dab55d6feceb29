package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/agentty/agentty/agents"
	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
)

// agentsCmd lists the agents: `agentty agents [--json]`. It exits 1 when
// an agent file failed to load (so that CI catches a broken file), 0
// otherwise; the failures are listed either way.
func agentsCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("agents", stderr)
	var o app.Options
	register(&o, fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentty agents: unexpected %q (usage: agentty agents [--json])\n", fs.Arg(0))
		return app.ExitUsage
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
		if !ours[n] && !ours[strings.TrimSuffix(n, " (the agent is not loaded)")] {
			fmt.Fprintln(stderr, "agentty agents: warning:", n)
		}
	}
	code := 0
	if len(a.Errors) > 0 {
		code = app.ExitError
	}
	if *asJSON {
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
	if len(a.Rows) == 0 {
		fmt.Fprintf(stdout, "No agents. Define one in the workspace's .agentty/agents/NAME.md, or in %s for every folder (see docs/agents.md).\n",
			filepath.Join(filepath.Dir(config.Path(getenv)), "agents"))
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
	return code
}

// nonNil is s, or an empty slice for nil (JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
