package ui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// memoryChanged shows a memory change the person made, once saved.
func (m *Model) memoryChanged(msg memoryChangedMsg) (tea.Model, tea.Cmd) {
	m.saving--
	switch {
	case msg.backend != m.backend: // the session was switched meanwhile
	case msg.err != nil:
		m.note = msg.err.Error()
	default:
		m.applyEvent(msg.ev)
	}
	return m, nil
}

// mouse scrolls the chat with the wheel.
func (m *Model) mouse(msg tea.MouseMsg) (tea.Model, tea.Cmd) {
	if msg.Action == tea.MouseActionPress {
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			m.chat.scroll(-3)
		case tea.MouseButtonWheelDown:
			m.chat.scroll(3)
		}
	}
	return m, nil
}

// runClosed ends the run whose events were msg.ch.
func (m *Model) runClosed(msg runClosedMsg) tea.Cmd {
	if msg.ch == m.events {
		m.running, m.events, m.pause, m.pauses, m.released = false, nil, nil, nil, false
		m.layout()
		if m.cancel != nil {
			m.cancel(nil)
			m.cancel = nil
		}
		m.state = "idle"
		if m.note == noteCancelling || m.runNote { // the cancel is done; the run ended
			m.note, m.runNote = "", false
		}
		return m.sendQueued()
	}
	return nil
}

// gated shows a pause of the gate (or queues it behind the one shown).
func (m *Model) gated(msg gateMsg) tea.Cmd {
	req := msg.req
	if req.watchOnly {
		m.state = "paused"
		m.chat.add(&chatItem{kind: itemNote, text: "The run waits at " + pauseWhere(req.pending) + " for its submitter's answer (or the operator's): " +
			"this data folder's steering key is not theirs, so this console only watches it (docs/scale-out.md: who answers a pause)."})
		return waitForGate(m.gate)
	}
	if req.untaken != "" {
		m.chat.add(&chatItem{kind: itemNote, text: "Your answer at " + pauseWhere(req.pending) + " was not taken: " + flatten(Sanitize(req.untaken)) + "."})
		return waitForGate(m.gate)
	}
	// Only a workflow's calls have wf- ids; the pause may come before
	// the console has read the run's workflow_started.
	req.step = flatten(Sanitize(stepOfPending(req.pending)))
	if m.pause != nil {
		// Parallel sub-runs may pause at once: each waits its turn.
		m.pauses = append(m.pauses, req)
		return waitForGate(m.gate)
	}
	arm := m.showPause(&req)
	m.state = "paused"
	if req.pending.Question != nil {
		m.state = "asks you"
	}
	m.layout()       // the pause bar may be taller than the input box
	m.tl.followEnd() // the pending row is at the end
	return tea.Batch(waitForGate(m.gate), arm)
}

// opened switches to the session the picker opened.
func (m *Model) opened(msg openedMsg) tea.Cmd {
	m.opening = false
	jump := m.jump
	m.jump = nil
	if msg.err != nil {
		m.note = msg.err.Error()
		return nil
	}
	if m.running {
		m.noteOfRun("a run is going: finish it before switching sessions")
		return m.retire(msg.backend) // a run began meanwhile: keep what it runs on
	}
	var cmd tea.Cmd
	if m.backend != nil {
		cmd = m.retire(m.backend)
	}
	m.setBackend(msg.backend, msg.events)
	if jump != nil && msg.backend != nil && msg.backend.SessionID() == jump.session {
		m.jumpTo(jump.run, jump.step, jump.kind)
	}
	return cmd
}

// pauseWhere says where a run paused, for a note.
func pauseWhere(p engine.Pending) string {
	switch {
	case p.Question != nil:
		return fmt.Sprintf("a question (step %d)", p.Step)
	case p.ToolCall != nil:
		return fmt.Sprintf("step %d, before calling %s", p.Step, flatten(Sanitize(p.ToolCall.Name)))
	}
	return fmt.Sprintf("step %d, before deciding", p.Step)
}
