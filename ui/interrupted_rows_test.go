package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// TestInterruptedCallsKeepOneRowEach: a step of two calls cut by a kill,
// continued (the unfinished call asked about again, then left unrun):
// the Timeline has one act row a call, the interrupted one said so.
func TestInterruptedCallsKeepOneRowEach(t *testing.T) {
	at := time.Now()
	e := func(kind engine.Kind, step int, phase engine.Phase, d any) engine.Event {
		at = at.Add(time.Millisecond)
		return engine.Event{V: engine.SchemaVersion, Session: "s", Run: "run-1", Step: step, Phase: phase, Kind: kind, Time: at, Data: d}
	}
	calls := []engine.ToolCall{{ID: "c1", Name: "calculator", Args: json.RawMessage(`{"expression":"1+1"}`)}, {ID: "c2", Name: "run_shell", Args: json.RawMessage(`{"command":"sleep 4"}`)}}
	journal := []engine.Event{
		e(engine.KindRunStarted, 0, "", &engine.RunStarted{Task: "two calls"}),
		e(engine.KindStepStarted, 1, engine.Perceive, &engine.StepStarted{}),
		e(engine.KindDecision, 1, engine.Decide, &engine.Decided{ToolCalls: calls}),
		e(engine.KindToolStarted, 1, engine.Act, &engine.ToolStarted{Index: 0, ID: "c1", Name: "calculator"}),
		e(engine.KindToolStarted, 1, engine.Act, &engine.ToolStarted{Index: 1, ID: "c2", Name: "run_shell"}),
		e(engine.KindToolFinished, 1, engine.Act, &engine.ToolFinished{Index: 0, ID: "c1", Name: "calculator", Status: engine.ToolOK, Result: "2"}),
	}
	continued := []engine.Event{
		e(engine.KindGatePaused, 1, engine.Act, &engine.GatePaused{At: engine.Act, Reason: engine.ReasonInterrupted, ToolCall: &calls[1]}),
		e(engine.KindGateResumed, 1, engine.Act, &engine.GateResumed{Action: engine.Deny, By: "you, leaving it unrun"}),
		e(engine.KindToolFinished, 1, engine.Act, &engine.ToolFinished{Index: 1, ID: "c2", Name: "run_shell", Status: engine.ToolError, Result: "error: interrupted"}),
	}
	m := agentConsole(t, append(journal, continued...), 160, 40)
	acts := 0
	for _, r := range m.tl.rows {
		if r.phase == engine.Act {
			acts++
		}
	}
	if acts != 2 {
		for i, r := range m.tl.rows {
			t.Logf("%d %d %s %s %s", i, r.step, r.phase, r.text, r.status)
		}
		t.Errorf("%d act rows for two calls", acts)
	}
}

// TestTimelineShowsItsStartWhenTaller: a Timeline scrolled to its end in a
// short terminal, made taller (a resume lays out before the terminal's
// size is known), shows its first rows, not blank rows below hidden ones.
func TestTimelineShowsItsStartWhenTaller(t *testing.T) {
	at := time.Now()
	var evs []engine.Event
	e := func(kind engine.Kind, step int, phase engine.Phase, d any) {
		at = at.Add(time.Millisecond)
		evs = append(evs, engine.Event{V: engine.SchemaVersion, Session: "s", Run: "run-1", Step: step, Phase: phase, Kind: kind, Time: at, Data: d})
	}
	e(engine.KindRunStarted, 0, "", &engine.RunStarted{Task: "first task"})
	for step := 1; step <= 12; step++ {
		e(engine.KindStepStarted, step, engine.Perceive, &engine.StepStarted{})
		e(engine.KindModelRequest, step, engine.Perceive, &engine.ModelRequest{})
		e(engine.KindDecision, step, engine.Decide, &engine.Decided{Text: "thinking"})
	}
	m := agentConsole(t, evs, 160, 20)
	m.View() // drawn short, scrolled to its end
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 60})
	if v := m.View(); !strings.Contains(strings.Split(v, "\n")[1], "▶ first task") {
		t.Errorf("the taller Timeline does not start at its first row:\n%s", v)
	}
}
