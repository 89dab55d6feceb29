package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// A pause acts on single keys (y approves, e opens the editor, enter
// steps or sends a question's default answer), and it may come while the
// person is typing: the approval bar takes the place of the input box
// mid-word. So a pause ignores the keys for a moment after it is drawn,
// as a browser's download dialog does, and for as long as the person goes
// on typing (each key typed in the grace starts it again): typed text goes
// on into the draft, which is kept for after the pause; enter and esc do
// nothing. The bar says when its keys are armed. Ctrl+C and the keys no
// pause takes act as always.

// PauseGrace is how long a pause waits, after it is drawn and after each
// key typed since, before its keys act: longer than the gap between two
// keys of someone typing, shorter than it takes to read what the bar asks.
const PauseGrace = 500 * time.Millisecond

// armMsg redraws the pause bar when its keys are armed.
type armMsg struct{}

// graceNote is the pause bar's line of keys while they are not armed.
const graceNote = "keys are armed once you stop typing: what you type goes into your message"

// showPause shows req in the pause bar, its keys armed after the grace.
func (m *Model) showPause(req *gateRequest) tea.Cmd {
	m.pause = req
	return m.graceAgain()
}

// graceAgain starts the pause's grace (again): its keys are armed when no
// key has come for PauseGrace.
func (m *Model) graceAgain() tea.Cmd {
	if m.cfg.Grace <= 0 {
		return nil
	}
	m.pause.armsAt = m.clock().Add(m.cfg.Grace)
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
// why), and the grace starts again; ok is false for the keys left to the
// others (ctrl+c, tab, the arrows), which no pause takes as an answer.
func (m *Model) graceKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	if m.keysArmed() {
		return nil, false
	}
	switch msg.Type {
	case tea.KeyRunes, tea.KeySpace, tea.KeyBackspace:
		if msg.Alt {
			return m.graceAgain(), true
		}
		m.setFocus(focusInput)
		_, cmd := m.inputKey(msg) // no enter: nothing is sent
		return tea.Batch(cmd, m.graceAgain()), true
	case tea.KeyEnter, tea.KeyEsc:
		m.note = "the pause's keys were not armed yet: that key was not taken as an answer"
		return m.graceAgain(), true
	}
	return nil, false
}
