package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
)

// toolsCmd lists every tool: `agentty tools [--json]`.
func toolsCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("tools", stderr)
	var o options
	o.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	if o.model == "" {
		o.model = offline.Name // listing tools needs no model
	}
	st, err := build(ctx, o, nil, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "agentty tools:", err)
		return exitError
	}
	defer st.Close()
	for _, n := range st.notices {
		fmt.Fprintln(stderr, "agentty tools: warning:", n)
	}
	if *asJSON {
		return printJSON(stdout, st.rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSOURCE\tPOLICY\tDESCRIPTION")
	for _, r := range st.rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Source, r.Policy, engine.OneLine(r.Description, 70))
	}
	tw.Flush()
	return 0
}

// toolRow describes a tool for `agentty tools`.
type toolRow struct {
	Name        string          `json:"name"`
	Source      string          `json:"source"`
	Policy      engine.Policy   `json:"policy"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}
