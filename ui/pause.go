package ui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentty/agentty/engine"
)

// A pause the gate handed over (gateRequest) is answered with the keys of
// its kind, in the pause bar drawn in place of the input box; e opens the
// argument editor on a paused tool call.

// answer is what a key at a pause asks for.
type answer struct {
	verdict *engine.Verdict // the reply to the gate; nil: none
	release bool            // the run goes on without step pauses (c)
	edit    bool            // open the argument editor (e)
}

// update says what a key at the pause asks for: nothing when the key means
// nothing in this kind of pause.
func (p *gateRequest) update(msg tea.KeyMsg, k keyMap, stepping bool) answer {
	reply := func(a engine.Action) answer { return answer{verdict: &engine.Verdict{Action: a}} }
	call := p.pending.ToolCall != nil
	switch {
	case key.Matches(msg, k.Approve):
		return reply(engine.Proceed)
	case key.Matches(msg, k.Run) && stepping:
		// In step mode: go on, and let this run finish without step
		// pauses; the next run pauses again. An approval outside step
		// mode has nothing to continue past: enter or y approves it.
		a := reply(engine.Proceed)
		a.release = true
		return a
	case key.Matches(msg, k.Skip) && call:
		return reply(engine.Skip)
	case key.Matches(msg, k.Deny) && call:
		return reply(engine.Deny)
	case key.Matches(msg, k.Abort):
		return reply(engine.Abort)
	case key.Matches(msg, k.Edit) && call:
		return answer{edit: true}
	}
	return answer{}
}

// bar draws the pause in place of the input box, w cells wide: what is
// held back and the keys that answer it.
func (p *gateRequest) bar(w int, stepping bool) []string {
	what := fmt.Sprintf("⏸ Paused before deciding (step %d)", p.pending.Step)
	if c := p.pending.ToolCall; c != nil {
		verb := "Paused before calling"
		if p.pending.Approval {
			verb = "Approve calling"
		}
		what = fmt.Sprintf("⏸ %s %s %s (step %d)", verb, flatten(Sanitize(c.Name)), flatten(Sanitize(string(c.Args))), p.pending.Step)
	}
	tag := ""
	if a := flatten(Sanitize(p.pending.Agent)); a != "" && p.step == "" {
		tag = " · agent " + a
	}
	if p.step != "" { // a workflow's step: its name says more than its task agent's
		tag = " · step " + p.step
	}
	if tag != "" {
		// Cut the call's arguments, not the agent's or step's name: the
		// name says which of the parallel runs waits.
		what = ansi.Truncate(what, max(w-4-ansi.StringWidth(tag), 10), "…") + tag
	}
	return box("Paused", true, w, 2, []string{stylePause.Render(what), styleDim.Render(pauseKeys[kindOf(p, stepping)])}, false)
}

// pauseKeys says what each key does in each kind of pause.
var pauseKeys = map[pauseKind]string{
	pausedDecide:          "enter: step · c: run to the end without step pauses · esc: abort the run",
	pausedCall:            "enter: run it · c: run to the end · e: edit · s: skip · n: deny · esc: abort",
	pausedApprove:         "enter/y: approve · e: edit arguments · s: skip · n: deny · esc: abort the run",
	pausedApproveStepping: "enter/y: approve · c: approve, run to the end · e: edit · s: skip · n: deny · esc: abort",
}

// pauseKey answers the gate as the key asks.
func (m *Model) pauseKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	a := m.pause.update(msg, m.keys, m.gate.Stepping())
	switch {
	case a.edit:
		m.argsEditor = newArgsEditor(m.pause.pending.ToolCall.Args, m.width, m.height)
		return m, textarea.Blink
	case a.verdict == nil:
		return m, nil
	case a.release:
		// The whole top-level run goes on without step pauses, its
		// sub-runs with it, even when c is pressed at a sub-run's pause.
		run := m.pause.pending.Run
		if m.pause.pending.ParentRun != "" && m.sess.LastRun().ID != "" {
			run = m.sess.LastRun().ID
		}
		m.gate.Release(run)
		m.released = true
	}
	return m, m.reply(*a.verdict)
}

// reply hands the verdict to the paused run.
func (m *Model) reply(v engine.Verdict) tea.Cmd {
	m.pause.reply <- v // buffered: the gate waits for one verdict
	m.pause = nil
	m.state = "thinking"
	if len(m.pauses) > 0 { // the next pause of a parallel sub-run
		next := m.pauses[0]
		m.pauses = m.pauses[1:]
		m.pause = &next
		m.state = "paused"
		return nil
	}
	return m.spin.Tick
}

// argsEditor edits a paused tool call's JSON arguments (a textarea,
// embedded); ctrl+s checks that they are a JSON object.
type argsEditor struct {
	textarea.Model
	err string // why ctrl+s refused them
}

func newArgsEditor(args json.RawMessage, w, h int) *argsEditor {
	ed := textarea.New()
	ed.ShowLineNumbers = false
	ed.SetWidth(max(w-6, 20))
	ed.SetHeight(max(h-10, 5))
	ed.SetValue(Sanitize(prettyJSON(string(args))))
	ed.Focus()
	return &argsEditor{Model: ed}
}

// editResult is what a key in the argument editor did.
type editResult int

const (
	editing editResult = iota
	editCancelled
	editRefused  // the text is not a JSON object: err says why
	editAccepted // args holds them, compact
)

// update handles a key in the editor: esc cancels, ctrl+s checks the text
// and returns it compact, the rest edits it.
func (e *argsEditor) update(msg tea.KeyMsg, k keyMap) (res editResult, args json.RawMessage, cmd tea.Cmd) {
	switch {
	case key.Matches(msg, k.Dismiss):
		return editCancelled, nil, nil
	case key.Matches(msg, k.Save):
		var v map[string]any
		if err := json.Unmarshal([]byte(e.Value()), &v); err != nil {
			e.err = "not a JSON object: " + err.Error()
			return editRefused, nil, nil
		}
		compact, _ := json.Marshal(v)
		return editAccepted, compact, nil
	}
	e.Model, cmd = e.Model.Update(msg)
	return editing, nil, cmd
}

// view draws the editor in a box w×h cells, with why it refused the text
// above the text to be fixed.
func (e *argsEditor) view(w, h int) []string {
	lines := []string{styleDim.Render("Edit the tool call's JSON arguments. ctrl+s: check and continue · esc: cancel")}
	if e.err != "" {
		rows := wrapRows("✗ "+flatten(Sanitize(e.err)), max(w-2, 1))
		for _, r := range rows[:min(len(rows), 3)] {
			lines = append(lines, styleErr.Render(r))
		}
	}
	lines = append(lines, strings.Split(e.Model.View(), "\n")...)
	return box("Edit arguments", true, w, h, lines, false)
}

// editorKey handles a key in the argument editor, and goes on with the
// arguments it accepts.
func (m *Model) editorKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	res, args, cmd := m.argsEditor.update(msg, m.keys)
	switch res {
	case editCancelled:
		m.argsEditor = nil
		m.note = "edit cancelled"
	case editRefused:
		m.note = m.argsEditor.err
	case editAccepted:
		m.argsEditor = nil
		if m.pause == nil {
			return m, nil
		}
		cmd = m.reply(engine.Verdict{Action: engine.Proceed, Args: args})
		m.note = "edited arguments sent"
	}
	return m, cmd
}

func (m *Model) editorView() string {
	return strings.Join(m.argsEditor.view(m.width, m.height-3), "\n") + "\n" + m.statusLine()
}
