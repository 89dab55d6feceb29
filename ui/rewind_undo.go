package ui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"
)

// /rewind undo takes the session's last rewind back: at once when it
// overwrites nothing changed since and nobody else's work, else after
// showing its plan as /rewind STEP does. A plan that writes or removes
// files other sessions' steps made or changed asks twice: the key that
// chooses, then y over a page naming those files.

// rewindChoice is what the person chose on a plan (files, conversation),
// waiting for the second yes.
type rewindChoice struct{ files, convo bool }

// undoCommand runs /rewind undo (or --undo).
func (m *Model) undoCommand(r Rewinder) tea.Cmd {
	return m.runCommand("rewind", func() commandDoneMsg {
		ctx := context.Background()
		p, err := r.PlanUndo(ctx)
		if err != nil {
			return commandDoneMsg{err: err}
		}
		if len(p.Write)+len(p.Remove) > 0 && (len(p.HandChanged) > 0 || len(p.Others) > 0) {
			return commandDoneMsg{plan: p, show: rewindDetails(p)}
		}
		said, err := r.RewindFiles(ctx, p, false, false)
		return commandDoneMsg{err: err, note: said}
	})
}

// keys names the keys of a plan that rewind its files.
func (p *RewindPlan) keys() string {
	if p.Undo {
		return "u"
	}
	return "f or b"
}

// othersLines are the plan's lines on other sessions' files.
func othersLines(p *RewindPlan) []string {
	if len(p.Others) == 0 {
		return nil
	}
	lines := []string{"", styleErr.Render("Other sessions' work since (" + p.keys() + " asks again before taking it):")}
	for _, f := range p.Others {
		lines = append(lines, "  "+flatten(Sanitize(f)))
	}
	return lines
}

// othersDetails is the second question of a plan that takes other
// sessions' work: their files, named.
func othersDetails(p *RewindPlan) *details {
	lines := []string{styleErr.Render("This rewind removes or overwrites files other sessions made or changed:")}
	for _, f := range p.Others {
		lines = append(lines, "  "+flatten(Sanitize(f)))
	}
	lines = append(lines, "", "Their changes go with the rewind; /rewind undo here brings them back.",
		"y rewinds them too; esc leaves everything as it is.")
	return &details{lines: lines, title: "Other sessions' files — y: rewind them too · esc: nothing"}
}

// othersKey takes the second answer: y does the choice, over the other
// sessions' files; a key that closes the page drops the rewind; any other
// key does nothing.
func (m *Model) othersKey(msg tea.KeyMsg) tea.Cmd {
	if msg.String() == "y" {
		c := m.rewindAsk
		return m.doRewind(m.rewind, c.files, c.convo, true)
	}
	if m.detail.update(msg, m.keys) {
		m.detail, m.rewind, m.rewindAsk = nil, nil, nil
	}
	return nil
}
