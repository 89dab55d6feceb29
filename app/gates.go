package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agentty/agentty/engine"
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
