package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// gracePaused returns a console with a grace of one second on a clock the
// test moves, which has typed "deploy th" when pending comes.
func gracePaused(t *testing.T, pending engine.Pending) (m *Model, reply chan engine.Verdict, clock *time.Time) {
	t.Helper()
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	clock = &now
	m = New(Config{Style: "notty", Gate: NewGate(false), Grace: time.Second})
	m.now = func() time.Time { return *clock }
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("deploy th")})
	reply = make(chan engine.Verdict, 1)
	_, cmd := m.Update(gateMsg{gateRequest{pending: pending, reply: reply}})
	if cmd == nil {
		t.Fatal("the pause asked for no redraw when its keys are armed")
	}
	return m, reply, clock
}

func verdictOf(reply chan engine.Verdict) (engine.Verdict, bool) {
	select {
	case v := <-reply:
		return v, true
	default:
		return engine.Verdict{}, false
	}
}

// TestTypingThroughAnApprovalRunsNothing: the approval bar comes while the
// person types "deploy the app" and enter; every key of it lands in the
// draft or is dropped, none answers (y, a, e, enter would each have run
// or opened something); after the grace, y approves and the draft is
// still there (issue 50, 3).
func TestTypingThroughAnApprovalRunsNothing(t *testing.T) {
	call := &engine.ToolCall{ID: "c1", Name: "run_shell", Args: []byte(`{"command":"rm -rf build"}`)}
	for _, kind := range []struct {
		name    string
		pending engine.Pending
	}{
		{"approval", engine.Pending{Run: "r1", Step: 1, At: engine.Act, ToolCall: call, Approval: true}},
		{"step pause", engine.Pending{Run: "r1", Step: 1, At: engine.Decide}},
		{"question", engine.Pending{Run: "r1", Step: 1, At: engine.Act, Question: &engine.Question{Question: "which?", Default: "all"}}},
	} {
		t.Run(kind.name, func(t *testing.T) {
			m, reply, clock := gracePaused(t, kind.pending)
			if v := m.View(); !strings.Contains(v, graceNote) {
				t.Fatalf("the bar does not say its keys are not armed:\n%s", v)
			}
			for _, k := range []tea.KeyMsg{
				{Type: tea.KeyRunes, Runes: []rune("e")}, {Type: tea.KeySpace, Runes: []rune(" ")}, {Type: tea.KeyRunes, Runes: []rune("a")},
				{Type: tea.KeyRunes, Runes: []rune("pp")}, {Type: tea.KeySpace, Runes: []rune(" ")}, {Type: tea.KeyRunes, Runes: []rune("y")}, {Type: tea.KeyEnter}, {Type: tea.KeyEsc},
			} {
				*clock = clock.Add(100 * time.Millisecond)
				m.Update(k)
			}
			if v, ok := verdictOf(reply); ok {
				t.Fatalf("a key typed in the grace answered the pause: %+v", v)
			}
			if m.argsEditor != nil || m.pause == nil {
				t.Fatal("a key typed in the grace opened the editor or ended the pause")
			}
			if got := m.input.Value(); got != "deploy the app y" {
				t.Errorf("the draft is %q, want %q", got, "deploy the app y")
			}
			*clock = clock.Add(time.Second)
			m.Update(armMsg{})
			if v := m.View(); strings.Contains(v, graceNote) {
				t.Fatalf("armed, the bar still says its keys are not:\n%s", v)
			}
			key := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")}
			if kind.pending.Question != nil || kind.pending.ToolCall == nil {
				key = tea.KeyMsg{Type: tea.KeyEnter}
			}
			m.Update(key)
			if v, ok := verdictOf(reply); !ok || v.Action != engine.Proceed {
				t.Fatalf("armed, %s answered %+v, %v", key, v, ok)
			}
			if got := m.input.Value(); got != "deploy the app y" {
				t.Errorf("after the pause the draft is %q", got)
			}
		})
	}
}

// TestTheNextPauseWaitsToo: y pressed twice approves the first of two
// queued approvals, not both: the second has a grace of its own.
func TestTheNextPauseWaitsToo(t *testing.T) {
	call := &engine.ToolCall{ID: "c1", Name: "run_shell", Args: []byte(`{"command":"make"}`)}
	m, first, clock := gracePaused(t, engine.Pending{Run: "r1", Step: 1, At: engine.Act, ToolCall: call, Approval: true})
	second := make(chan engine.Verdict, 1)
	m.Update(gateMsg{gateRequest{pending: engine.Pending{Run: "r2", ParentRun: "r1", Step: 1, At: engine.Act, ToolCall: call, Approval: true}, reply: second}})
	*clock = clock.Add(2 * time.Second)
	y := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")}
	m.Update(y)
	m.Update(y)
	if _, ok := verdictOf(first); !ok {
		t.Fatal("armed, y did not approve the first")
	}
	if v, ok := verdictOf(second); ok {
		t.Fatalf("the second y approved the next pause as it was drawn: %+v", v)
	}
	if got := m.input.Value(); got != "deploy thy" {
		t.Errorf("the draft is %q, want the second y in it", got)
	}
}

// TestCtrlCInTheGrace: ctrl+c is no answer a pause takes by accident: it
// acts at once, as always.
func TestCtrlCInTheGrace(t *testing.T) {
	call := &engine.ToolCall{ID: "c1", Name: "run_shell", Args: []byte(`{"command":"make"}`)}
	m, _, _ := gracePaused(t, engine.Pending{Run: "r1", Step: 1, At: engine.Act, ToolCall: call, Approval: true})
	if _, ok := m.graceKey(tea.KeyMsg{Type: tea.KeyCtrlC}); ok {
		t.Error("the grace took ctrl+c")
	}
}

// TestTheGraceLastsWhileTyping: someone who goes on typing after the bar
// came, a key every 0.6 s of a 1 s grace, for 3 s in all, arms nothing:
// each key starts the grace again. A second after the last key, y
// approves.
func TestTheGraceLastsWhileTyping(t *testing.T) {
	call := &engine.ToolCall{ID: "c1", Name: "run_shell", Args: []byte(`{"command":"make"}`)}
	m, reply, clock := gracePaused(t, engine.Pending{Run: "r1", Step: 1, At: engine.Act, ToolCall: call, Approval: true})
	for _, r := range "e notes" {
		*clock = clock.Add(600 * time.Millisecond)
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		if r == 'n' || r == 's' {
			if v, ok := verdictOf(reply); ok {
				t.Fatalf("%q typed 0.6 s after the last key answered the pause: %+v", r, v)
			}
		}
	}
	if m.argsEditor != nil {
		t.Fatal("a key typed while typing went on opened the editor")
	}
	if got := m.input.Value(); got != "deploy the notes" {
		t.Errorf("the draft is %q", got)
	}
	*clock = clock.Add(time.Second)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	if v, ok := verdictOf(reply); !ok || v.Action != engine.Proceed {
		t.Fatalf("a second after the last key, y answered %+v, %v", v, ok)
	}
}
