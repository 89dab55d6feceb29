package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// statusLine draws the status line. What must be seen comes first when it
// has to give way: the state and any error or note are kept, the step and
// step mode (or that a followed session is watched) next, then the
// active agent; the session id, then the model's
// name, are cut first, and "agentty" goes before them.
func (m *Model) statusLine() string {
	state := m.stateWord()
	id := "-"
	if m.backend != nil {
		id = m.backend.SessionID()
	}
	type seg struct {
		text string
		keep int  // segments with the highest keep give way first
		cut  bool // it may be cut short rather than left out
	}
	segs := []seg{{"agentty", 8, false}, {fmt.Sprintf("step %d", m.sess.Steps), 3, false}, {state, 0, false}}
	if m.running && m.wf.active { // the workflow the run carries out: steps done of all
		segs = append(segs, seg{fmt.Sprintf("workflow %s · step %d/%d", m.wf.name, m.wf.done, m.wf.total), 5, true})
	}
	if a := flatten(Sanitize(m.sess.Agent)); a != "" { // the active agent, as the last run_started or handoff said
		segs = append(segs, seg{"agent " + a, 5, true})
	}
	switch {
	case m.following():
		// Its runs are not stepped here: the gate is in step mode so that
		// a run submitted with --step shows its pauses, and the pause bar
		// says when one does.
		w := "watching (read-only)"
		if !m.gate.Stepping() {
			w = "watching, step mode off"
		}
		segs = append(segs, seg{w, 4, true})
	case m.gate.Stepping() && m.released && m.running:
		segs = append(segs, seg{"step mode from the next run", 4, true})
	case m.gate.Stepping():
		segs = append(segs, seg{"step mode", 4, false})
	}
	if m.zoomed {
		segs = append(segs, seg{"zoom " + paneNames[m.shown], 4, false})
	}
	if m.cfg.Status != "" {
		segs = append(segs, seg{styleErr.Render(m.cfg.Status), 2, false})
	}
	if m.out.mouseOff { // until it is taken back: the wheel does not scroll
		segs = append(segs, seg{styleNote.Render("mouse released (ctrl+g)"), 1, false})
	}
	if m.note != "" {
		segs = append(segs, seg{styleNote.Render(flatten(Sanitize(m.note))), 1, false})
	}
	if u := m.sess.Usage; u.Calls > 0 {
		segs = append(segs, seg{u.CostString(), 5, false})
	}
	segs = append(segs, seg{"model " + m.model, 6, true}, seg{"session " + id, 7, true})
	const sep = " · "
	width := func() int {
		n := len(sep) * (len(segs) - 1)
		for _, sg := range segs {
			n += ansi.StringWidth(sg.text)
		}
		return n
	}
	for over := width() - m.width; over > 0; over = width() - m.width {
		last := 0 // the segment to give way
		for i, sg := range segs {
			if sg.keep > segs[last].keep {
				last = i
			}
		}
		sg := segs[last]
		if sg.keep < 2 {
			break // only the state and the note are left: the end is cut below
		}
		if w := ansi.StringWidth(sg.text); sg.cut && w-over >= 10 {
			segs[last].text = ansi.Truncate(sg.text, w-over, "…")
			break
		}
		segs = append(segs[:last], segs[last+1:]...)
	}
	parts := make([]string, len(segs))
	for i, sg := range segs {
		parts[i] = sg.text
	}
	return ansi.Truncate(strings.Join(parts, sep), m.width, "…")
}

// stateWord is what the console is doing, as the status says it: what a
// pause waits for, whatever the run's events said since; a spinner while
// a run goes.
func (m *Model) stateWord() string {
	switch {
	case m.pause != nil && m.pause.pending.Question != nil:
		return "waits for your answer"
	case m.pause != nil:
		return "paused"
	case m.running:
		return m.spin.View() + " " + m.state
	}
	return m.state
}
