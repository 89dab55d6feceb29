package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
)

// toolsCmd lists every tool: `agentty tools [--json]`.
func toolsCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("tools", stderr)
	var o app.Options
	register(&o, fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
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
	if *asJSON {
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
