package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/hooks"
)

// runEnd ends agentty run's session: its SessionEnd hooks, then the answer
// and the exit code.
func runEnd(ctx context.Context, res engine.Result, o app.Options, st *app.Setup, s *engine.Session, sinks engine.Sink, stdout, stderr io.Writer, fail func(int, string, ...any) int) int {
	if err := hooks.EndSession(ctx, st.Hooks(), s, "other", sinks); err != nil {
		fmt.Fprintln(stderr, "agentty run: warning: SessionEnd hooks:", err)
	}
	return runResult(res, o, st, s, stdout, fail)
}

// runResult prints the answer of a run and returns its exit code.
func runResult(res engine.Result, o app.Options, st *app.Setup, s *engine.Session, stdout io.Writer, fail func(int, string, ...any) int) int {
	switch res.StopReason {
	case engine.StopAnswered:
		if !o.JSON {
			fmt.Fprintln(stdout, res.Answer)
		}
		return app.ExitAnswered
	case engine.StopStepLimit:
		return fail(app.ExitStepLimit, "stopped: step limit of %d reached without an answer", st.Engine.Config().MaxSteps)
	case engine.StopBudget:
		return fail(app.ExitBudget, "stopped: %v (the session is saved; go on with: agentty run --session %s TASK)", res.Err, s.ID)
	case engine.StopCancelled:
		if res.Partial != "" && !o.JSON {
			fmt.Fprintln(stdout, res.Partial) // what the model had said when it was cut off
		}
		return fail(app.ExitCancelled, "cancelled (the session is saved; go on with: agentty run --session %s TASK)", s.ID)
	}
	return fail(app.ExitError, "%v", res.Err)
}
