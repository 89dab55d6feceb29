package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentty/agentty/engine"
)

func ev(k engine.Kind, d any) engineEventMsg {
	return engineEventMsg{engine.Event{Kind: k, Time: time.Now(), Data: d, Step: 1}}
}

// TestChatFollowsOnlyAtTheBottom: new output moves the window only while
// it is at the bottom; a reader who scrolled up stays where they are.
func TestChatFollowsOnlyAtTheBottom(t *testing.T) {
	m := New(Config{Style: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	for i := range 40 {
		m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: fmt.Sprintf("question %d", i)}))
	}
	if !strings.Contains(m.View(), "question 39") {
		t.Fatal("the newest message is not on screen")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyPgUp})
	before := strings.Join(m.chat.view(false), "\n")
	if strings.Contains(before, "question 39") || !m.chatScrolledUp() {
		t.Fatal("page up did not scroll")
	}
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "question 40"}))
	if after := strings.Join(m.chat.view(false), "\n"); after != before {
		t.Errorf("new output moved a reader who had scrolled up:\nbefore\n%s\nafter\n%s", before, after)
	}
	for range 10 {
		m.Update(tea.KeyMsg{Type: tea.KeyPgDown})
	}
	if !strings.Contains(m.View(), "question 40") || m.chatScrolledUp() {
		t.Errorf("back at the bottom, the chat does not follow")
	}
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "question 41"}))
	if !strings.Contains(m.View(), "question 41") {
		t.Errorf("following stopped")
	}
}

func (m *Model) chatScrolledUp() bool { return !m.chat.follow }

// TestStreamingIsReplacedByTheDecision: streamed text shows as it comes; a
// retry drops it; the decision's text replaces it.
func TestStreamingIsReplacedByTheDecision(t *testing.T) {
	m := New(Config{Style: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "hi"}))
	for _, w := range strings.Fields("a first attempt that fails") {
		m.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: w + " "}))
	}
	if !strings.Contains(m.View(), "a first attempt that fails") {
		t.Fatal("streamed text not shown")
	}
	m.Update(ev(engine.KindRetry, &engine.RetryScheduled{Op: "model", Attempt: 2}))
	if strings.Contains(m.View(), "first attempt") {
		t.Error("the failed attempt's text stayed after the retry")
	}
	m.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: "the real "}))
	m.Update(ev(engine.KindDecision, &engine.Decided{Text: "the real answer"}))
	v := m.View()
	if strings.Count(v, "the real") != 1 || !strings.Contains(v, "the real answer") {
		t.Errorf("after the decision:\n%s", v)
	}
}

// TestStreamingKeepsTheIndent: streamed text is drawn where the finished
// message is, inside glamour's margin, so nothing jumps when it ends.
func TestStreamingKeepsTheIndent(t *testing.T) {
	const answer = "The answer is forty-two, as it always has been; the question is what the question was, and that takes longer."
	for _, w := range []int{60, 100} {
		m := New(Config{Style: "notty"})
		m.Update(tea.WindowSizeMsg{Width: w, Height: 30})
		m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "hi"}))
		for _, word := range strings.SplitAfter(answer, " ") {
			m.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: word}))
		}
		streamed := answerRows(m.chat.view(false))
		m.Update(ev(engine.KindDecision, &engine.Decided{Text: answer}))
		done := answerRows(m.chat.view(false))
		if len(streamed) < 2 || strings.Join(streamed, "\n") != strings.Join(done, "\n") {
			t.Errorf("width %d: streamed\n%s\nfinished\n%s", w, strings.Join(streamed, "\n"), strings.Join(done, "\n"))
		}
	}
}

// answerRows returns the chat's rows of the answer, from its first word to
// its last.
func answerRows(view []string) []string {
	var rows []string
	for _, l := range view {
		if strings.Contains(l, "The answer") || len(rows) > 0 && strings.TrimSpace(l) != "" {
			rows = append(rows, strings.TrimRight(l, " "))
		} else if len(rows) > 0 {
			break
		}
	}
	return rows
}

// TestEditArguments: the editor refuses what is not a JSON object and sends
// the edited arguments, compacted, as the verdict.
func TestEditArguments(t *testing.T) {
	m := New(Config{Style: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	reply := make(chan engine.Verdict, 1)
	call := &engine.ToolCall{ID: "c1", Name: "calculator", Args: json.RawMessage(`{"expression":"1+1"}`)}
	m.Update(gateMsg{gateRequest{pending: engine.Pending{At: engine.Act, ToolCall: call, Step: 1}, reply: reply}})
	if !strings.Contains(m.View(), "Paused before calling calculator") {
		t.Fatal("the pause is not shown")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("e")})
	m.argsEditor.SetValue(`{"expression": "2+`)
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlS})
	if m.argsEditor == nil || !strings.Contains(m.note, "not a JSON object") || len(reply) != 0 {
		t.Fatalf("invalid JSON was accepted (note %q)", m.note)
	}
	m.argsEditor.SetValue("{\n  \"expression\": \"2+2\"\n}")
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlS})
	select {
	case v := <-reply:
		if v.Action != engine.Proceed || string(v.Args) != `{"expression":"2+2"}` {
			t.Errorf("verdict = %+v %s", v, v.Args)
		}
	default:
		t.Fatal("no verdict")
	}
	if m.pause != nil || m.argsEditor != nil {
		t.Errorf("still paused after the edit")
	}
}

// TestPauseKeys maps each key of a pause to its verdict.
func TestPauseKeys(t *testing.T) {
	call := &engine.ToolCall{ID: "c1", Name: "write_file", Args: json.RawMessage(`{}`)}
	for key, want := range map[string]engine.Action{"enter": engine.Proceed, "s": engine.Skip, "n": engine.Deny, "esc": engine.Abort, "c": engine.Proceed} {
		gate := NewGate(true)
		m := New(Config{Style: "notty", Gate: gate})
		reply := make(chan engine.Verdict, 1)
		m.Update(gateMsg{gateRequest{pending: engine.Pending{Run: "r1", At: engine.Act, ToolCall: call}, reply: reply}})
		var msg tea.KeyMsg
		switch key {
		case "enter":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(key)}
		}
		m.Update(msg)
		var v engine.Verdict
		select { // Update answers the gate before it returns
		case v = <-reply:
		default:
			t.Fatalf("%s: no verdict", key)
		}
		if v.Action != want || !gate.Stepping() {
			t.Errorf("%s: %s (step mode %v), want %s in step mode", key, v.Action, gate.Stepping(), want)
		}
		// c lets this run go on without step pauses; the next run pauses.
		if this := gate.Stop(engine.Pending{Run: "r1"}); this == (key == "c") || !gate.Stop(engine.Pending{Run: "r2"}) {
			t.Errorf("%s: the gate stops this run: %v, the next: %v", key, this, gate.Stop(engine.Pending{Run: "r2"}))
		}
	}
}

// TestContinueKeepsStepMode: c at a step pause finishes that run without
// pausing and leaves step mode on, so the next run pauses again; ctrl+t
// turned on again during the run makes it pause again.
func TestContinueKeepsStepMode(t *testing.T) {
	gate := NewGate(true)
	m := New(Config{Style: "notty", Gate: gate, Backend: newStreamBackend()})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	m.input.SetValue("what is 6*7?")
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	reply := make(chan engine.Verdict, 1)
	m.Update(gateMsg{gateRequest{pending: engine.Pending{Run: "r1", At: engine.Decide, Step: 1}, reply: reply}})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("c")})
	if v := <-reply; v.Action != engine.Proceed {
		t.Fatalf("c: %s", v.Action)
	}
	if gate.Stop(engine.Pending{Run: "r1", At: engine.Act}) {
		t.Error("the run continued with c still pauses")
	}
	if v := m.View(); !strings.Contains(v, "step mode from the next run") {
		t.Errorf("the status line does not say step mode comes back:\n%s", v)
	}
	m.Update(ev(engine.KindRunFinished, &engine.RunFinished{StopReason: engine.StopAnswered}))
	m.Update(runClosedMsg{m.events})
	if !gate.Stepping() || !gate.Stop(engine.Pending{Run: "r2", At: engine.Decide}) {
		t.Error("step mode is off for the next run")
	}
	if v := m.View(); !strings.Contains(v, "· step mode") || strings.Contains(v, "from the next run") {
		t.Errorf("after the run the status line does not say step mode:\n%s", v)
	}
	gate.Release("r2")
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlT})
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlT})
	if !gate.Stop(engine.Pending{Run: "r2"}) {
		t.Error("step mode turned on again does not stop the run that was let go")
	}
}

// TestPauseSaysWhatKeysDo: each kind of pause lists the keys that apply to
// it, in its bar and in the help line, and c does what its bar says.
func TestPauseSaysWhatKeysDo(t *testing.T) {
	call := &engine.ToolCall{ID: "c1", Name: "write_file", Args: json.RawMessage(`{"path":"a"}`)}
	tests := []struct {
		name      string
		stepping  bool
		pending   engine.Pending
		want, not []string
	}{
		{"step at decide", true, engine.Pending{At: engine.Decide},
			[]string{"enter: step", "c: run to the end without step pauses", "enter step", "c run to the end"},
			[]string{"edit", "skip", "deny", "approve"}},
		{"step at a call", true, engine.Pending{At: engine.Act, ToolCall: call},
			[]string{"enter: run it", "c: run to the end", "e: edit", "e edit args", "s skip call"},
			[]string{"approve"}},
		{"approval", false, engine.Pending{At: engine.Act, ToolCall: call, Approval: true},
			[]string{"Approve calling write_file", "enter/y: approve", "n: deny", "enter/y approve", "e edit args"},
			[]string{"· c:", "c run", "continue", "without pausing", "step pause", "step mode"}},
		{"approval in step mode", true, engine.Pending{At: engine.Act, ToolCall: call, Approval: true},
			[]string{"enter/y: approve", "c: approve, run to the end", "c run to the end"},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := NewGate(tt.stepping)
			m := New(Config{Style: "notty", Gate: gate})
			m.Update(tea.WindowSizeMsg{Width: 200, Height: 30})
			reply := make(chan engine.Verdict, 1)
			tt.pending.Run, tt.pending.Step = "r1", 1
			m.Update(gateMsg{gateRequest{pending: tt.pending, reply: reply}})
			lines := strings.Split(m.View(), "\n")
			bar := strings.Join(lines[len(lines)-5:], "\n") // the pause's box, the status and the help
			for _, w := range tt.want {
				if !strings.Contains(bar, w) {
					t.Errorf("no %q in\n%s", w, bar)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(bar, w) {
					t.Errorf("%q in\n%s", w, bar)
				}
			}
			m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("c")})
			select {
			case v := <-reply:
				if !tt.stepping {
					t.Errorf("c answered an approval outside step mode: %s", v.Action)
				}
			default:
				if tt.stepping {
					t.Error("c did not answer the pause")
				}
			}
		})
	}
}

// memBackend records the person's memory edits.
type memBackend struct {
	s       *engine.Session
	changes []engine.MemoryChanged
}

func (b *memBackend) Start(context.Context, string) <-chan engine.Event { return nil }
func (b *memBackend) Continue(context.Context) <-chan engine.Event      { return nil }
func (b *memBackend) ChangeMemory(c engine.MemoryChanged) (engine.Event, error) {
	b.changes = append(b.changes, c)
	return b.s.ChangeMemory(c, nil)
}
func (b *memBackend) SessionID() string { return b.s.ID }
func (b *memBackend) Close() error      { return nil }

// TestMemoryEdits adds, edits and deletes facts with the Memory pane's keys.
func TestMemoryEdits(t *testing.T) {
	b := &memBackend{s: engine.NewSession("s")}
	m := New(Config{Style: "notty", Backend: b})
	m.Update(tea.WindowSizeMsg{Width: 130, Height: 30})
	keys := func(ks ...string) { // the edits are journaled by commands: run them
		for _, k := range ks {
			msg := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
			switch k {
			case "tab":
				msg = tea.KeyMsg{Type: tea.KeyTab}
			case "enter":
				msg = tea.KeyMsg{Type: tea.KeyEnter}
			case "esc":
				msg = tea.KeyMsg{Type: tea.KeyEsc}
			}
			_, cmd := m.Update(msg)
			settle(m, cmd)
		}
	}
	keys("tab", "tab", "tab") // input → chat → timeline → memory
	keys("a", "city = Paris", "enter")
	keys("a", "no equals sign", "enter")
	if !strings.Contains(m.note, "key = value") {
		t.Errorf("a bad fact was not refused: note %q", m.note)
	}
	keys("esc", "e")
	m.memForm.SetValue("city = Lyon")
	keys("enter")
	if f := b.s.Memory(); len(f) != 1 || f[0].Value != "Lyon" || !strings.Contains(m.View(), "city = Lyon") {
		t.Fatalf("after the edit: %v", f)
	}
	keys("d")
	if len(b.s.Memory()) != 0 || strings.Contains(m.View(), "city = ") {
		t.Errorf("after the delete: %v", b.s.Memory())
	}
	want := []string{"set city=Paris person", "set city=Lyon person", "delete city= person"}
	var got []string
	for _, c := range b.changes {
		got = append(got, string(c.Op)+" "+c.Key+"="+c.Value+" "+c.Source)
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("changes = %q, want %q", got, want)
	}
}

func TestReasoningShowsUntilTheAnswer(t *testing.T) {
	m := New(Config{Style: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "hard question"}))
	for _, w := range strings.Fields("first I consider the question then I weigh the options") {
		m.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: w + " ", Reasoning: true}))
	}
	if v := m.View(); !strings.Contains(v, "thinking: first I consider") || !strings.Contains(v, "reasoning") {
		t.Fatalf("the reasoning is not shown:\n%s", v)
	}
	m.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: "The answer"}))
	if v := m.View(); strings.Contains(v, "thinking:") || !strings.Contains(v, "The answer") {
		t.Errorf("the reasoning stayed once the answer began:\n%s", v)
	}
}

// TestScrollingAnEmptyChat: with a real model the chat starts empty, and
// paging or the mouse wheel there once crashed the console.
func TestScrollingAnEmptyChat(t *testing.T) {
	msgs := []tea.Msg{
		tea.KeyMsg{Type: tea.KeyPgUp}, tea.KeyMsg{Type: tea.KeyPgDown},
		tea.MouseMsg{Action: tea.MouseActionPress, Button: tea.MouseButtonWheelUp},
		tea.MouseMsg{Action: tea.MouseActionPress, Button: tea.MouseButtonWheelDown},
	}
	for _, msg := range msgs {
		t.Run(fmt.Sprint(msg), func(t *testing.T) {
			m := New(Config{Style: "notty"})
			m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
			m.Update(msg)
			m.setFocus(focusChat)
			m.Update(msg)
			m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k")})
			m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j")})
			m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("g")})
			if n := strings.Count(m.View(), "\n") + 1; n != 24 {
				t.Errorf("the frame has %d lines, want 24", n)
			}
		})
	}
}

// TestScrollAfterTheTopItemIsDropped: a retry drops the streamed message
// the window's top was on; scrolling then stays inside the chat.
func TestScrollAfterTheTopItemIsDropped(t *testing.T) {
	m := New(Config{Style: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "hi"}))
	m.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: strings.Repeat("line\n", 60)}))
	m.Update(tea.KeyMsg{Type: tea.KeyPgUp})
	m.chat.topItem, m.chat.topLine = 1, 3 // the window's top is in the streamed message
	m.Update(ev(engine.KindRetry, &engine.RetryScheduled{Op: "model", Attempt: 2}))
	m.Update(tea.KeyMsg{Type: tea.KeyPgDown})
	m.Update(tea.KeyMsg{Type: tea.KeyPgUp})
	if m.chat.topItem >= len(m.chat.items) {
		t.Errorf("top item %d of %d", m.chat.topItem, len(m.chat.items))
	}
}

// streamBackend hands out runs whose events the test sends, and records
// how each run was cancelled.
type streamBackend struct {
	id   string
	runs chan chan engine.Event
	ctxs chan context.Context
}

func newStreamBackend() *streamBackend {
	return &streamBackend{id: "s1", runs: make(chan chan engine.Event, 1), ctxs: make(chan context.Context, 1)}
}

func (b *streamBackend) Start(ctx context.Context, task string) <-chan engine.Event {
	ch := make(chan engine.Event, 64)
	b.runs <- ch
	b.ctxs <- ctx
	return ch
}
func (b *streamBackend) Continue(ctx context.Context) <-chan engine.Event { return b.Start(ctx, "") }
func (b *streamBackend) ChangeMemory(engine.MemoryChanged) (engine.Event, error) {
	return engine.Event{}, engine.ErrBusy
}
func (b *streamBackend) SessionID() string { return b.id }
func (b *streamBackend) Close() error      { return nil }

// TestCancelKeepsTheStreamedText: ctrl+c while an answer streams keeps
// what came, marked as cut off, and the status line is idle again once the
// run has ended.
func TestCancelKeepsTheStreamedText(t *testing.T) {
	b := newStreamBackend()
	m := New(Config{Style: "notty", Backend: b})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.input.SetValue("tell me a story")
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	ch, ctx := <-b.runs, <-b.ctxs
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "tell me a story"}))
	for _, w := range strings.Fields("once upon a time there was") {
		m.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: w + " "}))
	}
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlC})
	if ctx.Err() == nil {
		t.Fatal("ctrl+c did not cancel the run")
	}
	if v := m.View(); !strings.Contains(v, "cancelling") {
		t.Errorf("while cancelling, the status line does not say so:\n%s", v)
	}
	// The engine ends the run: run_finished, then the channel closes.
	m.Update(ev(engine.KindRunFinished, &engine.RunFinished{StopReason: engine.StopCancelled, Error: "context canceled"}))
	close(ch)
	m.Update(runClosedMsg{ch})
	v := m.View()
	if !strings.Contains(v, "once upon a time there was") {
		t.Errorf("the streamed text was dropped:\n%s", v)
	}
	if !strings.Contains(v, "cut off") {
		t.Errorf("the text is not marked as cut off:\n%s", v)
	}
	if strings.Contains(v, "cancelling") || !strings.Contains(v, "· idle") {
		t.Errorf("after the run ended the status line is not idle:\n%s", v)
	}
}

// TestResumedCancelShowsThePartialAnswer: a session resumed after a run
// was cancelled mid-answer shows the text streamed before the cancel (it
// comes with run_finished: the journal has no deltas), as the live cancel
// does, and only once when the deltas were seen too.
func TestResumedCancelShowsThePartialAnswer(t *testing.T) {
	events := []engine.Event{
		{Kind: engine.KindRunStarted, Run: "r1", Time: time.Now(), Data: &engine.RunStarted{Task: "tell me a story"}},
		{Kind: engine.KindRunFinished, Run: "r1", Time: time.Now(), Data: &engine.RunFinished{StopReason: engine.StopCancelled,
			Error: "context canceled", Partial: "once upon a time there\x1b[2J was"}},
	}
	m := New(Config{Style: "notty", Backend: newStreamBackend(), Events: events})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	v := m.View()
	if !strings.Contains(v, "once upon a time there") || strings.Contains(v, "\x1b[2J") {
		t.Errorf("the partial answer is not shown (or not sanitized):\n%s", v)
	}
	if !strings.Contains(v, "Cancelled: the answer above was cut off.") || strings.Contains(v, "Cancelled.") {
		t.Errorf("the partial answer is not marked as cut off:\n%s", v)
	}

	live := New(Config{Style: "notty"})
	live.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	live.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "tell me a story"}))
	live.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: "once upon a time"}))
	live.Update(ev(engine.KindRunFinished, &engine.RunFinished{StopReason: engine.StopCancelled, Partial: "once upon a time"}))
	if v := live.View(); strings.Count(v, "once upon a time") != 1 {
		t.Errorf("the live cancel shows the partial answer %d times:\n%s", strings.Count(v, "once upon a time"), v)
	}
}

// TestCancelBeforeAnyTextSaysCancelled: with nothing streamed there is
// nothing to keep.
func TestCancelBeforeAnyTextSaysCancelled(t *testing.T) {
	m := New(Config{Style: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "hi"}))
	m.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: "hmm", Reasoning: true}))
	m.Update(ev(engine.KindRunFinished, &engine.RunFinished{StopReason: engine.StopCancelled}))
	v := m.View()
	if !strings.Contains(v, "Cancelled.") || strings.Contains(v, "cut off") || strings.Contains(v, "thinking:") {
		t.Errorf("after a cancel with no answer yet:\n%s", v)
	}
}

// TestFrameFitsSmallTerminals: the frame has the terminal's height and no
// wider line, down to 20×8, with the help open or not: the help and the
// tab bar give way before the panes do.
func TestFrameFitsSmallTerminals(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{20, 8}, {20, 9}, {30, 10}, {80, 12}, {80, 16}, {119, 20}, {80, 24}, {110, 24}, {120, 12}, {140, 40}, {160, 45}} {
		for _, help := range []bool{false, true} {
			m := New(Config{Style: "notty", Notice: "Using the built-in offline model."})
			m.Update(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
			if help {
				m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
			}
			lines := strings.Split(m.View(), "\n")
			if len(lines) != sz.h {
				t.Errorf("%dx%d help %v: %d lines", sz.w, sz.h, help, len(lines))
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > sz.w {
					t.Errorf("%dx%d help %v: line %d is %d cells wide: %q", sz.w, sz.h, help, i+1, w, l)
				}
			}
			if sz.h >= 16 && !help && !strings.Contains(m.View(), "enter send") {
				t.Errorf("%dx%d: no help line", sz.w, sz.h)
			}
			// ? shows every key, over the panes where they do not fit
			// beside them.
			if sz.h >= 16 && help && !regexp.MustCompile(`enter +send`).MatchString(m.View()) || help && !strings.Contains(m.View(), "ctrl+d") && sz.h >= 20 {
				t.Errorf("%dx%d: ? does not show all keys:\n%s", sz.w, sz.h, m.View())
			}
		}
	}
}

// TestEscClosesTheHelp: esc closes the full help, as it closes the picker
// and the details; in a pause it closes the help and does not abort.
func TestEscClosesTheHelp(t *testing.T) {
	m := New(Config{Style: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	if !strings.Contains(m.View(), "input history") {
		t.Fatal("? did not open the help")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyEsc})
	if strings.Contains(m.View(), "input history") {
		t.Error("esc did not close the help")
	}
	reply := make(chan engine.Verdict, 1)
	m.Update(gateMsg{gateRequest{pending: engine.Pending{Run: "r1", At: engine.Decide, Step: 1}, reply: reply}})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	m.Update(tea.KeyMsg{Type: tea.KeyEsc})
	if strings.Contains(m.View(), "input history") || len(reply) != 0 || m.pause == nil {
		t.Errorf("in a pause, esc with the help open: help shown %v, answered %d", strings.Contains(m.View(), "input history"), len(reply))
	}
	m.Update(tea.KeyMsg{Type: tea.KeyEsc})
	if v := <-reply; v.Action != engine.Abort {
		t.Errorf("esc in the pause: %s, want abort", v.Action)
	}
}

// TestTimelineFollowsAPause: a Timeline scrolled up comes back to the end
// when the run pauses and when a new run starts, so the pending row shows.
func TestTimelineFollowsAPause(t *testing.T) {
	b := newStreamBackend()
	m := New(Config{Style: "notty", Backend: b, Gate: NewGate(true)})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 20})
	for i := range 30 {
		m.Update(engineEventMsg{engine.Event{Kind: engine.KindRunStarted, Run: fmt.Sprint("r", i), Data: &engine.RunStarted{Task: fmt.Sprintf("task %d", i)}}})
		m.Update(engineEventMsg{engine.Event{Kind: engine.KindRunFinished, Run: fmt.Sprint("r", i), Data: &engine.RunFinished{StopReason: engine.StopAnswered}}})
	}
	scrollUp := func() {
		m.setFocus(focusTimeline)
		for range 40 {
			m.Update(tea.KeyMsg{Type: tea.KeyUp})
		}
		m.setFocus(focusInput)
		if strings.Contains(m.View(), "▶ task 29") {
			t.Fatal("the timeline did not scroll up")
		}
	}
	scrollUp()
	m.input.SetValue("the new task")
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	<-b.runs
	<-b.ctxs
	m.Update(engineEventMsg{engine.Event{Kind: engine.KindRunStarted, Run: "new", Step: 1, Data: &engine.RunStarted{Task: "the new task"}}})
	if !strings.Contains(m.View(), "▶ the new task") {
		t.Errorf("a new run's row is not in view:\n%s", m.View())
	}
	scrollUp()
	m.Update(engineEventMsg{engine.Event{Kind: engine.KindStepStarted, Run: "new", Step: 1, Data: &engine.StepStarted{}}})
	m.Update(engineEventMsg{engine.Event{Kind: engine.KindModelRequest, Run: "new", Step: 1, Data: &engine.ModelRequest{Messages: 1}}})
	m.Update(engineEventMsg{engine.Event{Kind: engine.KindGatePaused, Run: "new", Step: 1, Data: &engine.GatePaused{At: engine.Decide, Reason: engine.ReasonStep}}})
	m.Update(gateMsg{gateRequest{pending: engine.Pending{Run: "new", At: engine.Decide, Step: 1}, reply: make(chan engine.Verdict, 1)}})
	if v := m.View(); !strings.Contains(v, "waiting") {
		t.Errorf("the pending row is not in view:\n%s", v)
	}
}

// TestStatusLineKeepsTheState: at 80 columns with a long model name the
// state, a refusal and step mode are on the status line; the model and the
// session give way. The editor shows why it refused the arguments.
func TestStatusLineKeepsTheState(t *testing.T) {
	model := "qwen2.5-coder-32b-instruct-q4_k_m-gguf-from-a-local-server"
	m := New(Config{Style: "notty", Model: model, Gate: NewGate(true), Backend: newStreamBackend()})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.input.SetValue("write a file")
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	m.Update(ev(engine.KindStepStarted, &engine.StepStarted{}))
	m.Update(ev(engine.KindTextDelta, &engine.TextDelta{Text: "Let me"}))
	status := func() string { l := strings.Split(m.View(), "\n"); return l[len(l)-2] }
	if s := status(); !strings.Contains(s, "answering") || !strings.Contains(s, "step 1") || !strings.Contains(s, "step mode") || ansi.StringWidth(s) > 80 {
		t.Errorf("status while answering: %q", s)
	}
	reply := make(chan engine.Verdict, 1)
	call := &engine.ToolCall{ID: "c1", Name: "write_file", Args: json.RawMessage(`{"path":"a.txt","content":"hi"}`)}
	m.Update(gateMsg{gateRequest{pending: engine.Pending{Run: "r1", At: engine.Act, ToolCall: call, Approval: true, Step: 1}, reply: reply}})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("e")})
	m.argsEditor.SetValue(`{"path": "a.txt",`)
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlS})
	frame := m.View()
	lines := strings.Split(frame, "\n")
	if len(lines) != 24 {
		t.Fatalf("the editor's frame has %d lines", len(lines))
	}
	if !strings.Contains(strings.Join(lines[:4], "\n"), "✗ not a JSON object") {
		t.Errorf("the editor does not say why:\n%s", frame)
	}
	if s := lines[23]; !strings.Contains(s, "paused") || !strings.Contains(s, "not a JSON") || ansi.StringWidth(s) > 80 {
		t.Errorf("status in the editor: %q", s)
	}
	m.argsEditor.SetValue(`{"path": "a.txt"}`)
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlS})
	if v := <-reply; string(v.Args) != `{"path":"a.txt"}` {
		t.Errorf("verdict %s %s", v.Action, v.Args)
	}
	m.note = ""
	if s := status(); !strings.Contains(s, "thinking") || !strings.Contains(s, "model qwen2.5") || !strings.Contains(s, "…") {
		t.Errorf("status after the edit: %q, want the state and the model's name cut", s)
	}
}

// TestYourMessageIsShownAsTyped: the person's message is not Markdown:
// "17*23 and 6*7" keeps its stars (as emphasis it lost them), and
// "# not a heading" its hash; the answer is still rendered.
func TestYourMessageIsShownAsTyped(t *testing.T) {
	m := New(Config{Style: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "work out 17*23 and 6*7\n# not a heading"}))
	m.Update(ev(engine.KindDecision, &engine.Decided{Text: "it is **391**"}))
	view := ansi.Strip(m.View())
	for _, w := range []string{"work out 17*23 and 6*7", "# not a heading", "it is 391"} {
		if !strings.Contains(view, w) {
			t.Errorf("the chat has no %q:\n%s", w, view)
		}
	}
}

// TestTypingOnAPaneGoesToTheInput: letters typed while the Timeline or the
// Chat has the focus, that none of its keys takes, go to the input (they
// were lost); the pane's own keys still work.
func TestTypingOnAPaneGoesToTheInput(t *testing.T) {
	for _, f := range []focus{focusTimeline, focusChat} {
		m := New(Config{Style: "notty"})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		m.setFocus(f)
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("hi")})
		if m.focus != focusInput || m.input.Value() != "hi" {
			t.Errorf("focus %v: typed text went to %v, input %q", f, m.focus, m.input.Value())
		}
	}
	m := New(Config{Style: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.setFocus(focusTimeline)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k")}) // the Timeline's up
	if m.focus != focusTimeline || m.input.Value() != "" {
		t.Errorf("a Timeline key left the Timeline: focus %v, input %q", m.focus, m.input.Value())
	}
}
