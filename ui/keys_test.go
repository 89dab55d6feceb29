package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// TestKeysComeFromTheKeyMap: the panes match keys against the one keyMap
// (the one the help shows), so a binding changed there changes what the
// key does, in the root, a pane and a pause alike.
func TestKeysComeFromTheKeyMap(t *testing.T) {
	m := New(Config{Style: "notty", Backend: &memBackend{s: engine.NewSession("s")}})
	m.Update(tea.WindowSizeMsg{Width: 130, Height: 30})
	m.keys.StepMode = key.NewBinding(key.WithKeys("f2"), key.WithHelp("f2", "step mode"))
	m.keys.NextPane = key.NewBinding(key.WithKeys("f3"))
	m.keys.MemAdd = key.NewBinding(key.WithKeys("+"), key.WithHelp("+", "add fact"))

	m.Update(tea.KeyMsg{Type: tea.KeyCtrlT})
	if m.gate.Stepping() {
		t.Error("ctrl+t still turns step mode on after it was rebound")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyF2})
	if !m.gate.Stepping() {
		t.Error("f2, StepMode's key now, does not turn step mode on")
	}
	for range 3 {
		m.Update(tea.KeyMsg{Type: tea.KeyF3})
	}
	if m.focus != focusMemory {
		t.Fatalf("f3 (NextPane) x3: focus %d, want the Memory pane", m.focus)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a")})
	if m.memForm != nil {
		t.Error("a still opens the memory form after MemAdd was rebound")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("+")})
	if m.memForm == nil {
		t.Error("+, MemAdd's key now, does not open the memory form")
	}
}

// TestHelpOverlayFitsItsBox: at 80×24 every key of the help is shown whole
// inside the box (its right column was cut to "…" at the border).
func TestHelpOverlayFitsItsBox(t *testing.T) {
	m := New(Config{Style: "notty", Backend: newStreamBackend()})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	v := m.View()
	if strings.Contains(v, "…│") || !strings.Contains(v, "allow for this session") || !strings.Contains(v, "ctrl+d  quit") {
		t.Errorf("the help at 80×24:\n%s", v)
	}
}
