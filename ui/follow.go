package ui

import (
	"context"
	"errors"
	"fmt"
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
		if d, ok := msg.ev.Data.(*engine.GateResumed); ok {
			m.resumedElsewhere(msg.ev, d)
		}
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
	if m.answerPauses(of, engine.Verdict{Action: engine.Abort}) {
		m.note = "the run ended (" + string(stop) + ") before its pause was answered"
		if m.pause == nil {
			m.state = "idle"
		}
	}
}

// trackPauses keeps, from a followed session's events (its journal, then
// live), the pause each run waits at, for resumedElsewhere.
func (m *Model) trackPauses(ev engine.Event) {
	switch d := ev.Data.(type) {
	case *engine.GatePaused:
		if m.remote == nil {
			m.remote = map[string]string{}
		}
		m.remote[ev.Run] = callID(d.ToolCall)
	case *engine.GateResumed, *engine.RunFinished:
		delete(m.remote, ev.Run)
	}
}

// resumedElsewhere takes away the pause that a live gate_resumed says the
// run went on from: another console watching the session answered it (a
// pause asked again goes to whichever console is free), and the answer
// this one would give goes nowhere. The pause is known by run, step,
// phase and, at act, the call its run's last gate_paused held back; a
// pause this console answered is no longer shown when its gate_resumed
// comes.
func (m *Model) resumedElsewhere(ev engine.Event, d *engine.GateResumed) {
	call, ok := m.remote[ev.Run]
	if !ok {
		return // its gate_paused was seen neither in the journal nor live
	}
	of := func(r gateRequest) bool {
		p := r.pending
		return p.Run == ev.Run && p.Step == ev.Step && p.At == ev.Phase && callID(p.ToolCall) == call
	}
	if m.answerPauses(of, engine.Verdict{Action: d.Action, Args: d.Args}) {
		m.note = fmt.Sprintf("the pause at step %d was answered elsewhere (%s)", ev.Step, flatten(Sanitize(string(d.Action))))
	}
}

// answerPauses answers with v the pauses for which of is true, those
// queued and the one shown, and reports whether the one shown was among
// them (the next queued is shown then).
func (m *Model) answerPauses(of func(gateRequest) bool, v engine.Verdict) (shown bool) {
	keep := m.pauses[:0]
	for _, r := range m.pauses {
		if of(r) {
			r.reply <- v // buffered: the gate waits for one verdict
			continue
		}
		keep = append(keep, r)
	}
	clear(m.pauses[len(keep):])
	m.pauses = keep
	if m.pause == nil || !of(*m.pause) {
		return false
	}
	m.argsEditor = nil
	m.reply(v)
	return true
}

// followStepMode is ctrl+t in a followed session, after the gate's step
// mode is set to on. Off, the runs watched go on without step pauses: the
// step pauses shown or queued are answered with proceed, as the gate
// answers those asked from now on; approvals still ask.
func (m *Model) followStepMode(on bool) {
	if on {
		m.note = "step mode on: the runs submitted with --step pause here before every decision and tool call"
		return
	}
	m.answerPauses(func(r gateRequest) bool { return !r.pending.Approval }, engine.Verdict{Action: engine.Proceed})
	m.note = "step mode off: runs you answer go on unpaused (approvals still ask)"
}

// callID is the id of a paused tool call, "" for none (a decide).
func callID(c *engine.ToolCall) string {
	if c == nil {
		return ""
	}
	return c.ID
}

// abortedByEngine is how the engine ends a run aborted at a pause (esc);
// a followed run's end says it in the person's words (followShown).
const abortedByEngine = "aborted at the gate"

// followShown is how a followed session's event is drawn: as it is, but
// that a run aborted at a pause says so in words a person knows. The
// journal and the engine keep their text.
func followShown(ev engine.Event) engine.Event {
	d, ok := ev.Data.(*engine.RunFinished)
	if !ok || !strings.Contains(d.Error, abortedByEngine) {
		return ev
	}
	cp := *d
	cp.Error = strings.ReplaceAll(cp.Error, abortedByEngine, "aborted (esc at a pause)")
	ev.Data = &cp
	return ev
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
