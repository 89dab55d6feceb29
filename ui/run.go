package ui

import (
	"errors"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// Run runs the console until the person quits. The terminal is restored on
// exit and on a panic. A panic in Update, View or a command ends the
// program and comes back as a *PanicError, after the run that was going has
// been cancelled with engine.ErrCrashed and drained (for up to 5s), so that
// its run_finished (stop reason error) is journaled.
func Run(m *Model, opts ...tea.ProgramOption) error {
	out := &termOut{f: os.Stdout}
	m.out.clip = out // /copy's OSC 52 goes where the frames go, between them
	opts = append([]tea.ProgramOption{tea.WithAltScreen(), tea.WithMouseCellMotion(), tea.WithOutput(out)}, opts...)
	g := &guard{m: m}
	p := tea.NewProgram(g, opts...)
	g.kill = p.Kill
	_, err := p.Run()
	crash := g.crashed()
	if crash == nil && errors.Is(err, tea.ErrProgramPanic) {
		crash = &PanicError{Value: errTeaPanic}
	}
	for _, b := range m.retired { // their commands may not have run
		b.Close()
	}
	if crash != nil {
		m.cancelWith(engine.ErrCrashed)
		m.Drain(5 * time.Second)
		return crash
	}
	m.Cancel()
	m.Drain(5 * time.Second)
	return err
}

// Cancel cancels the run going on, if any, and what the search is doing.
func (m *Model) Cancel() { m.cancelWith(nil) }

// cancelWith cancels the run going on, if any, with cause (nil:
// context.Canceled).
func (m *Model) cancelWith(cause error) {
	if m.cancel != nil {
		m.cancel(cause)
	}
	if m.search != nil { // and what the search does (indexing, searching)
		m.search.cancel()
	}
}

// Drain waits, after the program has ended, for a cancelled run to finish,
// so that its last events (run_finished) reach the journal before it is
// closed. It gives up after timeout.
func (m *Model) Drain(timeout time.Duration) {
	if m.events == nil {
		return
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case _, ok := <-m.events:
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}

// Backend returns the backend of the session the console has open.
func (m *Model) Backend() Backend { return m.backend }
