package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// The workspace's files in the session's history: /diff [STEP] shows what
// the session (or a step) changed; /rewind STEP shows what restoring the
// files to before that step would undo, and asks what to rewind: the
// files, the conversation (a fork before the step, opened) or both.

// Rewinder is what a backend whose runs checkpoint the workspace offers
// /diff and /rewind. Its methods do I/O (git): the console calls them from
// commands.
type Rewinder interface {
	// DiffFiles is the unified diff of the session (step < 0) or a step.
	DiffFiles(ctx context.Context, step int) (string, error)
	// PlanRewind says what restoring the files to before step would do.
	PlanRewind(ctx context.Context, step int) (*RewindPlan, error)
	// PlanUndo says what taking the session's last rewind back would do.
	PlanUndo(ctx context.Context) (*RewindPlan, error)
	// RewindFiles does a plan (force: over files changed since the
	// session's last checkpoint; others: over other sessions' work, its
	// Others) and says what it did.
	RewindFiles(ctx context.Context, p *RewindPlan, force, others bool) (string, error)
}

// RewindPlan is what a rewind of the files would do.
type RewindPlan struct {
	Step          int
	Diff          string // from the workspace now to the checkpoint
	Write, Remove []string
	HandChanged   []string // changed since the session's last checkpoint
	// Others are the files it writes or removes that other sessions'
	// steps made or changed since, each with the session and step.
	Others  []string
	Notes   []string // what it cannot restore
	Undo    bool     // it takes the last rewind back (Step is 0)
	Backend any      // the backend's own plan
}

// diffCommand runs /diff [STEP].
func (m *Model) diffCommand(r Rewinder, arg string) tea.Cmd {
	step := -1
	if arg != "" {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			m.notify(fmt.Sprintf("/diff STEP takes a step number (1 to %d), not %q.", m.sess.Steps, arg))
			return nil
		}
		step = n
	}
	title := "What the session changed in the workspace (esc closes, ↑/↓ scroll)"
	if step > 0 {
		title = fmt.Sprintf("What step %d changed in the workspace (esc closes, ↑/↓ scroll)", step)
	}
	return m.runCommand("diff", func() commandDoneMsg {
		text, err := r.DiffFiles(context.Background(), step)
		if err == nil && strings.TrimSpace(text) == "" {
			text = "(no change)"
		}
		return commandDoneMsg{err: err, show: &details{title: title, lines: diffLines(text)}}
	})
}

// rewindCommand runs /rewind STEP: the plan comes back shown, and a key
// chooses (rewindKey).
func (m *Model) rewindCommand(r Rewinder, arg string) tea.Cmd {
	if arg == "undo" || arg == "--undo" {
		return m.undoCommand(r)
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 {
		m.notify(fmt.Sprintf("/rewind STEP restores the files (or the conversation) as they were before step STEP (1 to %d): say which step; /rewind undo takes the last rewind back.", m.sess.Steps))
		return nil
	}
	return m.runCommand("rewind", func() commandDoneMsg {
		p, err := r.PlanRewind(context.Background(), n)
		if err != nil {
			return commandDoneMsg{err: err}
		}
		return commandDoneMsg{plan: p, show: rewindDetails(p)}
	})
}

// rewindDetails shows a plan: what it writes and removes, the files changed
// by hand it would overwrite, and the diff it applies.
func rewindDetails(p *RewindPlan) *details {
	lines := []string{fmt.Sprintf("Restoring the files as they were before step %d writes %d and removes %d:", p.Step, len(p.Write), len(p.Remove))}
	if len(p.Write)+len(p.Remove) == 0 {
		lines = []string{fmt.Sprintf("The files are as they were before step %d already: f changes nothing, c still forks the conversation.", p.Step)}
	}
	for _, n := range p.Notes {
		lines = append(lines, styleErr.Render("Not restored: "+flatten(Sanitize(n))))
	}
	for _, f := range p.Write {
		lines = append(lines, "  write  "+flatten(Sanitize(f)))
	}
	for _, f := range p.Remove {
		lines = append(lines, "  remove "+flatten(Sanitize(f)))
	}
	if len(p.HandChanged) > 0 {
		lines = append(lines, "", styleErr.Render("Changed since the session's last checkpoint (by hand, or by a step that did not end); "+p.keys()+" overwrites them:"))
		for _, f := range p.HandChanged {
			lines = append(lines, "  "+flatten(Sanitize(f)))
		}
	}
	lines = append(lines, othersLines(p)...)
	lines = append(lines, "", "The change it makes:")
	lines = append(lines, diffLines(p.Diff)...)
	if p.Undo {
		lines[0] = fmt.Sprintf("Taking the last rewind back writes %d and removes %d:", len(p.Write), len(p.Remove))
		return &details{lines: lines, title: "Undo the last rewind — u: take the files back · esc: nothing"}
	}
	return &details{lines: lines, title: fmt.Sprintf("Rewind to before step %d — f: files only · c: conversation only · b: both · esc: nothing", p.Step)}
}

// diffLines are a diff's lines, made safe to draw.
func diffLines(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(Sanitize(text), "\n"), "\n") {
		out = append(out, showLine(l))
	}
	return out
}

// rewindKey takes a key while a rewind's plan is shown: f, c or b does it
// (u an undo), any key that closes the details drops it. A plan that takes
// other sessions' work asks again (othersKey).
func (m *Model) rewindKey(msg tea.KeyMsg) tea.Cmd {
	p := m.rewind
	if m.rewindAsk != nil {
		return m.othersKey(msg)
	}
	files, convo := false, false
	switch k := msg.String(); {
	case k == "f" || k == "u" && p.Undo:
		files = true
	case (k == "c" || k == "b") && !p.Undo:
		files, convo = k == "b", true
	default:
		if m.detail.update(msg, m.keys) {
			m.detail, m.rewind = nil, nil
		}
		return nil
	}
	if files && len(p.Others) > 0 {
		m.rewindAsk = &rewindChoice{files: files, convo: convo}
		m.detail = othersDetails(p)
		return nil
	}
	return m.doRewind(p, files, convo, false)
}

// doRewind does a plan's files and/or conversation, as the person chose
// (others: over other sessions' work, which they confirmed).
func (m *Model) doRewind(p *RewindPlan, files, convo, others bool) tea.Cmd {
	m.detail, m.rewind, m.rewindAsk = nil, nil, nil
	r, _ := m.backend.(Rewinder)
	c, _ := m.backend.(Commander)
	if why := m.busy(); why != "" || r == nil {
		m.notify("/rewind: " + why)
		return nil
	}
	if !files {
		if c == nil {
			m.notify("/rewind: this session is read-only")
			return nil
		}
		if p.Step <= 1 { // before the first step: no conversation at all
			return m.slashCommand("/clear")
		}
		return m.forkCommand(c, strconv.Itoa(p.Step-1))
	}
	return m.runCommand("rewind", func() commandDoneMsg {
		said, err := r.RewindFiles(context.Background(), p, true, others) // the person saw what it overwrites
		if err != nil || !convo || c == nil {
			return commandDoneMsg{err: err, note: said}
		}
		if p.Step <= 1 {
			b, evs, err := c.Clear()
			return commandDoneMsg{open: b, events: evs, err: err, note: said + " The conversation starts again in a new session."}
		}
		b, evs, err := c.Fork(p.Step - 1)
		return commandDoneMsg{open: b, events: evs, err: err, note: said + fmt.Sprintf(" The conversation goes on from a fork before step %d.", p.Step)}
	})
}

// checkpointNotes says what a checkpoint could not keep: a shell
// command's effects outside git (once a console), files over the size
// limit, files that are not regular files.
func (m *Model) checkpointNotes(d *engine.Checkpointed) {
	if d.Note != "" && !m.cpNoted {
		m.cpNoted = true
		m.notify("Checkpoints: " + d.Note + ".")
	}
	if len(d.Skipped) > 0 {
		m.notify("Left out of the checkpoint (over the size limit): " + strings.Join(d.Skipped, ", ") + ".")
	}
	if len(d.Special) > 0 {
		m.notify("Left out of the checkpoint (not a regular file: a FIFO, a socket or a device): " + strings.Join(d.Special, ", ") + ".")
	}
}
