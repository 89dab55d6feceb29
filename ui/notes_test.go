package ui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// A status-line note goes with what it was about: the memory form's
// refusal with the form, any note with the session left.
func TestNotesDoNotOutliveTheirCause(t *testing.T) {
	m := New(Config{Model: "script", Style: "notty", Backend: textBackend{}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.setFocus(focusMemory)
	press(m, "a")
	if m.memForm == nil {
		t.Fatal("a did not open the memory form")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("no equals sign")})
	press(m, "enter")
	if m.note != "write it as key = value" {
		t.Fatalf("note after a bad fact: %q", m.note)
	}
	press(m, "esc")
	if m.note != "" || m.memForm != nil {
		t.Errorf("after esc the note is %q", m.note)
	}
	m.note = "something about this session"
	m.Update(openedMsg{backend: textBackend{}})
	if m.note != "" {
		t.Errorf("after a session switch the note is %q", m.note)
	}
}
