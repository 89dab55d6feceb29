package ui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// ioBackend counts the calls that do I/O in a real backend.
type ioBackend struct {
	s       *engine.Session
	changes int
	closed  int
}

func (b *ioBackend) Start(context.Context, string) <-chan engine.Event { return nil }
func (b *ioBackend) Continue(context.Context) <-chan engine.Event      { return nil }
func (b *ioBackend) ChangeMemory(c engine.MemoryChanged) (engine.Event, error) {
	b.changes++
	return b.s.ChangeMemory(c, nil)
}
func (b *ioBackend) SessionID() string { return b.s.ID }
func (b *ioBackend) Close() error      { b.closed++; return nil }

// ioSessions counts the picker's calls.
type ioSessions struct {
	lists, opens int
	next         *ioBackend
}

func (s *ioSessions) List() ([]SessionInfo, error) {
	s.lists++
	return []SessionInfo{{ID: "b"}}, nil
}

func (s *ioSessions) Open(string) (Backend, []engine.Event, error) {
	s.opens++
	return s.next, nil, nil
}

// TestUpdateDoesNoIO: a memory edit, listing sessions, opening one and
// closing the one left are done by the commands Update returns, never by
// Update itself; their results come back as messages.
func TestUpdateDoesNoIO(t *testing.T) {
	a := &ioBackend{s: engine.NewSession("a")}
	ss := &ioSessions{next: &ioBackend{s: engine.NewSession("b")}}
	m := New(Config{Style: "notty", Backend: a, Sessions: ss})
	m.Update(tea.WindowSizeMsg{Width: 130, Height: 30})
	for range 3 { // input → chat → timeline → memory
		m.Update(tea.KeyMsg{Type: tea.KeyTab})
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a")})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("city = Paris")})
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if a.changes != 0 || cmd == nil {
		t.Fatalf("Update journaled the memory edit itself (%d calls, command %v)", a.changes, cmd != nil)
	}
	m.Update(cmd())
	if a.changes != 1 || !strings.Contains(m.View(), "city = Paris") {
		t.Fatalf("after the command: %d calls, frame:\n%s", a.changes, m.View())
	}

	_, cmd = m.Update(tea.KeyMsg{Type: tea.KeyCtrlO})
	if ss.lists != 0 || cmd == nil {
		t.Fatalf("Update listed the sessions itself (%d calls)", ss.lists)
	}
	m.Update(cmd())
	if m.picker == nil {
		t.Fatal("no picker after the listing came back")
	}
	_, cmd = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if ss.opens != 0 || cmd == nil {
		t.Fatalf("Update opened the session itself (%d calls)", ss.opens)
	}
	_, cmd = m.Update(cmd())
	if m.Backend() != ss.next {
		t.Fatalf("the console is on %s, want b", m.Backend().SessionID())
	}
	if a.closed != 0 || cmd == nil {
		t.Fatalf("Update closed the session left itself (%d calls)", a.closed)
	}
	m.Update(cmd())
	if a.closed != 1 {
		t.Fatalf("the session left was closed %d times by its command, want 1", a.closed)
	}
}
