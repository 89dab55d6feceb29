package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// TestResumedInterruptedIsTheEngines: whether a resumed session's last run
// was interrupted is what engine.Session says, and ctrl+r continues a run
// only then. A memory edit made after the last run finished is the last
// event of its journal, and the run is not interrupted (the console used
// to say it was, and ctrl+r then failed with engine.ErrNotInterrupted).
func TestResumedInterruptedIsTheEngines(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	e := func(k engine.Kind, d any) engine.Event {
		return engine.Event{V: engine.SchemaVersion, Session: "s1", Run: "r1", Step: 1, Kind: k, Time: t0, Data: d}
	}
	started := []engine.Event{
		e(engine.KindRunStarted, &engine.RunStarted{Task: "what is 17*23?"}),
		e(engine.KindStepStarted, &engine.StepStarted{}),
		e(engine.KindDecision, &engine.Decided{Text: "391"}),
		e(engine.KindStepFinished, &engine.StepFinished{}),
	}
	finished := append(started[:len(started):len(started)], e(engine.KindRunFinished, &engine.RunFinished{StopReason: engine.StopAnswered, Answer: "391"}))
	edit := e(engine.KindMemoryChanged, &engine.MemoryChanged{Op: engine.MemorySet, Key: "city", Value: "Paris", Source: "person"})
	tests := []struct {
		name        string
		events      []engine.Event
		interrupted bool
	}{
		{"memory edit after a finished run", append(finished[:len(finished):len(finished)], edit), false},
		{"finished run", finished, false},
		{"run with no run_finished", started, true},
		{"memory edit after an interrupted run", append(started[:len(started):len(started)], edit), true},
		{"no run", []engine.Event{edit}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := engine.NewSession("s1")
			for _, ev := range tt.events {
				if err := s.Apply(ev); err != nil {
					t.Fatal(err)
				}
			}
			if s.Interrupted() != tt.interrupted {
				t.Fatalf("the engine says interrupted=%v, the test %v", s.Interrupted(), tt.interrupted)
			}
			b := newStreamBackend()
			m := New(Config{Style: "notty", Backend: b, Events: tt.events})
			m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			says := strings.Contains(m.View(), "The last run was interrupted")
			if says != tt.interrupted || m.canContinue() != tt.interrupted {
				t.Errorf("the console says interrupted=%v (ctrl+r offered %v), the engine %v:\n%s", says, m.canContinue(), tt.interrupted, m.View())
			}
			m.Update(tea.KeyMsg{Type: tea.KeyCtrlR})
			if continued := len(b.runs) == 1; continued != tt.interrupted {
				t.Errorf("ctrl+r continued a run: %v, want %v (note %q)", continued, tt.interrupted, m.note)
			}
			if !tt.interrupted && !strings.Contains(m.note, "no interrupted run") {
				t.Errorf("ctrl+r with nothing to continue: note %q", m.note)
			}
		})
	}
}

// roBackend is a backend on a session another agentty writes.
type roBackend struct{ *streamBackend }

func (roBackend) ReadOnly() string { return "session s1 is open in another agentty" }

// TestReadOnlyUnfinishedRun: a session opened read-only because another
// agentty writes it does not call its last run interrupted (it may be going
// on there) and points at watch instead of ctrl+r.
func TestReadOnlyUnfinishedRun(t *testing.T) {
	e := func(kind engine.Kind, data any) engine.Event {
		return engine.Event{V: engine.SchemaVersion, Session: "s1", Run: "run-1", Kind: kind, Time: time.Unix(0, 0), Data: data}
	}
	events := []engine.Event{e(engine.KindRunStarted, &engine.RunStarted{Task: "go", MaxSteps: 5})}
	m := New(Config{Style: "notty", Backend: roBackend{newStreamBackend()}, Events: events})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	v := m.View()
	if strings.Contains(v, "The last run was interrupted") || !strings.Contains(v, "agentty watch s1") {
		t.Errorf("a read-only session's unfinished run:\n%s", v)
	}
}
