package ui

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"

	"github.com/agentty/agentty/engine"
)

// Bubble Tea sees the terminal through termOut (its size, its modes) only
// when it is a term.File.
var _ term.File = (*termOut)(nil)

// copyConsole is a console on a session of its own whose OSC 52 goes to
// clip.
func copyConsole(t *testing.T) (*Model, *startsBackend, *bytes.Buffer) {
	t.Helper()
	b := &startsBackend{memBackend: memBackend{s: engine.NewSession("s")}}
	m := New(Config{Style: "notty", Backend: b})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	clip := &bytes.Buffer{}
	m.out.clip = clip
	return m, b, clip
}

// answered applies a run of the task that the agent answered with text.
func answered(m *Model, task, text string) {
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: task}))
	m.Update(ev(engine.KindDecision, &engine.Decided{Text: text}))
	m.Update(ev(engine.KindRunFinished, &engine.RunFinished{StopReason: engine.StopAnswered, Answer: text}))
}

// sendLine types a line into the input and sends it.
func sendLine(m *Model, line string) {
	typeLine(m, line)
	pressKey(m, tea.KeyEnter)
}

// clipped decodes the OSC 52 sequences written to clip, and fails on any
// other byte written.
func clipped(t *testing.T, clip *bytes.Buffer) []string {
	t.Helper()
	var out []string
	rest := clip.String()
	for rest != "" {
		body, ok := strings.CutPrefix(rest, "\x1b]52;c;")
		end := strings.IndexByte(body, '\a')
		if !ok || end < 0 {
			t.Fatalf("not an OSC 52 sequence: %q", rest)
		}
		text, err := base64.StdEncoding.DecodeString(body[:end])
		if err != nil {
			t.Fatalf("OSC 52 of %q: %v", body[:end], err)
		}
		out = append(out, string(text))
		rest = body[end+1:]
	}
	return out
}

// TestCopyWritesOSC52: /copy writes exactly ESC ] 52 ; c ; base64 BEL of
// the last answer as written (its tab kept, not the screen's spaces), made
// harmless to paste (no escape, no carriage return that a terminal would
// act on), and says what it copied.
func TestCopyWritesOSC52(t *testing.T) {
	m, _, clip := copyConsole(t)
	answered(m, "q", "an old answer")
	answered(m, "q2", "Total:\t42\r\nend of paste\x1b[201~rm -rf ~\n")
	sendLine(m, "/copy")
	want := "Total:\t42\nend of paste␛[201~rm -rf ~"
	if got := clip.String(); got != "\x1b]52;c;"+base64.StdEncoding.EncodeToString([]byte(want))+"\a" {
		t.Fatalf("/copy wrote %q, want the OSC 52 of %q", got, want)
	}
	if n := lastNote(m); !strings.Contains(n, "Copied the agent's last answer to the clipboard (2 lines, 38 bytes)") {
		t.Errorf("the note: %q", n)
	}
	if !strings.Contains(lastNote(m), "Nothing there? The terminal does not take OSC 52") {
		t.Errorf("the first copy does not say what to do when nothing arrives: %q", lastNote(m))
	}
	if m.input.Value() != "" {
		t.Errorf("the command stays in the input: %q", m.input.Value())
	}
	sendLine(m, "/copy 2")
	if n := lastNote(m); n != "Copied the agent's answer 2 back from the last (/copy 2) to the clipboard (1 line, 13 bytes), through the terminal (OSC 52)." {
		t.Errorf("the second copy's note: %q", n)
	}
}

// TestCopyN: /copy N copies the agent's Nth answer back from the last (as
// Claude Code's /copy N); a message still streaming, the person's own
// messages and notes are not counted; N past the first answer, or not a
// number, is a note, and nothing is written.
func TestCopyN(t *testing.T) {
	m, _, clip := copyConsole(t)
	answered(m, "one", "first answer")
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "two"}))
	m.Update(ev(engine.KindDecision, &engine.Decided{Text: "looking", ToolCalls: []engine.ToolCall{{ID: "c1", Name: "clock", Args: json.RawMessage(`{}`)}}}))
	m.Update(ev(engine.KindDecision, &engine.Decided{Text: "second answer"}))
	m.Update(ev(engine.KindRunFinished, &engine.RunFinished{StopReason: engine.StopAnswered}))
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "three"}))
	m.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: "still stream"}))
	for _, c := range []struct{ line, want string }{
		{"/copy 1", "second answer"}, {"/copy 2", "looking"}, {"/copy 3", "first answer"}, {"/copy", "second answer"},
	} {
		clip.Reset()
		sendLine(m, c.line)
		if got := clipped(t, clip); !reflect.DeepEqual(got, []string{c.want}) {
			t.Errorf("%s copied %q, want %q", c.line, got, c.want)
		}
	}
	for _, c := range []struct{ line, note string }{
		{"/copy 4", "/copy 4: the chat has 3 answers of the agent (/copy 1 is the last, /copy 3 the first)."},
		{"/copy 0", `/copy takes N (1 is the agent's last answer, 2 the one before…) or code, not "0".`},
		{"/copy all", `/copy takes N (1 is the agent's last answer, 2 the one before…) or code, not "all".`},
	} {
		clip.Reset()
		sendLine(m, c.line)
		if clip.Len() > 0 || lastNote(m) != c.note {
			t.Errorf("%s wrote %q, said %q", c.line, clip.String(), lastNote(m))
		}
	}
}

// TestCopyCodeTakesTheLastBlockAsWritten: /copy code copies the last code
// block of the latest answer that has one, as the Markdown source has it:
// without its fences and the list's indentation, its tabs and long lines
// as they are (the screen wraps and indents them), no styling.
func TestCopyCodeTakesTheLastBlockAsWritten(t *testing.T) {
	m, _, clip := copyConsole(t)
	long := "echo " + strings.Repeat("word ", 60)
	answered(m, "q", "First:\n\n```sh\nls\n```\n\n1. Then run:\n\n   ```go\n   func main() {\n   \tprintln(\"hi\")\n   }\n   "+long+"\n   ```\n\nDone.")
	answered(m, "q2", "No code in this one.")
	sendLine(m, "/copy code")
	want := "func main() {\n\tprintln(\"hi\")\n}\n" + long
	if got := clipped(t, clip); !reflect.DeepEqual(got, []string{want}) {
		t.Fatalf("/copy code copied %q, want %q", got, want)
	}
	if n := lastNote(m); !strings.Contains(n, "Copied the last code block (go) to the clipboard (4 lines,") {
		t.Errorf("the note: %q", n)
	}
	// A block the model left open runs to the end of its answer.
	clip.Reset()
	answered(m, "q3", "~~~\nunclosed\n  kept indented")
	sendLine(m, "/copy code")
	if got := clipped(t, clip); !reflect.DeepEqual(got, []string{"unclosed\n  kept indented"}) {
		t.Errorf("/copy code of an open block copied %q", got)
	}
}

// TestNothingToCopy: with no answer, /copy and /copy code say so, write
// nothing, and the next message is sent as usual.
func TestNothingToCopy(t *testing.T) {
	m, b, clip := copyConsole(t)
	sendLine(m, "/copy")
	if n := lastNote(m); n != "/copy: nothing to copy yet: the agent has not answered in this session." {
		t.Errorf("/copy with no answer said %q", n)
	}
	sendLine(m, "/copy code")
	if n := lastNote(m); n != "/copy code: there is no code block in the agent's answers yet." {
		t.Errorf("/copy code with no answer said %q", n)
	}
	if clip.Len() > 0 {
		t.Errorf("written with nothing to copy: %q", clip.String())
	}
	sendLine(m, "hello there")
	if !reflect.DeepEqual(b.starts, []string{"hello there"}) || m.input.Value() != "" {
		t.Errorf("the message after /copy: sent %q, input %q", b.starts, m.input.Value())
	}
}

// TestMouseIsReleasedAndTakenBack: ctrl+g (and /mouse) give the mouse to
// the terminal, so that its selection works, and the status line says so
// until the mouse is taken back.
func TestMouseIsReleasedAndTakenBack(t *testing.T) {
	m, _, _ := copyConsole(t)
	is := func(cmd, want tea.Cmd) bool {
		return cmd != nil && reflect.ValueOf(cmd).Pointer() == reflect.ValueOf(want).Pointer()
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlG})
	if !m.out.mouseOff || !containsCmd(cmd, tea.DisableMouse, is) || !strings.Contains(m.statusLine(), "mouse released (ctrl+g)") {
		t.Fatalf("ctrl+g: released %v, status %q", m.out.mouseOff, m.statusLine())
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.note = strings.Repeat("a long note ", 10)
	if !strings.Contains(m.statusLine(), "mouse released (ctrl+g)") {
		t.Errorf("at 80 columns, under a long note, the status line does not say the mouse is released: %q", m.statusLine())
	}
	typeLine(m, "/mouse")
	_, cmd = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if m.out.mouseOff || !containsCmd(cmd, tea.EnableMouseCellMotion, is) || strings.Contains(m.statusLine(), "released") {
		t.Errorf("/mouse did not take the mouse back: status %q", m.statusLine())
	}
}

// containsCmd reports whether cmd is want, or a batch that holds it.
func containsCmd(cmd, want tea.Cmd, is func(cmd, want tea.Cmd) bool) bool {
	if is(cmd, want) {
		return true
	}
	if cmd == nil || !cmdIs(cmd, "compactCmds") {
		return false
	}
	if batch, ok := cmd().(tea.BatchMsg); ok {
		for _, c := range batch {
			if containsCmd(c, want, is) {
				return true
			}
		}
	}
	return false
}

// TestLastAnswerForTheScrollback: what is left in the terminal when the
// console quits is the last answer as the chat shows it (escapes made
// visible), as plain text: prose wrapped at the width, a list item's rows
// under its text, code lines whole.
func TestLastAnswerForTheScrollback(t *testing.T) {
	m, _, _ := copyConsole(t)
	if got := m.LastAnswer(40); got != "" {
		t.Errorf("no answer, yet %q", got)
	}
	code := "    x := strings.Repeat(\"a very long line of code\", 3)"
	answered(m, "q", "The first paragraph is long enough to be wrapped \x1b[31mtwice.\n\n- a list item that goes on past the width\n\n```go\n"+code+"\n```")
	want := "The first paragraph is long enough to be\nwrapped ␛[31mtwice.\n\n- a list item that goes on past the\n  width\n\n```go\n" + code + "\n```"
	if got := m.LastAnswer(40); got != want {
		t.Errorf("the last answer at 40 columns:\n%s\nwant:\n%s", got, want)
	}
}
