package ui

import (
	"github.com/agentty/agentty/engine"
)

// applyEvent applies an event of the session's runs to the console: the
// session's state (the engine's fold), the panes, and the status.
func (m *Model) applyEvent(ev engine.Event) {
	if d, ok := ev.Data.(*engine.ModelRequest); ok {
		m.noteRequest(ev.Run, d)
	}
	if m.following() {
		m.trackPauses(ev)
		ev = followShown(ev)
	}
	if ev.ParentRun != "" {
		m.applySubEvent(ev)
		return
	}
	raw := ev.Data         // an answer's text as written, for /copy
	ev = m.clean.event(ev) // foreign text is made safe here, before anything measures it
	// The engine's fold, the one place state is derived: a bad sequence
	// (a tool result for no call) leaves the session as it was.
	_ = m.sess.Apply(ev)
	m.chat.apply(ev)
	m.chat.keepRaw(raw)
	m.tl.apply(ev)
	m.mem.apply(ev)
	m.wf.apply(ev)
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		m.state = "thinking"
		if d.Model != "" {
			m.model = flatten(d.Model)
		}
	case *engine.Checkpointed:
		m.checkpointNotes(d)
	case *engine.ModelChanged:
		m.model = flatten(d.Model)
	case *engine.GateResumed, *engine.StepStarted:
		m.state = "thinking"
	case *engine.TextDelta:
		if d.Reasoning {
			m.state = "reasoning" // the detail view shows it once decided
		} else {
			m.state = "answering"
		}
	case *engine.ToolStarted:
		m.state = "running " + d.Name
	case *engine.GatePaused:
		m.state = "paused"
	case *engine.RunFinished:
		m.state = "idle"
		if m.running && !m.wide() && m.shown != focusChat && m.focus == focusInput {
			m.shown = focusChat // a narrow terminal shows one pane: the answer's, once it comes
		}
	}
}

// applySubEvent applies an event of a sub-run (a delegation to an agent).
// Its streamed text is not shown (the sub-run's answer is, in its
// delegation line), and its run_finished is not the end of the run the
// console waits for: that is the top-level run's (ParentRun ""). The state
// says which agent does what.
func (m *Model) applySubEvent(ev engine.Event) {
	agent := flatten(Sanitize(ev.Agent))
	if agent == "" {
		agent = "agent"
	}
	if d, ok := ev.Data.(*engine.TextDelta); ok {
		if d.Reasoning {
			m.state = agent + ": reasoning"
		} else {
			m.state = agent + ": answering"
		}
		return
	}
	ev = m.clean.event(ev)
	_ = m.sess.Apply(ev)
	m.chat.apply(ev)
	m.tl.apply(ev)
	m.mem.apply(ev)
	switch d := ev.Data.(type) {
	case *engine.RunStarted, *engine.GateResumed, *engine.StepStarted:
		m.state = agent + ": thinking"
	case *engine.ToolStarted:
		m.state = agent + ": running " + d.Name
	case *engine.GatePaused:
		m.state = "paused"
	case *engine.RunFinished:
		m.state = "running " + agentTool // the call that started it is still going
	}
}
