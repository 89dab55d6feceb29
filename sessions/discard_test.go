package sessions_test

import (
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// TestDiscardStep: a journal cut back for a drain keeps everything up to
// the start of the last step, a handoff after the step before included,
// and drops that step's start and what followed it; DropUnwritten drops
// everything unwritten.
func TestDiscardStep(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	ev := func(step int, kind engine.Kind, data any) engine.Event {
		return engine.Event{V: engine.SchemaVersion, Session: j.ID, Run: "run-1", Step: step, Kind: kind, Time: time.Now(), Data: data}
	}
	emit := func(e engine.Event) {
		if err := j.Emit(e); err != nil {
			t.Fatal(err)
		}
	}
	emit(ev(0, engine.KindRunStarted, &engine.RunStarted{Task: "go", MaxSteps: 5}))
	emit(ev(1, engine.KindStepStarted, &engine.StepStarted{}))
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}
	emit(ev(1, engine.KindDecision, &engine.Decided{ToolCalls: []engine.ToolCall{{ID: "c1", Name: "transfer_to_x"}}}))
	emit(ev(1, engine.KindToolStarted, &engine.ToolStarted{ID: "c1", Name: "transfer_to_x"}))
	emit(ev(1, engine.KindToolFinished, &engine.ToolFinished{ID: "c1", Name: "transfer_to_x", Status: engine.ToolOK, Result: "transferred to x"}))
	emit(ev(1, engine.KindStepFinished, &engine.StepFinished{ToolCalls: 1}))
	emit(ev(1, engine.KindHandoff, &engine.Handoff{To: "x", Call: "c1"}))
	emit(ev(2, engine.KindStepStarted, &engine.StepStarted{Turn: 1}))
	emit(ev(2, engine.KindModelRequest, &engine.ModelRequest{}))
	j.DiscardStep()
	j.DiscardStep() // twice: nothing more
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := store.Load(j.ID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []engine.Kind
	for _, e := range l.Events {
		kinds = append(kinds, e.Kind)
	}
	if n := len(kinds); n != 7 || kinds[n-1] != engine.KindHandoff {
		t.Errorf("after DiscardStep the journal holds %v, want it to end with the handoff of step 1", kinds)
	}

	j2, _, err := store.OpenWriter(j.ID)
	if err != nil {
		t.Fatal(err)
	}
	j2.Emit(ev(2, engine.KindStepStarted, &engine.StepStarted{Turn: 1}))
	j2.DropUnwritten()
	if err := j2.Close(); err != nil {
		t.Fatal(err)
	}
	if l2, err := store.Load(j.ID); err != nil || len(l2.Events) != len(l.Events) {
		t.Errorf("DropUnwritten wrote something: %d events, want %d (%v)", len(l2.Events), len(l.Events), err)
	}
}

// TestListRunning: a session being written is listed as such, with the
// step of its last written event (its meta is as old as its run's start).
func TestListRunning(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	base := time.Now().Add(time.Minute)
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }
	for i, ev := range []engine.Event{
		{Kind: engine.KindRunStarted, Data: &engine.RunStarted{Task: "go", MaxSteps: 9}},
		{Step: 1, Kind: engine.KindStepStarted, Data: &engine.StepStarted{}},
	} {
		ev.V, ev.Session, ev.Run, ev.Time = engine.SchemaVersion, j.ID, "run-1", at(i)
		if err := j.Emit(ev); err != nil {
			t.Fatal(err)
		}
	}
	j.Flush() // the meta is saved here, at step 1
	for step := 2; step <= 3; step++ {
		j.Emit(engine.Event{V: engine.SchemaVersion, Session: j.ID, Run: "run-1", Step: step, Kind: engine.KindStepStarted, Time: at(step), Data: &engine.StepStarted{Turn: step - 1}})
	}
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}
	list, err := store.List()
	if err != nil || len(list) != 1 {
		t.Fatal(list, err)
	}
	if l := list[0]; !l.Writing || l.LastStep != 3 || !l.Updated.Equal(at(3)) {
		t.Errorf("listed as writing=%v at step %d, %v; want writing at step 3, %v", l.Writing, l.LastStep, l.Updated, at(3))
	}
	j.Close()
	if list, _ := store.List(); list[0].Writing {
		t.Error("a closed session is still listed as being written")
	}
}
