package ui

import (
	"encoding/json"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// pauseKey answers the gate.
func (m *Model) pauseKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	p, k := m.pause, m.keys
	reply := func(v engine.Verdict) (tea.Model, tea.Cmd) {
		p.reply <- v
		m.pause = nil
		m.state = "thinking"
		return m, m.spin.Tick
	}
	switch {
	case key.Matches(msg, k.Approve):
		return reply(engine.Verdict{Action: engine.Proceed})
	case key.Matches(msg, k.Run):
		// In step mode: go on, and let this run finish without step
		// pauses; the next run pauses again. An approval outside step
		// mode has nothing to continue past: enter or y approves it.
		if m.gate.Stepping() {
			m.gate.Release(p.pending.Run)
			m.released = true
			return reply(engine.Verdict{Action: engine.Proceed})
		}
	case key.Matches(msg, k.Skip):
		if p.pending.ToolCall != nil {
			return reply(engine.Verdict{Action: engine.Skip})
		}
	case key.Matches(msg, k.Deny):
		if p.pending.ToolCall != nil {
			return reply(engine.Verdict{Action: engine.Deny})
		}
	case key.Matches(msg, k.Abort):
		return reply(engine.Verdict{Action: engine.Abort})
	case key.Matches(msg, k.Edit):
		if p.pending.ToolCall != nil {
			ed := textarea.New()
			ed.ShowLineNumbers = false
			ed.SetWidth(max(m.width-6, 20))
			ed.SetHeight(max(m.height-10, 5))
			ed.SetValue(Sanitize(prettyJSON(string(p.pending.ToolCall.Args))))
			ed.Focus()
			m.argsEditor, m.editorErr = &ed, ""
			return m, textarea.Blink
		}
	}
	return m, nil
}

// editorKey edits the paused tool call's arguments; ctrl+s checks that they
// are JSON and goes on with them.
func (m *Model) editorKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch {
	case key.Matches(msg, m.keys.Dismiss):
		m.argsEditor = nil
		m.note = "edit cancelled"
		return m, nil
	case key.Matches(msg, m.keys.Save):
		text := m.argsEditor.Value()
		var v map[string]any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			m.editorErr = "not a JSON object: " + err.Error()
			m.note = m.editorErr
			return m, nil
		}
		compact, _ := json.Marshal(v)
		m.argsEditor, m.editorErr = nil, ""
		if m.pause == nil {
			return m, nil
		}
		m.pause.reply <- engine.Verdict{Action: engine.Proceed, Args: compact}
		m.pause = nil
		m.state = "thinking"
		m.note = "edited arguments sent"
		return m, m.spin.Tick
	}
	var cmd tea.Cmd
	*m.argsEditor, cmd = m.argsEditor.Update(msg)
	return m, cmd
}

// pauseKeys says what each key does in each kind of pause.
var pauseKeys = map[pauseKind]string{
	pausedDecide:          "enter: step · c: run to the end without step pauses · esc: abort the run",
	pausedCall:            "enter: run it · c: run to the end · e: edit · s: skip · n: deny · esc: abort",
	pausedApprove:         "enter/y: approve · e: edit arguments · s: skip · n: deny · esc: abort the run",
	pausedApproveStepping: "enter/y: approve · c: approve, run to the end · e: edit · s: skip · n: deny · esc: abort",
}

func (m *Model) editorView() string {
	lines := []string{styleDim.Render("Edit the tool call's JSON arguments. ctrl+s: check and continue · esc: cancel")}
	if m.editorErr != "" { // why ctrl+s refused them, above what is to be fixed
		rows := wrapRows("✗ "+flatten(Sanitize(m.editorErr)), max(m.width-2, 1))
		for _, r := range rows[:min(len(rows), 3)] {
			lines = append(lines, styleErr.Render(r))
		}
	}
	lines = append(lines, strings.Split(m.argsEditor.View(), "\n")...)
	return strings.Join(box("Edit arguments", true, m.width, m.height-3, lines, false), "\n") + "\n" + m.statusLine()
}
