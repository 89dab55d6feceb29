package engine

import (
	"time"
)

// How a run stamps its events, applies them to the session and hands them
// to its sink.

// emit stamps an event with a full reading of the clock, applies it to the
// session and hands it to the sink.
func (r *run) emit(phase Phase, kind Kind, data any) error {
	return r.emitAt(r.rebase(), phase, kind, data)
}

// rebase reads the clock in full (wall and monotonic).
func (r *run) rebase() time.Time {
	r.clock = time.Now()
	return r.clock
}

// now reads the time from the monotonic clock alone, as an offset from the
// last full reading. Every event after a wait for a person (emit) and the
// run's first read the clock in full; so does any reading over a second
// after the last full one, so that a change of the wall clock shows soon.
func (r *run) now() time.Time {
	if r.clock.IsZero() {
		return r.rebase()
	}
	d := time.Since(r.clock)
	if d > time.Second {
		return r.rebase()
	}
	return r.clock.Add(d)
}

// stamp is the time of an event that follows the last one with nothing in
// between that could wait: with no sink (handing an event to a sink may
// block or write), the last event's time, which reads no clock.
func (r *run) stamp() time.Time {
	if r.sink == nil && !r.lastAt.IsZero() {
		return r.lastAt
	}
	return r.now()
}

// emitAt is emit with the time already known.
func (r *run) emitAt(t time.Time, phase Phase, kind Kind, data any) error {
	r.lastAt = t
	if r.e.brk != nil {
		r.observeBreak(data)
	}
	if r.tree != nil {
		return r.emitShared(t, phase, kind, data)
	}
	var ev Event // filled in place: a literal is built aside and copied
	ev.V, ev.Session, ev.Run, ev.Agent, ev.Step = SchemaVersion, r.s.ID, r.id, r.prof.agent, r.step
	ev.Phase, ev.Kind, ev.Time, ev.Data = phase, kind, t, data
	if err := r.s.apply(&ev); err != nil {
		return err
	}
	if r.sink == nil {
		return nil
	}
	return send(r.sink, &ev)
}

// send hands *ev to sink. Sink takes an Event by value: the copy is made in
// this frame, which is not on the stack while the event is applied.
//
//go:noinline
func send(sink Sink, ev *Event) error { return sink.Emit(*ev) }

// emitShared is emitAt for a run that shares its session with sub-runs:
// one event at a time, with step numbers and usage totals taken from the
// session as the event is applied.
func (r *run) emitShared(t time.Time, phase Phase, kind Kind, data any) error {
	tr := r.tree
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.err != nil {
		return tr.err // nothing is run past an event the sink did not take
	}
	switch d := data.(type) {
	case *Prompt:
		if tr.root.journaledPrompt(d.Hash) {
			return nil // a sibling sub-run journaled it first
		}
	case *StepStarted:
		r.step = tr.root.Steps + 1
	case *UsageRecorded:
		d.SessionPrompt = tr.root.Usage.PromptTokens + d.PromptTokens
		d.SessionCompletion = tr.root.Usage.CompletionTokens + d.CompletionTokens
	}
	ev := Event{V: SchemaVersion, Session: tr.root.ID, Run: r.id, Agent: r.prof.agent, ParentRun: r.parent, ParentCall: r.parentCall,
		Step: r.step, Phase: phase, Kind: kind, Time: t, Data: data}
	var err error
	switch {
	case r.parent == "":
		err = tr.root.apply(&ev)
	case r.s == nil: // a sub-run's run_started makes its state
		err = tr.root.apply(&ev)
		if r.s = tr.root.subs[r.id]; r.s != nil {
			r.s.reserve(2*r.prof.maxSteps+2, 16) // most sub-runs are short
		}
	default:
		err = tr.root.applyTo(r.s, &ev)
	}
	if err == nil && tr.sink != nil {
		err = send(tr.sink, &ev)
	}
	tr.err = err
	return err
}

// memory returns the session's facts.
func (r *run) memory() []Fact {
	if r.tree == nil {
		return r.s.memory
	}
	r.tree.mu.Lock()
	defer r.tree.mu.Unlock()
	return r.tree.root.memory
}

// flush lets a sink that holds events back write them now: the run is
// about to wait (for the model, a tool, the gate, a retry delay) or a step
// or the run has ended.
func (r *run) flush() error {
	f, ok := r.sink.(Flusher)
	if !ok {
		return nil
	}
	if r.tree == nil {
		return f.Flush()
	}
	tr := r.tree
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.err == nil {
		tr.err = f.Flush()
	}
	return tr.err
}
