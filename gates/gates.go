package gates

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/replay"
)

// HeadlessGate never pauses on its own; it answers approvals with --yes,
// and the run's questions (ask_user) from Answers, else the person.
type HeadlessGate struct {
	Yes    bool
	Stderr io.Writer
	// Answers (--answers FILE) maps a question's text to its answer.
	Answers map[string]string
	// Person, when set, answers what Answers does not (Asker).
	Person *Asker
}

func (g HeadlessGate) Stop(engine.Pending) bool { return false }

func (g HeadlessGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	if q := p.Question; q != nil {
		if a, ok := g.Answers[q.Question]; ok {
			return engine.Verdict{Action: engine.Proceed, Answer: a, By: "--answers"}, nil
		}
		if g.Person == nil {
			return engine.Verdict{}, errors.New("nobody can answer here: give the answers with --answers FILE")
		}
		v, err := g.Person.Ask(ctx, q)
		if err != nil && g.Answers != nil {
			err = fmt.Errorf("--answers has no answer to %q, and %w", q.Question, err)
		}
		return v, err
	}
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

// ReplayGate is a replay's gate: at the pauses where the recording's
// person gave a result for a tool, edited arguments or edited the request,
// it gives the same again; the rest is HeadlessGate's (edited arguments
// of a tool that asks run only with --yes).
type ReplayGate struct {
	HeadlessGate
	Recorded map[replay.Pause]engine.Verdict
}

func (g ReplayGate) Stop(p engine.Pending) bool {
	_, ok := g.Recorded[replay.PauseOf(p)]
	return ok
}

func (g ReplayGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	v, ok := g.Recorded[replay.PauseOf(p)]
	if !ok || p.Question != nil || p.Approval && v.Action != engine.Respond && !g.Yes {
		return g.HeadlessGate.Wait(ctx, p)
	}
	v.By = "the recording"
	return v, nil
}
