package ui

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// inputKey handles a key in the input box: enter sends the task, ↑/↓ walk
// the tasks sent before, the rest edits the text.
func (m *Model) inputKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch {
	case key.Matches(msg, m.keys.Send):
		task := strings.TrimSpace(m.input.Value())
		if task == "" {
			return m, nil
		}
		if m.running {
			m.note = "a run is going: wait for it, or ctrl+c to cancel it"
			return m, nil
		}
		if m.opening {
			m.note = "opening the session…"
			return m, nil
		}
		if m.saving > 0 {
			m.note = "saving the memory edit…"
			return m, nil
		}
		if m.backend == nil {
			m.note = "no session open: ctrl+o to pick one"
			return m, nil
		}
		m.history = append(m.history, task)
		m.histIdx = len(m.history)
		m.input.Reset()
		m.chat.follow = true
		return m, m.startRun(func(ctx context.Context) <-chan engine.Event { return m.backend.Start(ctx, task) })
	case key.Matches(msg, m.keys.HistoryPrev, m.keys.HistoryNext):
		if m.input.Value() == "" || m.histIdx < len(m.history) {
			if len(m.history) == 0 {
				return m, nil
			}
			if key.Matches(msg, m.keys.HistoryPrev) {
				m.histIdx = max(m.histIdx-1, 0)
			} else {
				m.histIdx = min(m.histIdx+1, len(m.history))
			}
			if m.histIdx < len(m.history) {
				m.input.SetValue(m.history[m.histIdx])
			} else {
				m.input.Reset()
			}
			return m, nil
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
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

func (m *Model) inputBox() []string {
	w := m.width
	if m.memForm != nil {
		return box("Memory: add or edit a fact (enter saves, esc cancels)", true, w, 2, []string{m.memForm.View(), ""}, false)
	}
	if p := m.pause; p != nil {
		what := fmt.Sprintf("⏸ Paused before deciding (step %d)", p.pending.Step)
		if c := p.pending.ToolCall; c != nil {
			verb := "Paused before calling"
			if p.pending.Approval {
				verb = "Approve calling"
			}
			what = fmt.Sprintf("⏸ %s %s %s (step %d)", verb, flatten(Sanitize(c.Name)), flatten(Sanitize(string(c.Args))), p.pending.Step)
		}
		return box("Paused", true, w, 2, []string{stylePause.Render(what), styleDim.Render(pauseKeys[kindOf(p, m.gate.Stepping())])}, false)
	}
	title := "Input"
	if m.gate.Stepping() {
		title = "Input (step mode)"
	}
	if m.inputCache == nil {
		m.inputCache = box(title, m.focus == focusInput, w, 2, strings.Split(m.input.View(), "\n"), false)
	}
	return m.inputCache
}
