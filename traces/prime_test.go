package traces_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/traces"
)

// A run interrupted in its tool call (its worker died) and continued by
// another: the dead worker's sink sent the spans that ended before it
// died; the new worker's sink, primed with the journal, sends the rest.
// Together they are exactly what sessions trace makes of the journal: the
// same span ids with the same start and end (the run's span starts at the
// run's start, not at the continuation), none twice, none missing.
func TestPrimedSinkSendsWhatTheJournalSays(t *testing.T) {
	r := runTask(t, context.Background(), offlineConfig(t), "what is 17*23?", traces.Options{})
	var events []engine.Event
	for _, b := range r.journal.lines {
		ev, err := engine.DecodeEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	cut := slices.IndexFunc(events, func(ev engine.Event) bool { return ev.Kind == engine.KindToolStarted }) + 1
	if cut == 0 {
		t.Fatal("no tool call in the run")
	}
	dead, deadSpans := recorder(traces.Options{})
	for _, ev := range events[:cut] {
		dead.Emit(ev)
	}
	live, liveSpans := recorder(traces.Options{})
	live.Prime(events[:cut])
	for _, ev := range events[cut:] {
		live.Emit(ev)
	}
	live.Close()
	got := append(spanKeys(deadSpans.Ended()), spanKeys(liveSpans.Ended())...)
	want := spanKeys(replay(t, r.journal, traces.Options{}))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the dead worker's and the continuing worker's spans:\n%q\nthe journal's:\n%q", got, want)
	}
	if len(liveSpans.Ended()) == 0 || len(deadSpans.Ended()) == 0 {
		t.Errorf("sent by the dead worker %d, by the continuing one %d: the cut proves little", len(deadSpans.Ended()), len(liveSpans.Ended()))
	}
}

// spanKeys names each span by id, name, start and end.
func spanKeys(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, fmt.Sprintf("%s %s %d %d", s.SpanContext().SpanID(), s.Name(), s.StartTime().UnixNano(), s.EndTime().UnixNano()))
	}
	return out
}
