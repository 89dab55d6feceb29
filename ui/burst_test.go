package ui

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// startsBackend counts the runs a console starts.
type startsBackend struct {
	memBackend
	starts []string
}

func (b *startsBackend) Start(_ context.Context, task string) <-chan engine.Event {
	b.starts = append(b.starts, task)
	return nil
}

// bindingNames are the names of every key of every binding of k that is
// more than one character ("enter", "up", "tab", "ctrl+c", "pgdown"):
// the words a burst of typing can spell.
func bindingNames(k keyMap) []string {
	var names []string
	v := reflect.ValueOf(k)
	for i := range v.NumField() {
		if b, ok := v.Field(i).Interface().(key.Binding); ok {
			for _, n := range b.Keys() {
				if len([]rune(n)) > 1 {
					names = append(names, n)
				}
			}
		}
	}
	return names
}

// TestBurstsAreText: a burst of characters in one read (SSH, mosh,
// dictation, a paste without bracketed paste) is text, whatever it spells
// and whichever pane has the focus: it lands in the draft as typed, and no
// binding acts (nothing is sent, no pane or history moves, nothing quits).
// Two esc presses in one read are each handled.
func TestBurstsAreText(t *testing.T) {
	names := append(bindingNames(newKeyMap()), "press enter", "use tab", "go up now", "esc key", "the home page", "tidy up the repo")
	for _, focus := range []focus{focusInput, focusChat, focusTimeline, focusMemory} {
		for _, name := range names {
			b := &startsBackend{memBackend: memBackend{s: engine.NewSession("s")}}
			m := New(Config{Style: "notty", Backend: b})
			m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
			m.setFocus(focus)
			_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(name)})
			if got := m.input.Value(); got != name || m.focus != focusInput || len(b.starts) > 0 || quits(cmd) {
				t.Errorf("a burst %q on pane %d: draft %q, focus %d, sent %q, quits %v", name, focus, got, m.focus, b.starts, quits(cmd))
			}
			m.Update(tea.KeyMsg{Type: tea.KeyEnter}) // a single key still acts
			if len(b.starts) != 1 || b.starts[0] != strings.TrimSpace(name) {
				t.Errorf("enter after the burst %q sent %q", name, b.starts)
			}
		}
	}
	m := New(Config{Style: "notty", Backend: &memBackend{s: engine.NewSession("s")}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	m.setFocus(focusTimeline)
	m.Update(tea.KeyMsg{Type: tea.KeyEsc, Alt: true})
	if m.focus != focusInput {
		t.Errorf("two esc presses in one read: focus %d, want the input (esc goes back)", m.focus)
	}
}

// quits reports whether cmd is tea.Quit (cmds are not run: some wait).
func quits(cmd tea.Cmd) bool {
	return cmd != nil && reflect.ValueOf(cmd).Pointer() == reflect.ValueOf(tea.Quit).Pointer()
}

// TestExitAndQuitQuit: /exit and /quit quit, as ctrl+d does, when no run
// is going on.
func TestExitAndQuitQuit(t *testing.T) {
	for _, c := range []string{"/exit", "/quit"} {
		m := New(Config{Style: "notty", Backend: &memBackend{s: engine.NewSession("s")}})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
		m.input.SetValue(c)
		if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter}); !quits(cmd) {
			t.Errorf("%s does not quit", c)
		}
	}
}
