package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	tea "github.com/charmbracelet/bubbletea"
)

// A status-line note goes with what it was about: the memory form's
// refusal with the form, any note with the session left.
func TestNotesDoNotOutliveTheirCause(t *testing.T) {
	m := New(Config{Model: "script", Style: "notty", Backend: textBackend{}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.setFocus(focusMemory)
	press(m, "a")
	if m.memForm == nil {
		t.Fatal("a did not open the memory form")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("no equals sign")})
	press(m, "enter")
	if m.note != "write it as key = value" {
		t.Fatalf("note after a bad fact: %q", m.note)
	}
	press(m, "esc")
	if m.note != "" || m.memForm != nil {
		t.Errorf("after esc the note is %q", m.note)
	}
	m.note = "something about this session"
	m.Update(openedMsg{backend: textBackend{}})
	if m.note != "" {
		t.Errorf("after a session switch the note is %q", m.note)
	}
}

// Opening a search hit shows its step in the Chat too, not the end.
func TestSearchHitScrollsTheChat(t *testing.T) {
	var evs []engine.Event
	step := 0
	for i := 1; i <= 40; i++ {
		run := fmt.Sprintf("run-%d", i)
		evs = append(evs,
			engine.Event{Run: run, Step: step, Kind: engine.KindRunStarted, Data: &engine.RunStarted{Task: fmt.Sprintf("task number %d", i)}})
		step++
		evs = append(evs,
			engine.Event{Run: run, Step: step, Kind: engine.KindStepStarted, Data: &engine.StepStarted{}},
			engine.Event{Run: run, Step: step, Kind: engine.KindDecision, Data: &engine.Decided{Text: fmt.Sprintf("answer number %d", i)}},
			engine.Event{Run: run, Step: step, Kind: engine.KindRunFinished, Data: &engine.RunFinished{StopReason: engine.StopAnswered, Answer: fmt.Sprintf("answer number %d", i)}})
	}
	m := agentConsole(t, evs, 120, 40)
	if v := m.View(); !strings.Contains(v, "answer number 40") {
		t.Fatalf("the chat does not start at its end:\n%s", v)
	}
	m.jumpTo("run-23", 23, "answer")
	v := m.View()
	if !strings.Contains(v, "answer number 23") || strings.Contains(v, "answer number 40") {
		t.Errorf("the chat does not show step 23:\n%s", v)
	}
}

// At 80 columns a task sent while the Timeline was the pane shown has its
// answer shown: the Chat comes back when the run ends.
func TestNarrowAnswerShowsTheChat(t *testing.T) {
	m := New(Config{Model: "script", Style: "notty", Backend: textBackend{}})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, "tab", "tab")
	if m.shown != focusTimeline {
		t.Fatalf("tab tab shows %v", m.shown)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("what is 2+2?")}) // typing goes to the input
	m.running = true
	for _, ev := range []engine.Event{
		{Run: "run-1", Kind: engine.KindRunStarted, Data: &engine.RunStarted{Task: "what is 2+2?"}},
		{Run: "run-1", Step: 1, Kind: engine.KindDecision, Data: &engine.Decided{Text: "2+2 = 4"}},
		{Run: "run-1", Step: 1, Kind: engine.KindRunFinished, Data: &engine.RunFinished{StopReason: engine.StopAnswered, Answer: "2+2 = 4"}},
	} {
		m.Update(engineEventMsg{ev})
	}
	if v := m.View(); m.shown != focusChat || !strings.Contains(v, "2+2 = 4") {
		t.Errorf("the answer is not shown:\n%s", v)
	}
}

// The details of a step say how its pauses were answered (an edited call
// is "edited", not "proceed"), and show the arguments of a call that was
// aborted before it ran.
func TestDetailsOfEditedAndAbortedCalls(t *testing.T) {
	c1 := engine.ToolCall{ID: "c1", Name: "calculator", Args: []byte(`{"expression":"1+1"}`)}
	c2 := engine.ToolCall{ID: "c2", Name: "calculator", Args: []byte(`{"expression":"2+2"}`)}
	evs := []engine.Event{
		{Run: "run-1", Kind: engine.KindRunStarted, Data: &engine.RunStarted{Task: "sums"}},
		{Run: "run-1", Step: 1, Kind: engine.KindStepStarted, Data: &engine.StepStarted{}},
		{Run: "run-1", Step: 1, Kind: engine.KindDecision, Data: &engine.Decided{ToolCalls: []engine.ToolCall{c1, c2}}},
		{Run: "run-1", Step: 1, Kind: engine.KindGatePaused, Data: &engine.GatePaused{At: engine.Act, Reason: engine.ReasonBreak, Break: "tool=calculator", ToolCall: &c1}},
		{Run: "run-1", Step: 1, Kind: engine.KindGateResumed, Data: &engine.GateResumed{Action: engine.Proceed, Args: []byte(`{"expression":"3+3"}`)}},
		{Run: "run-1", Step: 1, Kind: engine.KindToolStarted, Data: &engine.ToolStarted{ID: "c1", Name: "calculator", Args: []byte(`{"expression":"3+3"}`)}},
		{Run: "run-1", Step: 1, Kind: engine.KindToolFinished, Data: &engine.ToolFinished{ID: "c1", Name: "calculator", Status: engine.ToolOK, Result: "3+3 = 6"}},
		{Run: "run-1", Step: 1, Kind: engine.KindGatePaused, Data: &engine.GatePaused{At: engine.Act, Reason: engine.ReasonStep, ToolCall: &c2}},
		{Run: "run-1", Step: 1, Kind: engine.KindGateResumed, Data: &engine.GateResumed{Action: engine.Abort}},
		{Run: "run-1", Step: 1, Kind: engine.KindToolFinished, Data: &engine.ToolFinished{Index: 1, ID: "c2", Name: "calculator", Status: engine.ToolSkipped, Result: "skipped: the run was aborted"}},
	}
	m := agentConsole(t, evs, 120, 40)
	d := strings.Join(m.tl.detailLines(100), "\n")
	for _, want := range []string{
		`Gate: breakpoint tool=calculator: paused before calling calculator: edited: {"expression":"3+3"}`,
		"Gate: paused before calling calculator: abort",
		`args: {"expression":"2+2"}`,
	} {
		if !strings.Contains(d, want) {
			t.Errorf("the details do not say %q:\n%s", want, d)
		}
	}
}

// noClock is cmd but for the clock of a note it set (nil when that is all
// it is), for tests that check a key did nothing else.
func noClock(cmd tea.Cmd) tea.Cmd {
	if cmd == nil || cmdIs(cmd, "noteClock") {
		return nil
	}
	return cmd
}

// TestNotesDoNotOutstayTheirCause: a note goes when its clock ends (not
// when an older note's does); "wait for the run…" goes when the run ends;
// the question before quitting, gone, takes its armed ctrl+c with it; the
// status says a question waits for the person, not "thinking".
func TestNotesDoNotOutstayTheirCause(t *testing.T) {
	b := newStreamBackend()
	m := New(Config{Style: "notty", Backend: b})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlC}) // asks before quitting
	if !cmdIs(cmd, "noteClock") {
		t.Fatal("no clock for the note")
	}
	first := noteExpiredMsg{seq: m.noteSeq, note: m.note}
	m.Update(first)
	if m.note != "" || m.quitting {
		t.Fatalf("the question outstayed its clock: note %q, quitting %v", m.note, m.quitting)
	}
	if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlC}); noClock(cmd) != nil {
		t.Fatal("ctrl+c quit after the question had gone")
	}
	older := noteExpiredMsg{seq: m.noteSeq, note: m.note}
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlT}) // step mode: a newer note
	m.Update(older)
	if !strings.Contains(m.note, "step mode") {
		t.Fatalf("an older note's clock took down a newer note: %q", m.note)
	}
	// A run: ctrl+o says to wait for it, until it ends.
	m.input.SetValue("hello")
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlO})
	if !strings.Contains(m.note, "wait for the run") {
		t.Fatalf("ctrl+o during a run: note %q", m.note)
	}
	m.Update(runClosedMsg{ch: m.events})
	if m.note != "" {
		t.Errorf("the run ended and its note stays: %q", m.note)
	}
	// A question waits for the person, whatever the run's events say.
	m.Update(gateMsg{gateRequest{pending: engine.Pending{Question: &engine.Question{Question: "your name?"}}, reply: make(chan engine.Verdict, 1)}})
	m.Update(ev(engine.KindStepStarted, &engine.StepStarted{}))
	if s := m.statusLine(); !strings.Contains(s, "waits for your answer") || strings.Contains(s, "thinking") {
		t.Errorf("the status while a question waits: %s", s)
	}
}
