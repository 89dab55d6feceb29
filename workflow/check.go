package workflow

import (
	"fmt"
	"slices"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
)

// Check says which steps of w name an agent or a tool not among those
// given (a tool step's tool, a task step's tools), before any step runs
// (and spends): each an error naming the file,
// the step's line and field, and the nearest known name when one is
// within two edits. A task step's agent is the workflow's own, not
// checked here.
func (w *Workflow) Check(agents, tools []string) []error {
	var errs []error
	for _, s := range w.Steps {
		for _, name := range s.Tools { // a task step's narrowed tools
			if name == engine.AgentTool || slices.Contains(tools, name) {
				continue
			}
			msg := fmt.Sprintf("%s:%d: steps.%s.tools: no tool %q here", w.File, s.Line, s.ID, name)
			if near := nearest(name, tools); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			errs = append(errs, fmt.Errorf("%s", msg))
		}
		field, name, known, what := "", "", []string(nil), ""
		switch s.Kind {
		case "agent":
			field, name, known, what = "agent", s.Agent, agents, "agent"
		case "tool":
			field, name, known, what = "tool", s.Tool, tools, "tool"
		default:
			continue
		}
		if slices.Contains(known, name) {
			continue
		}
		msg := fmt.Sprintf("%s:%d: steps.%s.%s: no %s %q here", w.File, s.Line, s.ID, field, what, name)
		if near := nearest(name, known); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		} else if name == ShellTool {
			msg += ": it is offered only with --allow-shell"
		}
		errs = append(errs, fmt.Errorf("%s", msg))
	}
	return errs
}

// nearest is the name of names within two edits of s ("" for none).
func nearest(s string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := config.EditDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}
