package ui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// The input as a daily tool: ctrl+c clears a draft before it cancels or
// quits, and asks before quitting; a message sent while a run goes on is
// queued and sent when the run ends (↑ on an empty input takes the last
// one back to edit or drop); the box grows with its text up to a third of
// the screen, then scrolls.

// The notes of ctrl+c.
const (
	noteDraftCleared = "draft cleared (ctrl+c again, on an empty input, asks to quit; ctrl+d quits)"
	noteQuitAsk      = "ctrl+c again quits (ctrl+d quits at once)"
)

// ctrlC is ctrl+c: a draft is cleared first (outside a pause), then a run
// is cancelled, then the console asks; ctrl+c again after a cancel or the
// question quits. A run cancelled with messages queued holds them (they
// are not sent when it ends, enter on an empty input sends them), and
// ctrl+c again drops them: two presses cancel the run and the queue.
func (m *Model) ctrlC() tea.Cmd {
	switch {
	case m.quitting:
		return tea.Quit
	case len(m.queue) > 0 && m.queueHeld && (m.pause != nil || m.input.Value() == ""):
		m.note = fmt.Sprintf("dropped the %d queued (ctrl+c again asks to quit)", len(m.queue))
		m.queue, m.queueHeld = nil, false
		m.growInput()
	case m.running && len(m.queue) > 0 && (m.pause != nil || m.input.Value() == ""):
		m.cancel(nil)
		m.queueHeld = true
		m.note = fmt.Sprintf("cancelling… the %d queued wait: enter on an empty input sends them, ctrl+c again drops them", len(m.queue))
	case m.pause == nil && m.input.Value() != "":
		m.input.Reset()
		m.input.histIdx = len(m.input.history)
		m.growInput()
		m.note = noteDraftCleared
		if m.running {
			m.note = "draft cleared (ctrl+c again cancels the run)"
		}
	case m.running:
		m.cancel(nil)
		m.note = noteCancelling
		m.quitting = true
	default:
		m.note = noteQuitAsk
		m.quitting = true
	}
	return nil
}

// queueTask keeps a task sent while a run goes on, to send when it ends.
func (m *Model) queueTask(typed string) {
	m.queue = append(m.queue, typed)
	m.input.sent(typed)
	m.growInput()
	m.note = fmt.Sprintf("queued (%d): sent when the run ends · ↑ on an empty input takes the last one back", len(m.queue))
}

// unqueue takes the last queued task back into the empty input, to edit
// (enter queues it again) or drop (ctrl+c). It reports whether it did.
func (m *Model) unqueue() bool {
	if len(m.queue) == 0 || m.input.Value() != "" {
		return false
	}
	last := m.queue[len(m.queue)-1]
	m.queue = m.queue[:len(m.queue)-1]
	m.queueHeld = m.queueHeld && len(m.queue) > 0
	m.input.SetValue(last)
	m.growInput()
	m.note = "taken back from the queue: enter queues it again, ctrl+c drops it"
	return true
}

// sendQueued starts a run on the first queued task, when the console can.
func (m *Model) sendQueued() tea.Cmd {
	if len(m.queue) == 0 || m.queueHeld || m.running || m.backend == nil || m.pause != nil {
		return nil
	}
	task := m.queue[0]
	m.queue = m.queue[1:]
	m.growInput()
	if rest, ok := strings.CutPrefix(task, "//"); ok {
		task = "/" + rest
	}
	return m.dispatch(task)
}

// queueLines are the queued tasks as the input box shows them above the
// text: the first three, then how many more; fewer where the screen is
// short (the input box takes a third of it at most), none on a tiny one.
func (m *Model) queueLines(w int) []string {
	room := min(4, m.height/3-2-max(m.input.Height(), 2))
	var out []string
	for i, q := range m.queue {
		if room <= 0 {
			break
		}
		if i == room-1 && len(m.queue) > room {
			out = append(out, styleDim.Render(fmt.Sprintf("  … %d more queued", len(m.queue)-i)))
			break
		}
		what := "⧗ queued"
		if m.queueHeld {
			what = "⏸ held"
		}
		out = append(out, styleDim.Render(ansi.Truncate(fmt.Sprintf("%s %d: %s", what, i+1, flatten(Sanitize(q))), max(w, 1), "…")))
	}
	return out
}

// inputRows is how many rows the text of the input takes at its width:
// at least two, at most a third of the screen (less the queue's lines).
func (m *Model) inputRows() int {
	w := max(m.input.Width(), 1)
	rows := 0
	for _, l := range strings.Split(m.input.Value(), "\n") {
		rows += max(1, (ansi.StringWidth(l)+w-1)/w)
	}
	most := max(2, m.height/3-2)
	return min(max(rows, 2), most)
}

// growInput sets the input's height to its text, and lays the panes out
// again when it changed.
func (m *Model) growInput() {
	if rows := m.inputRows(); rows != m.input.Height() || len(m.queue) != m.queueShown {
		m.input.SetHeight(rows)
		m.queueShown = len(m.queue)
		m.inputCache = nil
		m.layout()
	}
}
