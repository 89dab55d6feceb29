package ui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// The messages Update gets from the commands below, and the commands:
// everything the console waits for or does I/O for runs in them.
type (
	engineEventMsg struct{ ev engine.Event }
	runClosedMsg   struct{ ch <-chan engine.Event }
	gateMsg        struct{ req gateRequest }
	listedMsg      struct {
		list []SessionInfo
		err  error
	}
	openedMsg struct {
		backend Backend
		events  []engine.Event
		err     error
	}
	closedMsg        struct{ err error }
	memoryChangedMsg struct {
		backend Backend // the session it was made on
		ev      engine.Event
		err     error
	}
	// commandDoneMsg is what a slash command did: an event it journaled
	// on the session it ran on, or a session it opened (/clear, /fork),
	// and what to tell the person; or why it failed.
	commandDoneMsg struct {
		name   string
		on     Backend // the session it ran on
		ev     *engine.Event
		open   Backend
		events []engine.Event // open's journaled events
		note   string
		err    error
		// run starts a run on the session it ran on (/workflow).
		run func(context.Context) <-chan engine.Event
		// show is text to show over the panes (/diff), plan a rewind
		// to choose (/rewind).
		show *details
		plan *RewindPlan
	}
)

// The console's I/O is done by these commands, off the Bubble Tea loop;
// their results come back to Update as messages.

// listSessions lists the sessions for the picker.
func listSessions(s Sessions) tea.Cmd {
	return func() tea.Msg {
		l, err := s.List()
		return listedMsg{l, err}
	}
}

// openSession opens a session picked in the picker.
func openSession(s Sessions, id string) tea.Cmd {
	return func() tea.Msg {
		b, evs, err := s.Open(id)
		return openedMsg{b, evs, err}
	}
}

// closeBackend closes a session the console is done with.
func closeBackend(b Backend) tea.Cmd {
	return func() tea.Msg { return closedMsg{b.Close()} }
}

// changeMemory applies and journals the person's edit of a fact.
func changeMemory(b Backend, c engine.MemoryChanged) tea.Cmd {
	return func() tea.Msg {
		ev, err := b.ChangeMemory(c)
		return memoryChangedMsg{b, ev, err}
	}
}

// doCommand does a slash command's I/O (SetModel, Fork, Export, …).
func doCommand(f func() commandDoneMsg) tea.Cmd {
	return func() tea.Msg { return f() }
}

// waitForEvent reads one event of a run; Update re-arms it.
func waitForEvent(ch <-chan engine.Event) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return runClosedMsg{ch}
		}
		return engineEventMsg{ev}
	}
}

// waitForGate reads one pause from the gate; Update re-arms it.
func waitForGate(g *Gate) tea.Cmd {
	return func() tea.Msg { return gateMsg{<-g.requests} }
}
