package ui

// The editor of a pause: a paused call's arguments (JSON, checked as
// typed), a result given for a tool, or text of a request being edited.

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/agentty/agentty/engine"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
)

// Validator is what a backend that knows the tools' schemas offers the
// argument editor: whether edited arguments would be accepted. It is
// called on the Bubble Tea loop, and must not do I/O.
type Validator interface {
	ValidateArgs(tool string, args json.RawMessage) error
}

// ArgOrderer is what a backend that knows the tools' schemas offers the
// chat: a tool's arguments in the order its schema writes them (the path
// before the content). It is called on the Bubble Tea loop, and must not
// do I/O.
type ArgOrderer interface {
	ArgOrder(tool string) []string
}

// validator returns the backend's check of edited arguments, or nil.
func (m *Model) validator() func(string, json.RawMessage) error {
	if v, ok := m.backend.(Validator); ok {
		return v.ValidateArgs
	}
	return nil
}

// argsEditor edits a paused tool call's JSON arguments (a textarea,
// embedded); it checks them as they are typed, and ctrl+s goes on only
// with a JSON object the tool's schema accepts.
type argsEditor struct {
	textarea.Model
	mode  editMode
	index int // the message a modeMessage edit changes
	tool  string
	check func(string, json.RawMessage) error // nil: JSON syntax only
	err   string                              // why the text would be refused ("": it would not)
	last  string                              // the text err was found for
}

func newArgsEditor(call *engine.ToolCall, w, h int, check func(string, json.RawMessage) error) *argsEditor {
	ed := textarea.New()
	ed.ShowLineNumbers = false
	ed.SetWidth(max(w-6, 20))
	ed.SetHeight(max(h-10, 5))
	ed.SetValue(Sanitize(prettyJSON(string(call.Args))))
	ed.Focus()
	e := &argsEditor{Model: ed, tool: call.Name, check: check}
	e.judge()
	return e
}

// editMode is what the editor edits: a call's arguments (JSON, checked),
// or text: a result given for the tool, the request's system prompt, a
// message of it, a note.
type editMode int

const (
	editArgs editMode = iota
	editRespond
	editSystem
	editMessage
	editNote
)

// editTitles are each mode's title and help line.
var editTitles = map[editMode][2]string{
	editArgs:    {"Edit arguments", "Edit the tool call's JSON arguments. ctrl+s: check and continue · esc: cancel"},
	editRespond: {"Answer for the tool", "The result the model will see (the tool is not run). ctrl+s: send · esc: cancel"},
	editSystem:  {"Edit the system prompt", "This decision's system prompt only. ctrl+s: keep · esc: cancel"},
	editMessage: {"Edit the message", "This decision's copy of the message only; the history keeps it. ctrl+s: keep · esc: cancel"},
	editNote:    {"A note to the model", "Sent after the messages of this decision, as from you. ctrl+s: keep · esc: cancel"},
}

// newTextEditor edits text in mode (not editArgs); tool names the call
// a result is given for.
func newTextEditor(mode editMode, tool, text string, w, h int) *argsEditor {
	ed := textarea.New()
	ed.ShowLineNumbers = false
	ed.CharLimit = 0
	ed.SetWidth(max(w-6, 20))
	ed.SetHeight(max(h-10, 5))
	ed.SetValue(text)
	ed.Focus()
	return &argsEditor{Model: ed, mode: mode, tool: tool}
}

// editResult is what a key in the argument editor did.
type editResult int

const (
	editing editResult = iota
	editCancelled
	editRefused  // the text is not a JSON object the tool takes: err says why
	editAccepted // args holds them, compact
)

// judge checks the text as it stands: e.err says why it would be refused.
func (e *argsEditor) judge() json.RawMessage {
	text := e.Value()
	if e.mode != editArgs {
		e.err, e.last = "", text
		if e.mode == editNote && strings.TrimSpace(text) == "" {
			e.err = "the note is empty"
			return nil
		}
		return json.RawMessage(text)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil || v == nil {
		if err == nil {
			err = errors.New("null")
		}
		e.err, e.last = "not a JSON object: "+err.Error(), text
		return nil
	}
	compact, _ := json.Marshal(v)
	e.err, e.last = "", text
	if e.check != nil {
		if err := e.check(e.tool, compact); err != nil {
			e.err = err.Error()
			return nil
		}
	}
	return compact
}

// update handles a key in the editor: esc cancels, ctrl+s checks the text
// and returns it compact, the rest edits it (and checks it again).
func (e *argsEditor) update(msg tea.KeyMsg, k keyMap) (res editResult, args json.RawMessage, cmd tea.Cmd) {
	switch {
	case key.Matches(msg, k.Dismiss):
		return editCancelled, nil, nil
	case key.Matches(msg, k.Save):
		if args := e.judge(); args != nil {
			return editAccepted, args, nil
		}
		return editRefused, nil, nil
	}
	e.Model, cmd = e.Model.Update(msg)
	if e.Value() != e.last {
		e.judge()
	}
	return editing, nil, cmd
}

// view draws the editor in a box w×h cells, with what is wrong with the
// text (or that it is fine) above it.
func (e *argsEditor) view(w, h int) []string {
	title := editTitles[e.mode]
	lines := []string{styleDim.Render(title[1])}
	if e.err != "" {
		rows := wrapRows("✗ "+flatten(Sanitize(e.err)), max(w-2, 1))
		for _, r := range rows[:min(len(rows), 3)] {
			lines = append(lines, styleErr.Render(r))
		}
	} else if e.check != nil && e.mode == editArgs {
		lines = append(lines, styleDim.Render("✓ the arguments match "+flatten(Sanitize(e.tool))+"'s schema"))
	}
	lines = append(lines, strings.Split(e.Model.View(), "\n")...)
	if e.mode == editRespond {
		title[0] += " " + flatten(Sanitize(e.tool))
	}
	return box(title[0], true, w, h, lines, false)
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
		mode, index := m.argsEditor.mode, m.argsEditor.index
		m.argsEditor = nil
		if m.pause == nil {
			return m, nil
		}
		switch mode {
		case editArgs:
			cmd = m.reply(engine.Verdict{Action: engine.Proceed, Args: args})
		case editRespond:
			cmd = m.reply(engine.Verdict{Action: engine.Respond, Result: string(args)})
		default:
			m.pause.edit = withEdit(m.pause.edit, mode, index, string(args))
		}
	}
	return m, cmd
}

func (m *Model) editorView() string {
	return strings.Join(m.argsEditor.view(m.width, m.height-3), "\n") + "\n" + m.statusLine()
}
