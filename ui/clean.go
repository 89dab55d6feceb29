package ui

import (
	"encoding/json"

	"github.com/agentty/agentty/engine"
)

// Foreign text in the engine's events (a model's answer, a tool's result,
// a journal's titles) is made safe to draw where the events enter the
// console's state.

// eventCleaner sanitizes the events the console applies. It keeps a
// sanitizer for each stream of text deltas (the answer and the reasoning),
// reset whenever the streamed message ends or starts again.
type eventCleaner struct {
	text, reasoning Sanitizer
}

func (c *eventCleaner) reset() { c.text, c.reasoning = Sanitizer{}, Sanitizer{} }

// event returns ev with every piece of foreign text in it sanitized. The
// payload is copied when something changes, never modified: the engine and
// other subscribers share it.
//
// A sub-run's events (ParentRun set) leave the sanitizers of the streamed
// message alone: the console does not show a sub-run's deltas (see
// Model.applyEvent), and its steps must not cut the top-level run's stream.
func (c *eventCleaner) event(ev engine.Event) engine.Event {
	if s, ok := sanitized(ev.Run); ok {
		ev.Run = s
	}
	if ev.Agent != "" || ev.ParentRun != "" || ev.ParentCall != "" {
		ev.Agent, ev.ParentRun, ev.ParentCall = flatten(Sanitize(ev.Agent)), Sanitize(ev.ParentRun), Sanitize(ev.ParentCall)
	}
	if ev.Workflow != "" || ev.WorkflowStep != "" {
		ev.Workflow, ev.WorkflowStep = flatten(Sanitize(ev.Workflow)), flatten(Sanitize(ev.WorkflowStep))
	}
	if ev.ParentRun != "" {
		c = &eventCleaner{} // its resets below change nothing of the top-level stream's
	}
	switch d := ev.Data.(type) {
	case *engine.TextDelta:
		z := &c.text
		if d.Reasoning {
			z = &c.reasoning
		}
		if s := z.write(d.Text, false); s != d.Text {
			cp := *d
			cp.Text = s
			ev.Data = &cp
		}
		return ev
	case *engine.RunStarted, *engine.StepStarted, *engine.Decided, *engine.RunFinished:
		c.reset()
	case *engine.RetryScheduled:
		if d.Op == "model" {
			c.reset()
		}
	}
	if data, ok := cleanRunData(ev.Data); ok {
		ev.Data = data
	} else if data, ok := cleanOtherData(ev.Data); ok {
		ev.Data = data
	}
	return ev
}

// cleanRunData is data, an event of a run's steps, with its text made
// safe to show: a copy, and true, when something changed.
func cleanRunData(data any) (any, bool) {
	switch d := data.(type) {
	case *engine.RunStarted:
		task, ok1 := sanitized(d.Task)
		model, ok2 := sanitized(d.Model)
		sources, ok3 := sanitizeAll(d.Instructions)
		if ok1 || ok2 || ok3 {
			cp := *d
			cp.Task, cp.Model, cp.Instructions = task, model, sources
			return &cp, true
		}
	case *engine.Decided:
		text, ok1 := sanitized(d.Text)
		reasoning, ok2 := sanitized(d.Reasoning)
		calls, ok3 := sanitizeCalls(d.ToolCalls)
		if ok1 || ok2 || ok3 {
			cp := *d
			cp.Text, cp.Reasoning, cp.ToolCalls = text, reasoning, calls
			return &cp, true
		}
	case *engine.ToolStarted:
		id, ok1 := sanitized(d.ID)
		name, ok2 := sanitized(d.Name)
		args, ok3 := sanitizeArgs(d.Args)
		if ok1 || ok2 || ok3 {
			cp := *d
			cp.ID, cp.Name, cp.Args = id, name, args
			return &cp, true
		}
	case *engine.ToolFinished:
		id, ok1 := sanitized(d.ID)
		name, ok2 := sanitized(d.Name)
		result, ok3 := sanitized(d.Result)
		msg, ok4 := sanitized(d.Error)
		status, ok5 := sanitized(string(d.Status))
		if ok1 || ok2 || ok3 || ok4 || ok5 {
			cp := *d
			cp.ID, cp.Name, cp.Result, cp.Error, cp.Status = id, name, result, msg, engine.ToolStatus(status)
			return &cp, true
		}
	case *engine.GatePaused:
		if d.ToolCall != nil {
			if calls, ok := sanitizeCalls([]engine.ToolCall{*d.ToolCall}); ok {
				cp := *d
				cp.ToolCall = &calls[0]
				return &cp, true
			}
		}
	case *engine.GateResumed:
		if args, ok := sanitizeArgs(d.Args); ok {
			cp := *d
			cp.Args = args
			return &cp, true
		}
	case *engine.RunFinished:
		answer, ok1 := sanitized(d.Answer)
		msg, ok2 := sanitized(d.Error)
		partial, ok3 := sanitized(d.Partial)
		if ok1 || ok2 || ok3 {
			cp := *d
			cp.Answer, cp.Error, cp.Partial = answer, msg, partial
			return &cp, true
		}
	case *engine.RetryScheduled:
		op, ok1 := sanitized(d.Op)
		cause, ok2 := sanitized(d.Cause)
		if ok1 || ok2 {
			cp := *d
			cp.Op, cp.Cause = op, cause
			return &cp, true
		}
	}
	return data, false
}

// cleanOtherData is as cleanRunData for the other events: hand-offs,
// compaction, the model, memory, workflows and notices.
func cleanOtherData(data any) (any, bool) {
	switch d := data.(type) {
	case *engine.Handoff:
		from, ok1 := sanitized(d.From)
		to, ok2 := sanitized(d.To)
		call, ok3 := sanitized(d.Call)
		if ok1 || ok2 || ok3 {
			cp := *d
			cp.From, cp.To, cp.Call = flatten(from), flatten(to), call
			return &cp, true
		}
	case *engine.ContextCompacted:
		summary, ok1 := sanitized(d.Summary)
		model, ok2 := sanitized(d.Model)
		focus, ok3 := sanitized(d.Focus)
		if ok1 || ok2 || ok3 {
			cp := *d
			cp.Summary, cp.Model, cp.Focus = summary, model, focus
			return &cp, true
		}
	case *engine.ModelChanged:
		if s, ok := sanitized(d.Model); ok {
			return &engine.ModelChanged{Model: s}, true
		}
	case *engine.MemoryChanged:
		k, ok1 := sanitized(d.Key)
		v, ok2 := sanitized(d.Value)
		src, ok3 := sanitized(d.Source)
		if ok1 || ok2 || ok3 {
			cp := *d
			cp.Key, cp.Value, cp.Source = k, v, src
			return &cp, true
		}
	case *engine.WorkflowStarted:
		name, ok1 := sanitized(d.Name)
		file, ok2 := sanitized(d.File)
		steps, ok3 := sanitizeAll(d.Steps)
		if ok1 || ok2 || ok3 {
			cp := *d
			cp.Name, cp.File, cp.Steps = flatten(name), file, make([]string, len(steps))
			for i := range steps {
				cp.Steps[i] = flatten(steps[i])
			}
			return &cp, true
		}
	case *engine.WorkflowStepFinished:
		step, ok1 := sanitized(d.Step)
		status, ok2 := sanitized(d.Status)
		out, ok3 := sanitized(d.Output)
		if ok1 || ok2 || ok3 {
			cp := *d
			cp.Step, cp.Status, cp.Output = flatten(step), flatten(status), out
			return &cp, true
		}
	case *engine.WorkflowFinished:
		name, ok1 := sanitized(d.Name)
		status, ok2 := sanitized(d.Status)
		out, ok3 := sanitized(d.Output)
		msg, ok4 := sanitized(d.Error)
		if ok1 || ok2 || ok3 || ok4 {
			cp := *d
			cp.Name, cp.Status, cp.Output, cp.Error = flatten(name), flatten(status), out, msg
			return &cp, true
		}
	case *engine.Notice:
		if s, ok := sanitized(d.Message); ok {
			cp := *d
			cp.Message = s
			return &cp, true
		}
	}
	return data, false
}

// sanitizeAll returns ss sanitized, copied when one of them changes.
func sanitizeAll(ss []string) ([]string, bool) {
	var out []string
	for i, x := range ss {
		if s, ok := sanitized(x); ok {
			if out == nil {
				out = append([]string(nil), ss...)
			}
			out[i] = s
		}
	}
	if out == nil {
		return ss, false
	}
	return out, true
}

// sanitizeArgs sanitizes a tool call's arguments as text. JSON stays JSON:
// the only controls JSON allows are whitespace between its tokens.
func sanitizeArgs(a json.RawMessage) (json.RawMessage, bool) {
	if isClean(string(a)) {
		return a, false
	}
	return json.RawMessage(Sanitize(string(a))), true
}

// sanitizeCalls returns calls with their ids, names and arguments sanitized,
// copied when one of them changes.
func sanitizeCalls(calls []engine.ToolCall) ([]engine.ToolCall, bool) {
	var out []engine.ToolCall
	for i, c := range calls {
		id, ok1 := sanitized(c.ID)
		name, ok2 := sanitized(c.Name)
		args, ok3 := sanitizeArgs(c.Args)
		if !ok1 && !ok2 && !ok3 {
			continue
		}
		if out == nil {
			out = append([]engine.ToolCall(nil), calls...)
		}
		out[i].ID, out[i].Name, out[i].Args = id, name, args
	}
	if out == nil {
		return calls, false
	}
	return out, true
}
