package gates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/workflow"
)

// ParseBreaks reads --break conditions into breakpoints that know a
// workflow's steps.
func ParseBreaks(conds []string) (engine.Breakpoints, error) {
	bs := engine.Breakpoints{StepOf: WorkflowStepOf}
	for _, c := range conds {
		b, err := engine.ParseBreak(c)
		if err != nil {
			return bs, err
		}
		bs.List = append(bs.List, b)
	}
	return bs, nil
}

// WorkflowStepOf names the workflow step a pause of a workflow's run
// belongs to ("" for none): the step its call starts, or whose sub-run it
// is in.
func WorkflowStepOf(p engine.Pending) string {
	id := ""
	if p.ParentRun != "" {
		if parts := strings.Split(p.Run, "/"); len(parts) >= 3 {
			id = parts[2]
		}
	} else if p.ToolCall != nil {
		id = p.ToolCall.ID
	}
	step, _, _, _ := workflow.ParseCallID(id)
	return step
}

// DebugGate is the gate of a headless run with --step or --break and
// --json: each pause is the gate_paused event --json prints, and the run
// reads one JSON answer per pause from standard input (docs/debugging.md).
// Approvals and questions are answered the same way (questions from
// --answers first). A bad answer is told (Tell) and read again; when
// standard input ends, the run is aborted at the pause.
type DebugGate struct {
	HeadlessGate
	Step   bool
	Breaks engine.Breakpoints
	In     *Asker
	// Tell says why an answer to p was refused, where the run's events
	// go.
	Tell func(p engine.Pending, msg string)
	// Validate checks edited arguments against the tool's schema (nil:
	// the engine does, after the pause).
	Validate func(name string, args json.RawMessage) error
	// Show prints the model request of a pause before a decision, for
	// edit_request's message indexes (nil: not shown).
	Show func(p engine.Pending)

	mu       sync.Mutex
	released map[string]bool // runs that go on without step pauses
}

// Breakpoints implements engine.Breaker.
func (g *DebugGate) Breakpoints(string) *engine.Breakpoints { return &g.Breaks }

// Stop implements engine.Gate: in step mode, every pause of a run not
// released ("continue").
func (g *DebugGate) Stop(p engine.Pending) bool {
	if !g.Step {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for r := range g.released {
		if p.Run == r || strings.HasPrefix(p.Run, r+"/") {
			return false
		}
	}
	return true
}

// Wait implements engine.Gate: it reads answers until one fits p.
func (g *DebugGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	if q := p.Question; q != nil {
		if a, ok := g.Answers[q.Question]; ok {
			return engine.Verdict{Action: engine.Proceed, Answer: a, By: "--answers"}, nil
		}
	}
	if p.Approval && g.Yes && p.Break == "" && !g.Stop(p) {
		return engine.Verdict{Action: engine.Proceed, By: "--yes"}, nil
	}
	if g.Show != nil && p.At == engine.Decide && p.Request != nil && p.Question == nil {
		g.Show(p)
	}
	for {
		line, err := g.In.readLine(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return engine.Verdict{}, ctx.Err()
			}
			g.Tell(p, "standard input ended at a pause: the run is aborted")
			return engine.Verdict{Action: engine.Abort}, nil
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		v, release, err := g.parse(line, p)
		if err != nil {
			g.Tell(p, fmt.Sprintf("answer refused: %v; answer the pause again (step %d)", err, p.Step))
			continue
		}
		if release {
			g.mu.Lock()
			if g.released == nil {
				g.released = map[string]bool{}
			}
			g.released[p.Run] = true
			g.mu.Unlock()
		}
		return v, nil
	}
}

// pauseAnswer is one line of the protocol.
type pauseAnswer struct {
	Action    string               `json:"action"`
	Arguments json.RawMessage      `json:"arguments"`
	Result    *string              `json:"result"`
	Answer    *string              `json:"answer"`
	System    *string              `json:"system"`
	Messages  []engine.MessageEdit `json:"messages"`
	Note      string               `json:"note"`
}

// parse reads one answer to p; release is set for "continue".
func (g *DebugGate) parse(line string, p engine.Pending) (engine.Verdict, bool, error) {
	var a pauseAnswer
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return engine.Verdict{}, false, fmt.Errorf("not a JSON answer (%v): %q", err, engine.Clip(strings.TrimSpace(line), 80))
	}
	if p.Question != nil {
		return answerQuestion(a)
	}
	call := p.ToolCall != nil
	switch a.Action {
	case "proceed", "continue":
		return engine.Verdict{Action: engine.Proceed}, a.Action == "continue", nil
	case "abort":
		return engine.Verdict{Action: engine.Abort}, false, nil
	case "skip", "deny":
		if !call {
			return engine.Verdict{}, false, fmt.Errorf("%s answers a tool call, and this pause is %s", a.Action, pauseWhat(p))
		}
		return engine.Verdict{Action: engine.Action(a.Action)}, false, nil
	case "edit":
		return g.editArgs(a, p)
	case "respond":
		if !call || a.Result == nil {
			return engine.Verdict{}, false, fmt.Errorf("respond answers a tool call with {\"action\":\"respond\",\"result\":\"…\"}, and this pause is %s", pauseWhat(p))
		}
		return engine.Verdict{Action: engine.Respond, Result: *a.Result}, false, nil
	case "edit_request":
		return editRequest(a, p)
	}
	return engine.Verdict{}, false, fmt.Errorf("unknown action %q (the actions are proceed, continue, skip, deny, abort, edit, respond, edit_request; a question takes {\"answer\":\"…\"})", a.Action)
}

func (g *DebugGate) editArgs(a pauseAnswer, p engine.Pending) (engine.Verdict, bool, error) {
	if p.ToolCall == nil || len(a.Arguments) == 0 {
		return engine.Verdict{}, false, fmt.Errorf("edit answers a tool call with {\"action\":\"edit\",\"arguments\":{…}}, and this pause is %s", pauseWhat(p))
	}
	if g.Validate != nil {
		if err := g.Validate(p.ToolCall.Name, a.Arguments); err != nil {
			return engine.Verdict{}, false, fmt.Errorf("the arguments do not fit %s: %v", p.ToolCall.Name, err)
		}
	}
	return engine.Verdict{Action: engine.Proceed, Args: a.Arguments}, false, nil
}

func editRequest(a pauseAnswer, p engine.Pending) (engine.Verdict, bool, error) {
	if p.Request == nil {
		return engine.Verdict{}, false, fmt.Errorf("edit_request answers a pause before a decision, and this pause is %s", pauseWhat(p))
	}
	e := &engine.RequestEdit{System: a.System, Messages: a.Messages, Note: a.Note}
	if e.Empty() {
		return engine.Verdict{}, false, errors.New("edit_request changes nothing: give system, messages or note")
	}
	if err := e.Check(p.Request); err != nil {
		return engine.Verdict{}, false, err
	}
	return engine.Verdict{Action: engine.Proceed, Edit: e}, false, nil
}

func answerQuestion(a pauseAnswer) (engine.Verdict, bool, error) {
	switch {
	case a.Action == "deny" || a.Action == "skip":
		return engine.Verdict{Action: engine.Deny}, false, nil
	case a.Action == "abort":
		return engine.Verdict{Action: engine.Abort}, false, nil
	case a.Answer == nil:
		return engine.Verdict{}, false, errors.New("the run asks a question: answer {\"answer\":\"…\"} (or {\"action\":\"deny\"} for none)")
	}
	return engine.Verdict{Action: engine.Proceed, Answer: *a.Answer, By: "standard input"}, false, nil
}

// pauseWhat says what a pause holds back, for an error.
func pauseWhat(p engine.Pending) string {
	switch {
	case p.ToolCall != nil:
		return "before calling " + p.ToolCall.Name
	case p.At == engine.Observe:
		return "before the answer"
	}
	return "before a decision"
}
