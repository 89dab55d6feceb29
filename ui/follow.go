package ui

import (
	"context"
	"errors"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// Follow is a session the console follows read-only: its runs go on
// elsewhere (on a worker, in another console) and their events come on
// Events, drawn as if the runs were the console's own. The person cannot
// start runs or change the session; the pauses of its runs that reach the
// console's Gate are answered in the pause bar, as locally.
type Follow struct {
	// Session names the session followed.
	Session string
	// Events are its events after Config.Events (the journal so far),
	// with none twice; the channel is closed when following ends.
	Events <-chan engine.Event
	// Why says why nothing can be started here; it stands in the input
	// box and answers a key that would change the session (default
	// "watching SESSION: read-only").
	Why string
}

// Messages of the followed stream.
type (
	followEventMsg struct{ ev engine.Event }
	followEndedMsg struct{}
)

// waitForFollow reads one event of the followed session; Update re-arms
// it.
func waitForFollow(ch <-chan engine.Event) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return followEndedMsg{}
		}
		return followEventMsg{ev}
	}
}

// readOnly is the Backend of a followed session: it names the session and
// refuses everything that would change it. It is no Commander, so the
// slash commands that change a session say that it is read-only.
type readOnly struct{ id, why string }

var _ Backend = readOnly{}

func (b readOnly) Start(context.Context, string) <-chan engine.Event { return b.refused() }
func (b readOnly) Continue(context.Context) <-chan engine.Event      { return b.refused() }
func (b readOnly) SessionID() string                                 { return b.id }
func (b readOnly) Close() error                                      { return nil }

func (b readOnly) ChangeMemory(engine.MemoryChanged) (engine.Event, error) {
	return engine.Event{}, errors.New(b.why)
}

// refused is a run that is not started: the console never asks for one
// (readOnlyKey), but a run asked for ends at once, saying why.
func (b readOnly) refused() <-chan engine.Event {
	ch := make(chan engine.Event, 1)
	ch <- engine.Refusal(b.id, errors.New(b.why))
	close(ch)
	return ch
}

// setFollow makes the console follow f (from New): a read-only backend
// on its session, no picker, the input box saying why.
func (m *Model) setFollow(f *Follow) {
	if f.Why == "" {
		f.Why = "watching " + f.Session + ": read-only"
	}
	f.Why = flatten(Sanitize(f.Why))
	m.cfg.Backend = readOnly{id: f.Session, why: f.Why}
	m.cfg.Sessions = nil // another session is not opened here
	m.input.Placeholder = f.Why
}

// following reports whether the console follows a session read-only.
func (m *Model) following() bool { return m.cfg.Follow != nil }

// followed applies one message of the followed stream and re-arms it.
func (m *Model) followed(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case followEventMsg:
		m.applyEvent(msg.ev)
		if d, ok := msg.ev.Data.(*engine.RunFinished); ok && msg.ev.ParentRun == "" {
			m.dropPauses(msg.ev.Run, d.StopReason)
		}
		return waitForFollow(m.cfg.Follow.Events)
	case followEndedMsg:
		m.state = "idle"
		m.note = "the live events ended: what is shown is all this console will see"
	}
	return nil
}

// dropPauses takes away the pauses of run (and its sub-runs) once it has
// finished: its gate gave up waiting (no answer within its timeout) or the
// run was cancelled. The answer goes nowhere; the gate's goroutine is let
// go.
func (m *Model) dropPauses(run string, stop engine.StopReason) {
	of := func(r gateRequest) bool {
		return r.pending.Run == run || strings.HasPrefix(r.pending.Run, run+"/")
	}
	keep := m.pauses[:0]
	for _, r := range m.pauses {
		if of(r) {
			r.reply <- engine.Verdict{Action: engine.Abort}
			continue
		}
		keep = append(keep, r)
	}
	m.pauses = keep
	if m.pause != nil && of(*m.pause) {
		m.argsEditor = nil
		m.note = "the run ended (" + string(stop) + ") before its pause was answered"
		m.reply(engine.Verdict{Action: engine.Abort})
		if m.pause == nil {
			m.state = "idle"
		}
	}
}

// readOnlyKey refuses, saying why, a key that would start a run on the
// followed session or change it; it reports whether it took the key. A
// pause's keys are not refused: the person answers them.
func (m *Model) readOnlyKey(msg tea.KeyMsg) bool {
	if !m.following() {
		return false
	}
	k := m.keys
	refuse := key.Matches(msg, k.Continue, k.Sessions)
	if m.pause == nil {
		switch m.focus {
		case focusInput:
			// Slash commands say for themselves whether they can work
			// here (/help and /search can); a task cannot be sent.
			v := strings.TrimSpace(m.input.Value())
			refuse = refuse || key.Matches(msg, k.Send) && v != "" && (!strings.HasPrefix(v, "/") || strings.HasPrefix(v, "//"))
		case focusTimeline:
			refuse = refuse || key.Matches(msg, k.Fork)
		case focusMemory:
			refuse = refuse || key.Matches(msg, k.MemAdd, k.MemEdit, k.MemDelete)
		}
	}
	if refuse {
		m.note = m.cfg.Follow.Why
	}
	return refuse
}
