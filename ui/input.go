package ui

import (
	"context"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// input is the input box: the text being written (a textarea, embedded)
// and the tasks sent before, which ↑/↓ walk.
type input struct {
	textarea.Model
	history []string
	histIdx int
}

// update handles a key while the input box has the focus. Enter returns the
// task written (the console sends it, or says why not, and then calls
// sent); ↑/↓ walk the history while the box is empty or shows a task from
// it; the rest edits the text.
func (in *input) update(msg tea.KeyMsg, k keyMap) (task string, cmd tea.Cmd) {
	switch {
	case key.Matches(msg, k.Send):
		return strings.TrimSpace(in.Value()), nil
	case key.Matches(msg, k.HistoryPrev, k.HistoryNext):
		if in.Value() == "" || in.histIdx < len(in.history) {
			if len(in.history) == 0 {
				return "", nil
			}
			if key.Matches(msg, k.HistoryPrev) {
				in.histIdx = max(in.histIdx-1, 0)
			} else {
				in.histIdx = min(in.histIdx+1, len(in.history))
			}
			if in.histIdx < len(in.history) {
				in.SetValue(in.history[in.histIdx])
			} else {
				in.Reset()
			}
			return "", nil
		}
	}
	in.Model, cmd = in.Model.Update(msg)
	return "", cmd
}

// sent empties the box and keeps task in the history.
func (in *input) sent(task string) {
	in.history = append(in.history, task)
	in.histIdx = len(in.history)
	in.Reset()
}

// inputKey handles a key in the input box, and starts a run on the task
// sent when one can start.
func (m *Model) inputKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	if key.Matches(msg, m.keys.HistoryPrev) && m.unqueue() {
		return m, nil
	}
	if key.Matches(msg, m.keys.Send) && m.queueHeld && strings.TrimSpace(m.input.Value()) == "" {
		m.queueHeld = false // the queue held since ctrl+c goes, in order
		m.note = ""
		return m, m.sendQueued()
	}
	task, cmd := m.input.update(msg, m.keys)
	defer m.growInput()
	if task == "" {
		return m, tea.Batch(cmd, m.listFiles())
	}
	typed := task
	if rest, ok := strings.CutPrefix(task, "/"); ok {
		if !strings.HasPrefix(rest, "/") {
			m.input.sent(task)
			m.slash = slashList{}
			return m, tea.Batch(m.slashCommand(task), m.remember(task))
		}
		task = rest // "//…" sends "/…"
	}
	switch {
	case m.running:
		m.queueTask(typed)
		return m, m.remember(typed)
	case m.opening:
		m.note = "opening the session…"
	case m.saving > 0:
		m.note = "saving the memory edit…"
	case m.commanding > 0:
		m.note = "a command is being carried out…"
	case m.backend == nil:
		m.note = "no session open: ctrl+o to pick one"
	default:
		m.input.sent(typed)
		return m, tea.Batch(m.dispatch(task), m.remember(typed))
	}
	return m, nil
}

// Sheller is a backend that runs the person's "!command": the session's
// own run_shell call, approved as any, its output in the conversation.
type Sheller interface {
	Shell(ctx context.Context, command string) <-chan engine.Event
}

// dispatch sends a message: a "!" command runs in the shell, a message
// with @ mentions goes once its files are read, any other at once.
func (m *Model) dispatch(task string) tea.Cmd {
	if command, ok := strings.CutPrefix(task, "!"); ok {
		if sh, ok := m.backend.(Sheller); ok {
			if command = strings.TrimSpace(command); command == "" {
				m.note = "! runs a shell command in the workspace: !ls"
				return nil
			}
			m.chat.follow = true
			return m.startRun(func(ctx context.Context) <-chan engine.Event { return sh.Shell(ctx, command) })
		}
	}
	if cmd := m.attach(task); cmd != nil {
		m.commanding++ // until the files are read: attached
		return cmd
	}
	return m.send(task)
}

// send starts a run on task, the message as the model reads it.
func (m *Model) send(task string) tea.Cmd {
	m.chat.follow = true
	return m.startRun(func(ctx context.Context) <-chan engine.Event { return m.backend.Start(ctx, task) })
}

func (m *Model) startRun(start func(context.Context) <-chan engine.Event) tea.Cmd {
	ctx, cancel := context.WithCancelCause(context.Background())
	m.cancel = cancel
	m.events = start(ctx)
	m.running, m.released = true, false
	m.state = "thinking"
	m.note = ""
	m.tl.followEnd() // the new run's rows come at the end
	return tea.Batch(waitForEvent(m.events), m.spin.Tick)
}

func (m *Model) continueRun() tea.Cmd {
	if !m.canContinue() {
		m.note = "there is no interrupted run to continue"
		return nil
	}
	if m.saving > 0 {
		m.note = "saving the memory edit…"
		return nil
	}
	return m.startRun(m.backend.Continue)
}

// inputHeight is the height of the input box, or of what stands in its
// place: the pause bar grows with a call's arguments.
func (m *Model) inputHeight() int {
	if m.pause != nil && m.memForm == nil {
		return len(m.pause.draw(m.width, m.gate.Stepping(), m.barLines(), m.keysArmed()))
	}
	return 2 + max(m.input.Height(), 2) + len(m.queueLines(m.width-2))
}

func (m *Model) inputBox() []string {
	w := m.width
	if m.memForm != nil {
		return m.memForm.view(w)
	}
	if m.pause != nil {
		return m.pause.draw(w, m.gate.Stepping(), m.barLines(), m.keysArmed())
	}
	title := "Input"
	if m.gate.Stepping() && !m.following() { // a followed session's runs are not stepped here
		title = "Input (step mode)"
	}
	if m.inputCache == nil {
		lines := append(m.queueLines(w-2), strings.Split(m.input.View(), "\n")...)
		m.inputCache = box(title, m.focus == focusInput, w, len(lines), lines, false)
	}
	return m.inputCache
}
