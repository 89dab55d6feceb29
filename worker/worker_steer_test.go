package worker

import (
	"testing"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
)

// A run continued by another worker takes answers signed with the key
// journaled when it started, not a later request's: anyone who may submit
// can queue a request naming the run's id and a key of their own.
func TestContinuedRunKeepsItsSubmittersKey(t *testing.T) {
	s := engine.NewSession("s1")
	if got := steerKey(s, bus.RunRequest{Steer: "owner"}, false); got != "owner" {
		t.Fatalf("a new run: %q", got)
	}
	// The run_started that carries it, as the journal keeps it.
	st := engine.Settings{Steer: "owner"}
	if err := s.Apply(engine.Event{V: engine.SchemaVersion, Session: "s1", Run: "run-1", Kind: engine.KindRunStarted, Data: &engine.RunStarted{Task: "t", Settings: &st}}); err != nil {
		t.Fatal(err)
	}
	if got := steerKey(s, bus.RunRequest{Steer: "attacker"}, true); got != "owner" {
		t.Errorf("a continued run takes the key %q; want the journaled owner's", got)
	}
	if got := steerKey(engine.NewSession("s2"), bus.RunRequest{Steer: "attacker"}, true); got != "" {
		t.Errorf("a continued run with no journaled key takes %q; want none (the operator alone)", got)
	}
}
