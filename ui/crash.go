package ui

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	tea "github.com/charmbracelet/bubbletea"
)

// PanicError is what Run returns when the console panicked: in Update, in
// View, or in a command it started. By the time Run returns it, the
// terminal has been restored and the run that was going has been cancelled
// with engine.ErrCrashed and drained, so its run_finished is journaled.
type PanicError struct {
	Value any    // what was passed to panic
	Stack []byte // the panicking goroutine's stack; nil when Bubble Tea caught the panic and printed it
}

// Error implements error.
func (e *PanicError) Error() string { return fmt.Sprintf("ui: the console crashed: %v", e.Value) }

// Unwrap returns the panic's value when it is an error (a runtime error).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// errTeaPanic stands for a panic that Bubble Tea caught itself (outside
// what guard wraps): it printed the stack and restored the terminal.
var errTeaPanic = errors.New("a panic caught by Bubble Tea (its stack is printed above)")

// panicMsg carries a panic recovered in a command back to Update.
type panicMsg struct{ err *PanicError }

// guard runs the root model for Run and turns a panic in Update, View or a
// command into a clean quit: the first panic is kept, and the program ends
// (Update returns tea.Quit; View, which cannot return a command, kills the
// program). Bubble Tea restores the terminal either way.
type guard struct {
	m    *Model
	kill func() // ends the program from View

	mu    sync.Mutex // guards crash: commands panic on their own goroutines
	crash *PanicError
}

func newPanic(v any) *PanicError { return &PanicError{Value: v, Stack: debug.Stack()} }

// record keeps the first panic and reports whether it is the first.
func (g *guard) record(p *PanicError) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.crash != nil {
		return false
	}
	g.crash = p
	return true
}

func (g *guard) crashed() *PanicError {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.crash
}

func (g *guard) Init() (cmd tea.Cmd) {
	defer func() {
		if r := recover(); r != nil {
			g.record(newPanic(r))
			cmd = tea.Quit
		}
	}()
	return guardCmd(g.m.Init(), g)
}

func (g *guard) Update(msg tea.Msg) (model tea.Model, cmd tea.Cmd) {
	if p, ok := msg.(panicMsg); ok {
		g.record(p.err)
	}
	if g.crashed() != nil {
		return g, tea.Quit // after a panic nothing more runs
	}
	defer func() {
		if r := recover(); r != nil {
			g.record(newPanic(r))
			model, cmd = g, tea.Quit
		}
	}()
	_, cmd = g.m.Update(msg)
	return g, guardCmd(cmd, g)
}

func (g *guard) View() (s string) {
	if g.crashed() != nil {
		return ""
	}
	defer func() {
		if r := recover(); r != nil {
			g.record(newPanic(r))
			s = ""
			if g.kill != nil {
				g.kill()
			}
		}
	}()
	return g.m.View()
}

// guardCmd wraps cmd so that a panic in it comes back to Update as a
// panicMsg; the commands of a batch are wrapped in turn. (The commands of a
// tea.Sequence are not: its message type is Bubble Tea's own, and the
// console uses none. Bubble Tea's own recovery still catches those.)
func guardCmd(cmd tea.Cmd, g *guard) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() (msg tea.Msg) {
		defer func() {
			if r := recover(); r != nil {
				p := newPanic(r)
				g.record(p)
				msg = panicMsg{p}
			}
		}()
		msg = cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			wrapped := make(tea.BatchMsg, len(b))
			for i, c := range b {
				wrapped[i] = guardCmd(c, g)
			}
			msg = wrapped
		}
		return msg
	}
}
