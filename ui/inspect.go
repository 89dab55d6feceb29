package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// The request inspector (i at a decide pause) shows the request the run
// is about to send: its parts and their tokens, each message, and what
// changed since the run's previous decision; the person may edit this
// decision's copy of it (its system prompt, a message, a dropped message,
// a note) before it goes.

// inspector is the open inspector of the pause's request.
type inspector struct {
	cursor int // the message under the cursor
	scroll int // the first line of the selected message's text shown
}

// reqPair is a run's last two model_request payloads: the request of the
// pause (cur) and the one before (prev, nil for none).
type reqPair struct{ prev, cur *engine.ModelRequest }

// noteRequest keeps a run's model_request for the inspector's diff.
func (m *Model) noteRequest(run string, d *engine.ModelRequest) {
	if m.reqs == nil {
		m.reqs = map[string]reqPair{}
	}
	p := m.reqs[run]
	m.reqs[run] = reqPair{prev: p.cur, cur: d}
}

func (m *Model) newInspector() *inspector {
	in := &inspector{}
	if r := m.pause.pending.Request; r != nil {
		in.cursor = max(len(r.Messages)-1, 0)
	}
	return in
}

// added is the first message of req this decision added: from the
// previous decision (the last assistant message) on; 0 for the first.
func added(req *engine.Request) int {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == engine.RoleAssistant {
			return i
		}
	}
	return 0
}

// inspectorKey handles a key in the inspector.
func (m *Model) inspectorKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	p := m.pause
	if p == nil || p.pending.Request == nil {
		m.inspector = nil
		return m, nil
	}
	req, in, k := p.pending.Request, m.inspector, m.keys
	n := len(req.Messages)
	sel := min(in.cursor, n-1)
	switch {
	case key.Matches(msg, k.Dismiss):
		m.inspector = nil
	case key.Matches(msg, k.Up):
		in.cursor, in.scroll = max(sel-1, 0), 0
	case key.Matches(msg, k.Down):
		in.cursor, in.scroll = min(sel+1, n-1), 0
	case key.Matches(msg, k.PageDown):
		in.scroll += 5
	case key.Matches(msg, k.PageUp):
		in.scroll = max(in.scroll-5, 0)
	case msg.String() == "s":
		m.argsEditor = newTextEditor(editSystem, "", editedSystem(req, &p.edit), m.width, m.height)
		return m, textarea.Blink
	case msg.String() == "n":
		m.argsEditor = newTextEditor(editNote, "", p.edit.Note, m.width, m.height)
		return m, textarea.Blink
	case msg.String() == "e" && sel >= 0:
		m.argsEditor = newTextEditor(editMessage, "", editedContent(req, &p.edit, sel), m.width, m.height)
		m.argsEditor.index = sel
		return m, textarea.Blink
	case msg.String() == "d" && sel >= 0:
		e, err := toggleDrop(p.edit, req, sel)
		if err != nil {
			m.note = err.Error()
		}
		p.edit = e
	case msg.String() == "u":
		p.edit = engine.RequestEdit{}
		m.note = "the request's edits are undone"
	case key.Matches(msg, k.Submit):
		m.inspector = nil
		v := engine.Verdict{Action: engine.Proceed}
		if !p.edit.Empty() {
			e := p.edit
			v.Edit = &e
		}
		return m, m.reply(v)
	}
	return m, nil
}

// withEdit returns e with a text edit of mode made (editSystem,
// editMessage of index, editNote).
func withEdit(e engine.RequestEdit, mode editMode, index int, text string) engine.RequestEdit {
	switch mode {
	case editSystem:
		e.System = &text
	case editNote:
		e.Note = strings.TrimSpace(text)
	case editMessage:
		var kept []engine.MessageEdit
		for _, me := range e.Messages {
			if me.Index != index {
				kept = append(kept, me)
			}
		}
		e.Messages = append(kept, engine.MessageEdit{Index: index, Content: &text})
	}
	return e
}

// toggleDrop drops message i of req in e, or keeps it again.
func toggleDrop(e engine.RequestEdit, req *engine.Request, i int) (engine.RequestEdit, error) {
	var kept []engine.MessageEdit
	dropped := false
	for _, me := range e.Messages {
		if me.Index == i {
			dropped = dropped || me.Drop
			continue
		}
		kept = append(kept, me)
	}
	if !dropped {
		next := append(kept, engine.MessageEdit{Index: i, Drop: true})
		if err := (&engine.RequestEdit{Messages: next}).Check(req); err != nil {
			return e, err
		}
		kept = next
	}
	e.Messages = kept
	return e, nil
}

func editedSystem(req *engine.Request, e *engine.RequestEdit) string {
	if e.System != nil {
		return *e.System
	}
	return req.System
}

// editedContent is message i's text as edited (its own if not).
func editedContent(req *engine.Request, e *engine.RequestEdit, i int) string {
	for _, me := range e.Messages {
		if me.Index == i && me.Content != nil {
			return *me.Content
		}
	}
	return req.Messages[i].Content
}

// msgEdits says how e changes each message of req: "edited", or
// "dropped" (with the tool results of a dropped call).
func msgEdits(req *engine.Request, e *engine.RequestEdit) map[int]string {
	out := map[int]string{}
	for _, me := range e.Messages {
		if !me.Drop {
			out[me.Index] = "edited"
			continue
		}
		out[me.Index] = "dropped"
		for _, c := range req.Messages[me.Index].ToolCalls {
			for j := me.Index + 1; j < len(req.Messages); j++ {
				if req.Messages[j].Role == engine.RoleTool && req.Messages[j].ToolCallID == c.ID {
					out[j] = "dropped"
				}
			}
		}
	}
	return out
}

// inspectorView draws the inspector over the whole screen.
func (m *Model) inspectorView() string {
	p := m.pause
	req := p.pending.Request
	w := m.width
	keys := wrapKeys("↑/↓: message · s: system prompt · e: edit message · d: drop/keep · n: note · u: undo edits · enter: send this request · esc: back", w-2)
	h := max(m.height-3-len(keys), 3)
	lines := m.requestSummary(p, w-2)
	lines = append(lines, m.messageRows(p, w-2)...)
	if sel := min(m.inspector.cursor, len(req.Messages)-1); sel >= 0 {
		whole := editedContent(req, &p.edit, sel)
		for _, c := range req.Messages[sel].ToolCalls {
			whole += "\n→ " + c.Name + " " + string(c.Args)
		}
		text := strings.Split(Sanitize(strings.TrimPrefix(whole, "\n")), "\n")
		var body []string
		for _, l := range text {
			body = append(body, wrapRows(showLine(l), max(w-4, 10))...)
		}
		room := max(h-len(lines)-2, 1)
		from := min(m.inspector.scroll, max(len(body)-room, 0))
		lines = append(lines, styleDim.Render(fmt.Sprintf("── message %d, lines %d–%d of %d (pgup/pgdn) ──", sel, from+1, min(from+room, len(body)), len(body))))
		for _, l := range body[from:min(from+room, len(body))] {
			lines = append(lines, "  "+l)
		}
	}
	out := box(fmt.Sprintf("Request for step %d%s", p.pending.Step, p.tag()), true, w, h, lines, false)
	for _, k := range keys {
		out = append(out, styleDim.Render(fit(k, w)))
	}
	return strings.Join(out, "\n") + "\n" + m.statusLine()
}

// requestSummary is the inspector's head: the request's parts with their
// tokens, and what changed since the run's previous decision.
func (m *Model) requestSummary(p *gateRequest, w int) []string {
	req := p.pending.Request
	edited := ""
	if !p.edit.Empty() {
		if out, err := p.edit.Apply(req); err == nil {
			edited = fmt.Sprintf(" · edited: %s tokens", kTok(engine.RequestTokens(out)))
		}
	}
	// The parts' sizes as the run measured them (model_request), which
	// the Timeline shows too; estimated here if it did not say.
	pr := m.reqs[p.pending.Run]
	mr := pr.cur
	if mr == nil {
		mr = &engine.ModelRequest{Tokens: engine.RequestTokens(req), SystemTokens: engine.EstimateTokens(req.System), InstructionTokens: engine.EstimateTokens(req.Instructions),
			SummaryTokens: engine.EstimateTokens(req.Summary), MemoryTokens: engine.RequestTokens(&engine.Request{Memory: req.Memory}), ToolTokens: engine.EstimateTools(req.Tools)}
	}
	head := fmt.Sprintf("%s tokens · %d messages · %d tools%s", kTok(mr.Tokens), len(req.Messages), len(req.Tools), edited)
	if pr.prev != nil && pr.cur != nil {
		head += fmt.Sprintf(" · since the last decision: %+d messages, %+d tokens", pr.cur.Messages-pr.prev.Messages, pr.cur.Tokens-pr.prev.Tokens)
		if pr.cur.MemoryFacts != pr.prev.MemoryFacts {
			head += fmt.Sprintf(", memory %d → %d facts", pr.prev.MemoryFacts, pr.cur.MemoryFacts)
		}
		if pr.cur.PromptHash != pr.prev.PromptHash {
			head += ", the system prompt or tools changed"
		}
	}
	sys, sysT := "system prompt", mr.SystemTokens
	if p.edit.System != nil {
		sys, sysT = "system prompt (edited)", engine.EstimateTokens(*p.edit.System)
	}
	part := func(name string, tokens int, what string) string {
		return fmt.Sprintf("  %-22s %8s tokens  %s", name, kTok(tokens), what)
	}
	lines := wrapRows(head, w)
	lines = append(lines,
		part(sys, sysT, engine.OneLine(Sanitize(editedSystem(req, &p.edit)), max(w-40, 10))),
		part("project instructions", mr.InstructionTokens, engine.OneLine(Sanitize(req.Instructions), max(w-40, 10))),
		part("summary", mr.SummaryTokens, engine.OneLine(Sanitize(req.Summary), max(w-40, 10))),
		part("memory", mr.MemoryTokens, count(len(req.Memory), "fact")),
		part("tool schemas", mr.ToolTokens, fmt.Sprintf("%d tools", len(req.Tools))))
	for i, msg := range req.Messages { // a file attached with @ is a part of its own
		if msg.Role != engine.RoleUser {
			continue
		}
		_, atts := attachments(msg.Content)
		for _, a := range atts {
			lines = append(lines, part("@"+engine.OneLine(Sanitize(a.path), 20), engine.EstimateTokens(a.body), fmt.Sprintf("attached to message %d", i)))
		}
	}
	if p.edit.Note != "" {
		lines = append(lines, part("your note", engine.EstimateTokens(p.edit.Note), engine.OneLine(Sanitize(p.edit.Note), max(w-40, 10))))
	}
	return append(lines, "  messages (+ added since the last decision):")
}

// messageRows lists the request's messages, one line each, the selected
// one marked.
func (m *Model) messageRows(p *gateRequest, w int) []string {
	req := p.pending.Request
	from := added(req)
	sel := min(m.inspector.cursor, len(req.Messages)-1)
	edits := msgEdits(req, &p.edit)
	var rows []string
	for i := range req.Messages {
		msg := &req.Messages[i]
		mark := " "
		if i == sel {
			mark = "›"
		}
		if i >= from && from > 0 {
			mark += "+"
		} else {
			mark += " "
		}
		text := msg.Content
		for _, c := range msg.ToolCalls {
			text += " → " + c.Name + " " + string(c.Args)
		}
		line := fmt.Sprintf("%s %3d %-9s %6s  %-7s", mark, i, msg.Role, kTok(engine.EstimateMessage(*msg)), edits[i])
		line += " " + engine.OneLine(Sanitize(editedContent(req, &p.edit, i)+text[len(msg.Content):]), max(w-len(line)-2, 10))
		if i == sel {
			line = styleCursor.Render(fit(line, w))
		}
		rows = append(rows, line)
	}
	return rows
}
