package engine

import "slices"

// EditedNote ends the history's result of a tool call whose arguments the
// person edited at its pause: the model's own call shows the arguments
// that ran, and this says they are not the ones it sent.
const EditedNote = "\n\n[note: the person edited this call's arguments before it ran; the call above shows the arguments that ran]"

// editable remembers the call a pause before a tool call is about, for a
// gate_resumed with edited arguments that follows it.
func (s *Session) editable(d *GatePaused) {
	s.pausedCall = ""
	if d.At == Act && d.ToolCall != nil {
		s.pausedCall = d.ToolCall.ID
	}
}

// applyEdit makes the history's last decision show the arguments the
// person gave the paused call (GateResumed.Args), so that the next request
// holds the call as it ran, not as the model first sent it; its result
// gets EditedNote.
func (s *Session) applyEdit(d *GateResumed) {
	id := s.pausedCall
	s.pausedCall = ""
	if id == "" || len(d.Args) == 0 || len(s.History) == 0 || d.Action != Proceed {
		return // only a call that goes on runs with the arguments given
	}
	last := len(s.History) - 1
	m := &s.History[last]
	i := slices.IndexFunc(m.ToolCalls, func(c ToolCall) bool { return c.ID == id })
	if m.Role != RoleAssistant || i < 0 {
		return
	}
	before := estimateMessage(m)
	calls := slices.Clone(m.ToolCalls) // the decision's event holds the first ones
	calls[i].Args = d.Args
	m.ToolCalls = calls
	s.tokens[len(s.tokens)-1] += estimateMessage(m) - before
	s.edited = append(s.edited, id)
}

// edited says what v changed: "request", "arguments" or "".
func (v Verdict) edited() string {
	switch {
	case v.Edit != nil:
		return "request"
	case v.Args != nil:
		return "arguments"
	}
	return ""
}
