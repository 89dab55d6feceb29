package app

import (
	"context"
	"fmt"
	"io"

	"github.com/agentty/agentty/engine"
)

// HeadlessGate never pauses on its own; it answers approvals with --yes.
type HeadlessGate struct {
	Yes    bool
	Stderr io.Writer
}

func (g HeadlessGate) Stop(engine.Pending) bool { return false }

func (g HeadlessGate) Wait(_ context.Context, p engine.Pending) (engine.Verdict, error) {
	if g.Yes {
		return engine.Verdict{Action: engine.Proceed}, nil
	}
	if p.Rerun {
		fmt.Fprintf(g.Stderr, "agentty run: tool call %s was interrupted before; it is not run again (pass --yes to run it again)\n", p.ToolCall.Name)
	} else {
		fmt.Fprintf(g.Stderr, "agentty run: tool call %s needs approval; denied (pass --yes to approve)\n", p.ToolCall.Name)
	}
	return engine.Verdict{Action: engine.Deny}, nil
}
