package ui

import (
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// TestZoomGivesTheFocusedPaneTheWidth: ctrl+z gives the pane that has the
// focus the whole width (the Chat when the input has it), the status line
// says so, tab goes on to the next pane zoomed, a resize keeps the zoom,
// and ctrl+z again (or /zoom) puts the panes side by side.
func TestZoomGivesTheFocusedPaneTheWidth(t *testing.T) {
	m := New(Config{Style: "notty", Backend: &memBackend{s: engine.NewSession("s")}})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	sideBySide := func() bool {
		v := m.View()
		return strings.Contains(v, "┌─ Chat") && strings.Contains(v, "┌─ Timeline") && strings.Contains(v, "┌─ Memory")
	}
	if !sideBySide() || m.chat.width != 160*48/100-2 {
		t.Fatalf("at 160 columns the panes are not side by side (chat %d wide):\n%s", m.chat.width, m.View())
	}
	zoomKey := tea.KeyMsg{Type: tea.KeyCtrlZ}
	m.Update(zoomKey)
	status := func() string { return m.statusLine() }
	if sideBySide() || m.chat.width != 158 || !strings.Contains(m.View(), "┌─ Chat") || !strings.Contains(status(), "zoom Chat") {
		t.Fatalf("zoomed, the Chat has not the whole width (%d) or the status does not say so (%q):\n%s", m.chat.width, status(), m.View())
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(tea.WindowSizeMsg{Width: 170, Height: 48})
	if sideBySide() || m.chat.width != 168 || !strings.Contains(status(), "zoom Chat") {
		t.Fatalf("a resize undid the zoom (chat %d wide):\n%s", m.chat.width, m.View())
	}
	m.Update(tea.KeyMsg{Type: tea.KeyTab}) // the Chat
	m.Update(tea.KeyMsg{Type: tea.KeyTab}) // the Timeline, zoomed
	if v := m.View(); !strings.Contains(v, "┌─ Timeline ─") || strings.Contains(v, "┌─ Chat") || m.tl.width != 168 || !strings.Contains(status(), "zoom Timeline") {
		t.Fatalf("tab did not take the zoom to the Timeline (%d wide, status %q):\n%s", m.tl.width, status(), v)
	}
	m.Update(zoomKey)
	if !sideBySide() || strings.Contains(status(), "zoom Timeline") || m.chat.width != 170*48/100-2 {
		t.Fatalf("ctrl+z again did not put the panes side by side (status %q):\n%s", status(), m.View())
	}
	m.Update(tea.KeyMsg{Type: tea.KeyTab}) // the Memory
	m.Update(zoomKey)
	if v := m.View(); sideBySide() || !strings.Contains(v, "┌─ Memory") || m.mem.width != 168 {
		t.Fatalf("ctrl+z on the Memory did not zoom it:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyEsc}) // back to the input: the Memory stays zoomed
	typeText(m, "/zoom")
	pressRun(m, "enter")
	if !sideBySide() || m.input.Value() != "" {
		t.Fatalf("/zoom did not put the panes back side by side (input %q):\n%s", m.input.Value(), m.View())
	}
	typeText(m, "/zoom")
	pressRun(m, "enter")
	if sideBySide() || m.chat.width != 168 || !strings.Contains(status(), "zoom Chat") {
		t.Fatalf("/zoom from the input did not zoom the Chat:\n%s", m.View())
	}
}

// TestZoomIsInTheHelp: the key is in the footer where it fits, in the
// full help and in the list of commands.
func TestZoomIsInTheHelp(t *testing.T) {
	m := New(Config{Style: "notty", Backend: &memBackend{s: engine.NewSession("s")}})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	if !strings.Contains(m.helpView(false), "ctrl+z zoom pane") || !regexp.MustCompile(`ctrl\+z +zoom pane`).MatchString(m.helpView(true)) {
		t.Errorf("the help does not show ctrl+z:\n%s\n%s", m.helpView(false), m.helpView(true))
	}
	typeText(m, "/zo")
	if v := m.View(); !strings.Contains(v, "/zoom") {
		t.Errorf("the list of commands does not offer /zoom:\n%s", v)
	}
}
