package ui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// key routes a key. What is in front of the panes (the picker, the
// argument editor, the memory form, the details) has every key; then the
// help's, the keys that mean the same everywhere, a pause's; and the rest
// go to the pane that has the focus, and to it only.
func (m *Model) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	armed := m.armed // a Timeline key that changes something waits for enter
	m.armed = ""
	if armed != "" {
		m.note = "" // its question
	}
	if !key.Matches(msg, k.Cancel) && m.note == noteQuitAsk {
		m.note = ""
	}
	if !key.Matches(msg, k.Cancel) {
		m.quitting = false
	} else if m.picker == nil {
		m.argsEditor, m.memForm, m.detail, m.inspector = nil, nil, nil, nil
		m.closeSearch()
	}
	if cmd, ok := m.frontKey(msg); ok { // what is in front of the panes has every key
		return m, cmd
	}
	if m.completeWorkflow(msg) { // tab after /workflow completes its name
		return m, nil
	}
	if cmd, ok := m.slashKey(msg); ok { // the list of commands, open over the input
		return m, cmd
	}
	if m.mentionKey(msg) { // the list of files "@" opened over the input
		return m, nil
	}
	if cmd, ok := m.graceKey(msg); ok { // a pause just drawn: what is typed is text
		return m, cmd
	}
	if cmd, ok := m.questionKey(msg); ok { // a question's answer is typed in the pause bar
		return m, cmd
	}
	if msg.Paste { // text, wherever the focus is: it is typed into the draft (at a pause too)
		if m.focus != focusInput {
			m.setFocus(focusInput)
		}
		return m.inputKey(msg)
	}
	if m.help.update(msg, k, m.focus == focusInput && m.input.Value() != "") {
		m.layout()
		return m, nil
	}
	if m.readOnlyKey(msg) {
		return m, nil
	}
	if m.pause != nil && (key.Matches(msg, k.PageUp) || key.Matches(msg, k.PageDown)) && m.pauseScrolls() {
		return m.pauseKey(msg) // a long call's arguments page, not the chat
	}
	if cmd, ok := m.globalKey(msg); ok {
		return m, cmd
	}
	if m.pause != nil {
		return m.pauseKey(msg)
	}
	if key.Matches(msg, k.Back) {
		m.setFocus(focusInput)
		return m, nil
	}
	switch m.focus {
	case focusChat:
		if typing(msg, k.Up, k.Down, k.Top, k.Bottom) {
			m.setFocus(focusInput) // a letter no Chat key takes: the person is typing
			return m.inputKey(msg)
		}
		m.chat.update(msg, k)
		return m, nil
	case focusTimeline:
		return m.timelineKey(msg, armed)
	case focusMemory:
		return m.memoryKey(msg)
	}
	return m.inputKey(msg)
}

// timelineKey handles a key of the Timeline pane. A key that changes
// something (f forks, b sets a breakpoint) acts when enter follows it
// (armed is the letter); followed by anything else, it is text, and goes
// to the input with what follows: a word never forks the session.
func (m *Model) timelineKey(msg tea.KeyMsg, armed string) (tea.Model, tea.Cmd) {
	k := m.keys
	changes := key.Matches(msg, k.Fork) || key.Matches(msg, k.BreakHere)
	switch {
	case armed != "" && key.Matches(msg, k.Submit): // enter: what the letter asked for
		m.note = ""
		if armed == "f" {
			return m, m.forkHere()
		}
		if r, ok := m.tl.selected(); ok {
			m.breakOnRow(&r)
		}
		return m, nil
	case changes && armed == "" && msg.Type == tea.KeyRunes:
		m.armed = msg.String()
		what := map[bool]string{true: "forks the session at this step", false: "sets a breakpoint on this row's tool or agent"}[key.Matches(msg, k.Fork)]
		m.note = fmt.Sprintf("enter %s (another key goes on as typed)", what)
		return m, nil
	case armed != "" && msg.Type == tea.KeyRunes && !msg.Alt:
		m.setFocus(focusInput) // the letter before was typed too
		m.input.InsertString(armed)
		m.note = ""
		return m.inputKey(msg)
	case armed != "":
		m.note = ""
	}
	if typing(msg, k.Up, k.Down, k.Fold, k.Detail, k.Fork, k.BreakHere) {
		m.setFocus(focusInput) // a letter no Timeline key takes: the person is typing
		return m.inputKey(msg)
	}
	if m.tl.update(msg, k) {
		if lines := m.tl.detailLines(m.width - 4); lines != nil {
			m.detail = &details{lines: append(lines, m.breakLines(m.width-4)...)}
		}
	}
	return m, nil
}

// typing reports whether msg is text typed (letters, not a key with
// Ctrl or Alt) that none of a pane's bindings takes: it goes to the input,
// rather than being lost on a pane that has no use for it.
func typing(msg tea.KeyMsg, bindings ...key.Binding) bool {
	if msg.Type != tea.KeyRunes || msg.Alt || msg.Paste {
		return false
	}
	for _, b := range bindings {
		if key.Matches(msg, b) {
			return false
		}
	}
	return true
}

// globalKey handles the keys that mean the same whatever has the focus
// (the pgup/pgdn of the Chat among them); ok is false for any other key.
func (m *Model) globalKey(msg tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Cancel):
		return m.ctrlC(), true
	case key.Matches(msg, k.Quit) && !m.running:
		return tea.Quit, true
	case key.Matches(msg, k.NextPane):
		m.cycleFocus(1)
	case key.Matches(msg, k.PrevPane):
		m.cycleFocus(-1)
	case key.Matches(msg, k.StepMode):
		on := !m.gate.Stepping()
		m.gate.SetStep(on)
		m.released = false
		if m.following() {
			m.followStepMode(on)
			return nil, true
		}
		m.note = map[bool]string{true: "step mode on: the run pauses before every decision and tool call", false: "step mode off"}[on]
	case key.Matches(msg, k.Sessions):
		if m.running {
			m.noteOfRun("wait for the run to end (or ctrl+c) before switching sessions")
			return nil, true
		}
		return m.listSessions(), true
	case key.Matches(msg, k.Search):
		return m.openSearch(""), true
	case key.Matches(msg, k.Mouse):
		return m.toggleMouse(), true
	case key.Matches(msg, k.Continue):
		return m.continueRun(), true
	case key.Matches(msg, k.Zoom):
		m.toggleZoom()
	case key.Matches(msg, k.Expand):
		m.chat.expanded = !m.chat.expanded
		m.chat.invalidate()
	case key.Matches(msg, k.PageUp):
		m.chat.scroll(-max(m.chat.height-2, 1))
	case key.Matches(msg, k.PageDown):
		m.chat.scroll(max(m.chat.height-2, 1))
	default:
		return nil, false
	}
	return nil, true
}

func (m *Model) cycleFocus(d int) {
	order := []focus{focusInput, focusChat, focusTimeline, focusMemory}
	i := 0
	for j, f := range order {
		if f == m.focus {
			i = j
		}
	}
	m.setFocus(order[(i+d+len(order))%len(order)])
}

func (m *Model) setFocus(f focus) {
	m.focus = f
	if f == focusInput {
		m.input.Focus()
	} else {
		m.input.Blur()
		m.shown = f
	}
}

// frontKey gives a key to what is in front of the panes (the picker, the
// argument editor, the inspector, the memory form, the details or a
// rewind's plan, the search); ok is false when nothing is.
func (m *Model) frontKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	k := m.keys
	switch {
	case m.picker != nil:
		_, cmd := m.pickerKey(msg)
		return cmd, true
	case m.argsEditor != nil:
		_, cmd := m.editorKey(msg)
		return cmd, true
	case m.inspector != nil:
		_, cmd := m.inspectorKey(msg)
		return cmd, true
	case m.memForm != nil:
		_, cmd := m.memFormKey(msg)
		return cmd, true
	case m.detail != nil && m.rewind != nil && !msg.Paste: // a rewind's plan: a key chooses (text goes to the draft)
		return m.rewindKey(msg), true
	case m.detail != nil && !msg.Paste: // a step's details, or a file's lines over the search
		if m.detail.update(msg, k) {
			m.detail = nil
		}
		return nil, true
	case m.search != nil:
		_, cmd := m.searchKey(msg)
		return cmd, true
	}
	return nil, false
}
