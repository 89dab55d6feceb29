package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// pausedOn returns a console at w×h paused for approval of call, and the
// channel its verdict comes on.
func pausedOn(t *testing.T, call *engine.ToolCall, w, h int, b Backend) (*Model, chan engine.Verdict) {
	t.Helper()
	m := New(Config{Style: "notty", Gate: NewGate(false)})
	if b != nil {
		m.backend = b
	}
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	reply := make(chan engine.Verdict, 1)
	m.Update(gateMsg{gateRequest{pending: engine.Pending{Run: "r1", Step: 1, At: engine.Act, ToolCall: call, Approval: true}, reply: reply}})
	return m, reply
}

// TestApprovalShowsTheWholeCall: a command padded with spaces to push its
// end out of the bar is shown whole, the padding made visible; the frame
// still fits the terminal.
func TestApprovalShowsTheWholeCall(t *testing.T) {
	cmd := "echo hello" + strings.Repeat(" ", 300) + "; touch ~/pwned"
	args, _ := json.Marshal(map[string]string{"command": cmd})
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 50}} {
		m, _ := pausedOn(t, &engine.ToolCall{ID: "c1", Name: "run_shell", Args: args}, size[0], size[1], nil)
		v := m.View()
		if !strings.Contains(v, "⟨300 spaces⟩") || !strings.Contains(v, "touch ~/pwned") {
			t.Errorf("%dx%d: the padded command is not shown whole:\n%s", size[0], size[1], v)
		}
		if n := len(strings.Split(v, "\n")); n != size[1] {
			t.Errorf("%dx%d: the frame has %d lines", size[0], size[1], n)
		}
	}
}

// TestApprovalScrollsALongWrite: a file write's content is shown as its
// lines, as many as fit, with ↑/↓ to scroll to the last one.
func TestApprovalScrollsALongWrite(t *testing.T) {
	var content strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&content, "line %d of the file\n", i)
	}
	content.WriteString("rm -rf / # the last line")
	body, _ := json.Marshal(content.String())
	args := json.RawMessage(`{"path":"run.sh","content":` + string(body) + `}`) // the model's order
	m, reply := pausedOn(t, &engine.ToolCall{ID: "c1", Name: "write_file", Args: args}, 120, 40, nil)
	v := m.View()
	if !strings.Contains(v, "path: run.sh") || !strings.Contains(v, "line 1 of the file") || !strings.Contains(v, "↑/↓ pgup/pgdn: scroll (lines 1–13 of 63)") {
		t.Fatalf("the start of the write is not shown with a way to scroll:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyPgDown})
	if v := m.View(); !strings.Contains(v, "lines 13–25 of 63") {
		t.Errorf("pgdn does not scroll a page (the last line kept):\n%s", v)
	}
	for range 100 {
		m.Update(tea.KeyMsg{Type: tea.KeyDown})
	}
	v = m.View()
	if !strings.Contains(v, "rm -rf / # the last line") || !strings.Contains(v, "lines 51–63 of 63") {
		t.Errorf("scrolled to the end, the last line is not shown:\n%s", v)
	}
	if n := len(strings.Split(v, "\n")); n != 40 {
		t.Errorf("the frame has %d lines, want 40", n)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	if got := <-reply; got.Action != engine.Proceed {
		t.Errorf("y answered %+v", got)
	}
	if v := m.View(); strings.Contains(v, "scroll") || len(strings.Split(v, "\n")) != 40 {
		t.Errorf("after the answer the input box is not back:\n%s", v)
	}
}

// schemaBackend checks edited arguments as the real backend does: the
// calculator takes an expression and nothing else.
type schemaBackend struct{ Backend }

func (schemaBackend) SessionID() string { return "s1" }

func (schemaBackend) ValidateArgs(tool string, args json.RawMessage) error {
	var v map[string]any
	json.Unmarshal(args, &v)
	if _, ok := v["expression"]; !ok || len(v) != 1 {
		return errors.New("arguments do not match the schema: additional properties 'foo' not allowed")
	}
	return nil
}

// TestEditorChecksTheSchema: arguments the tool's schema refuses are not
// sent; the editor says why as they are typed, and the fixed ones go.
func TestEditorChecksTheSchema(t *testing.T) {
	m, reply := pausedOn(t, &engine.ToolCall{ID: "c1", Name: "calculator", Args: json.RawMessage(`{"expression":"6*7"}`)}, 120, 40, schemaBackend{})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("e")})
	if m.argsEditor == nil || !strings.Contains(m.View(), "✓ the arguments match calculator's schema") {
		t.Fatalf("the editor did not open checked:\n%s", m.View())
	}
	m.argsEditor.SetValue(`{"expression":"6*7","foo":1}`)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(" ")})
	if !strings.Contains(m.View(), "additional properties 'foo' not allowed") {
		t.Errorf("the schema error is not shown as it is typed:\n%s", m.View())
	}
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlS})
	select {
	case v := <-reply:
		t.Fatalf("arguments the schema refuses were sent: %+v", v)
	default:
	}
	if m.argsEditor == nil || m.pause == nil {
		t.Fatal("the refusal closed the editor or the pause")
	}
	m.argsEditor.SetValue(`{"expression":"6*8"}`)
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlS})
	if v := <-reply; v.Action != engine.Proceed || string(v.Args) != `{"expression":"6*8"}` {
		t.Errorf("the fixed arguments: %+v", v)
	}
}

// TestApprovalKeepsCodeIndentation: a code file's indentation is shown as
// indentation, not as markers; a run of spaces inside a line still is.
func TestApprovalKeepsCodeIndentation(t *testing.T) {
	body, _ := json.Marshal("def f(x):\n    if x:\n\treturn 1\n" + strings.Repeat(" ", 40) + "far\nok" + strings.Repeat(" ", 8) + "; rm")
	m, _ := pausedOn(t, &engine.ToolCall{ID: "c1", Name: "write_file", Args: json.RawMessage(`{"path":"f.py","content":` + string(body) + `}`)}, 120, 40, nil)
	v := m.View()
	for _, want := range []string{"  def f(x):", "      if x:", "      return 1", "⟨40 spaces⟩far", "ok⟨8 spaces⟩; rm"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q in\n%s", want, v)
		}
	}
}

// A call an earlier process started and left without a result (a kill
// while it ran) is not run again by enter or y, as headless --continue does
// not run it: the bar says it was interrupted, enter and n answer it as
// interrupted, and running it again takes R, a key of its own.
func TestInterruptedCallIsNotRunAgainByApproving(t *testing.T) {
	call := &engine.ToolCall{ID: "c1", Name: "run_shell", Args: json.RawMessage(`{"command":"sleep 4; echo done >> count.txt"}`)}
	open := func() (*Model, chan engine.Verdict) {
		m := New(Config{Style: "notty", Gate: NewGate(false)})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
		reply := make(chan engine.Verdict, 1)
		m.Update(gateMsg{gateRequest{pending: engine.Pending{Run: "r1", Step: 4, At: engine.Act, ToolCall: call, Approval: true, Rerun: true}, reply: reply}})
		return m, reply
	}
	m, reply := open()
	if v := m.View(); !strings.Contains(v, "Interrupted before it finished, not run again unless you choose") || !strings.Contains(v, "R: run it again") {
		t.Errorf("the bar does not say the call was interrupted:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	select {
	case v := <-reply:
		t.Fatalf("y answered an interrupted call: %+v", v)
	default:
	}
	verdict := func(reply chan engine.Verdict) engine.Verdict {
		select {
		case v := <-reply:
			return v
		default:
			t.Fatal("the key answered nothing")
			return engine.Verdict{}
		}
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	if v := m.View(); !strings.Contains(v, "leave it unrun") || !strings.Contains(v, "run it again") || strings.Contains(v, "enter/y") {
		t.Errorf("? at the pause does not show its keys:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if v := verdict(reply); v.Action != engine.Deny || v.By != "you, leaving it unrun" {
		t.Errorf("enter: %+v, want it left unrun (deny, answered as interrupted)", v)
	}
	m, reply = open()
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("R")})
	if v := verdict(reply); v.Action != engine.Proceed || v.By != "you, running it again" {
		t.Errorf("R: %+v, want it run again, saying who chose it", v)
	}
}
