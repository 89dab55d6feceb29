package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// A pause acts on single keys (y approves, e opens the editor, enter
// steps or sends a question's default answer), and it may come while the
// person is typing: the approval bar takes the place of the input box
// mid-word. So a pause ignores the keys for a moment after it is drawn,
// as a browser's download dialog does: typed text goes on into the draft,
// which is kept for after the pause; enter and esc do nothing. The bar
// says when its keys are armed. Ctrl+C and the keys no pause takes act as
// always.

// PauseGrace is how long a pause waits before its keys act: longer than
// the gap between two keys of someone typing, shorter than it takes to
// read what the bar asks.
const PauseGrace = 500 * time.Millisecond

// armMsg redraws the pause bar when its keys are armed.
type armMsg struct{}

// graceNote is the pause bar's line of keys while they are not armed.
const graceNote = "keys are armed in a moment: what you type goes on into your message"

// showPause shows req in the pause bar, its keys armed after the grace.
func (m *Model) showPause(req *gateRequest) tea.Cmd {
	m.pause = req
	if m.cfg.Grace <= 0 {
		return nil
	}
	req.armsAt = m.clock().Add(m.cfg.Grace)
	return tea.Tick(m.cfg.Grace, func(time.Time) tea.Msg { return armMsg{} })
}

// keysArmed reports whether the keys of the pause shown act.
func (m *Model) keysArmed() bool {
	return m.pause == nil || !m.clock().Before(m.pause.armsAt)
}

// clock is the time now (a test's clock, if it set one).
func (m *Model) clock() time.Time {
	if m.now != nil {
		return m.now()
	}
	return time.Now()
}

// graceKey takes a key that comes while the pause's keys are not armed:
// text goes on into the draft, enter and esc are dropped (a note says
// why); ok is false for the keys left to the others (ctrl+c, tab, the
// arrows), which no pause takes as an answer.
func (m *Model) graceKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	if m.keysArmed() {
		return nil, false
	}
	switch msg.Type {
	case tea.KeyRunes, tea.KeySpace, tea.KeyBackspace:
		if msg.Alt {
			return nil, true
		}
		m.setFocus(focusInput)
		_, cmd := m.inputKey(msg) // no enter: nothing is sent
		return cmd, true
	case tea.KeyEnter, tea.KeyEsc:
		m.note = "the pause's keys were not armed yet: that key was not taken as an answer"
		return nil, true
	}
	return nil, false
}
