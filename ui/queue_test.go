package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

func typed(m *Model, text string) {
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(text)})
}

// TestCtrlCClearsTheDraftThenAsks: ctrl+c with a draft clears it and says
// how to quit; on an empty, idle console it asks, and only the next ctrl+c
// quits; any other key in between takes the question back.
func TestCtrlCClearsTheDraftThenAsks(t *testing.T) {
	m := New(Config{Style: "notty", Backend: newStreamBackend()})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	typed(m, "half a thought")
	if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlC}); noClock(cmd) != nil || m.input.Value() != "" {
		t.Fatalf("ctrl+c with a draft: value %q, cmd %v", m.input.Value(), cmd != nil)
	}
	if !strings.Contains(m.View(), "draft cleared") {
		t.Errorf("the note does not say the draft was cleared:\n%s", m.View())
	}
	if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlC}); noClock(cmd) != nil || !strings.Contains(m.View(), "ctrl+c again quits") {
		t.Fatalf("ctrl+c on an empty console quit at once, or did not ask:\n%s", m.View())
	}
	typed(m, "x") // a key between: the question is taken back
	m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
	if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlC}); noClock(cmd) != nil {
		t.Fatal("ctrl+c quit after the question was taken back")
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlC})
	if cmd == nil {
		t.Fatal("the second ctrl+c did not quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("the second ctrl+c's command is not quit")
	}
}

// TestTasksTypedDuringARunAreQueued: messages sent while a run goes on are
// shown as queued, and sent in order as runs end; ↑ on an empty input
// takes the last one back to edit.
func TestTasksTypedDuringARunAreQueued(t *testing.T) {
	b := newStreamBackend()
	b.runs = make(chan chan engine.Event, 4)
	m := New(Config{Style: "notty", Backend: b})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	send := func(text string) {
		typed(m, text)
		m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	}
	send("first")
	first := <-b.runs
	<-b.ctxs
	send("second")
	send("third")
	send("fourth")
	if v := m.View(); !strings.Contains(v, "queued 1: second") || !strings.Contains(v, "queued 3: fourth") {
		t.Fatalf("the queue is not shown:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyUp}) // take "fourth" back
	if m.input.Value() != "fourth" || len(m.queue) != 2 {
		t.Fatalf("↑ took back %q, queue %q", m.input.Value(), m.queue)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlC}) // and drop it
	if m.input.Value() != "" || !m.running {
		t.Fatalf("ctrl+c on a draft taken back: %q, running %v", m.input.Value(), m.running)
	}
	first <- engine.Event{Kind: engine.KindRunFinished, Data: &engine.RunFinished{StopReason: engine.StopAnswered, Answer: "ok"}}
	close(first)
	for m.running && len(b.runs) == 0 {
		_, cmd := m.Update(mustMsg(t, waitForEvent(first)))
		if cmd == nil {
			break
		}
	}
	select {
	case <-b.runs:
	default:
		t.Fatal("the queued task was not sent when the run ended")
	}
	if len(m.queue) != 1 || m.queue[0] != "third" {
		t.Errorf("the queue after the first run: %q", m.queue)
	}
}

func mustMsg(t *testing.T, cmd tea.Cmd) tea.Msg {
	t.Helper()
	return cmd()
}

// TestInputGrows: the input box grows with its text up to a third of the
// screen, then scrolls, and shrinks when the text is sent.
func TestInputGrows(t *testing.T) {
	m := New(Config{Style: "notty", Backend: newStreamBackend()})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 30})
	if h := m.inputHeight(); h != 4 {
		t.Fatalf("an empty input is %d rows high, want 4", h)
	}
	typed(m, strings.Repeat("word ", 40)) // three rows at 76 columns
	if h := m.inputHeight(); h != 5 {
		t.Errorf("three rows of text: the box is %d rows high, want 5", h)
	}
	for range 30 {
		m.Update(tea.KeyMsg{Type: tea.KeyCtrlJ})
		typed(m, "more")
	}
	if h := m.inputHeight(); h != 10 {
		t.Errorf("a long draft: the box is %d rows high, want 10 (a third of 30)", h)
	}
	if n := len(strings.Split(m.View(), "\n")); n != 30 {
		t.Errorf("the frame has %d lines, want 30", n)
	}
}

// TestCtrlCCancelsTheRunAndHoldsTheQueue: ctrl+c with messages queued
// cancels the run and sends nothing when it ends: the queue is held, shown
// so, until enter on an empty input sends it; ctrl+c again drops it (issue
// 50, 7).
func TestCtrlCCancelsTheRunAndHoldsTheQueue(t *testing.T) {
	for _, then := range []string{"enter sends", "ctrl+c drops"} {
		t.Run(then, func(t *testing.T) {
			b := newStreamBackend()
			b.runs = make(chan chan engine.Event, 4)
			m := New(Config{Style: "notty", Backend: b})
			m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
			typed(m, "first")
			m.Update(tea.KeyMsg{Type: tea.KeyEnter})
			first := <-b.runs
			ctx := <-b.ctxs
			typed(m, "second")
			m.Update(tea.KeyMsg{Type: tea.KeyEnter})
			m.Update(tea.KeyMsg{Type: tea.KeyCtrlC})
			if ctx.Err() == nil {
				t.Fatal("ctrl+c with a queue did not cancel the run")
			}
			if v := m.View(); !strings.Contains(v, "held 1: second") || !strings.Contains(v, "enter on an empty input sends them") {
				t.Fatalf("the queue is not shown held:\n%s", v)
			}
			first <- engine.Event{Kind: engine.KindRunFinished, Data: &engine.RunFinished{StopReason: engine.StopCancelled}}
			close(first)
			for range 2 { // the event, then the channel closed
				m.Update(mustMsg(t, waitForEvent(first)))
			}
			if len(b.runs) != 0 {
				t.Fatal("the held queue was sent when the cancelled run ended")
			}
			if then == "enter sends" {
				m.Update(tea.KeyMsg{Type: tea.KeyEnter})
				select {
				case <-b.runs:
				default:
					t.Fatal("enter on an empty input did not send the held queue")
				}
				return
			}
			if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlC}); noClock(cmd) != nil {
				t.Fatal("the ctrl+c that drops the queue quit")
			}
			if len(m.queue) != 0 || strings.Contains(m.View(), "held 1") {
				t.Fatalf("ctrl+c did not drop the held queue: %q", m.queue)
			}
			m.Update(tea.KeyMsg{Type: tea.KeyEnter})
			if len(b.runs) != 0 {
				t.Fatal("enter sent a dropped queue")
			}
			typed(m, "next")
			m.Update(tea.KeyMsg{Type: tea.KeyEnter})
			select {
			case <-b.runs:
			default:
				t.Fatal("the next message was not sent")
			}
		})
	}
}
