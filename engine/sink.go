package engine

// Sink receives the events of a run, one at a time, in order, from the run's
// goroutine. An error from Emit ends the run with stop reason error: a journal
// that cannot be written must not be run past.
type Sink interface {
	Emit(Event) error
}

// Flusher is a Sink that may hold events back to write several at once. The
// engine calls Flush whenever it is about to wait — before the model is
// asked, before tools run, before the gate waits, before a retry delay —
// and at the end of each step and of the run, so nothing is held while the
// run waits.
type Flusher interface {
	Sink
	Flush() error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event) error

// Emit calls f.
func (f SinkFunc) Emit(ev Event) error { return f(ev) }

// Sinks sends every event to each sink in order, stopping at the first
// error. The first sink comes first in every sense: put the journal there.
// When it holds events back (a Releaser, such as the journal), the others
// are told of them only when it has written them, at Flush, so that nobody
// learns of an event the journal has not written.
type Sinks []Sink

// Releaser is a Flusher that holds events back until Flush, and then hands
// them on, written, to the sinks after it.
type Releaser interface {
	Flusher
	Release() ([]Event, error)
}

// holds reports whether a sink holds events back until a flush.
func holds(k Sink) bool {
	switch k := k.(type) {
	case Sinks:
		return len(k) > 0 && holds(k[0])
	case Releaser:
		return true
	}
	return false
}

// Emit implements Sink.
func (s Sinks) Emit(ev Event) error {
	if len(s) > 0 && holds(s[0]) {
		return s[0].Emit(ev) // the others hear of it at Flush
	}
	for _, k := range s {
		if k == nil {
			continue
		}
		if err := k.Emit(ev); err != nil {
			return err
		}
	}
	return nil
}

// Flush implements Flusher.
func (s Sinks) Flush() error {
	_, err := s.Release()
	return err
}

// Release implements Releaser: the first sink writes what it held, the
// others are told of it, and the events are handed on.
func (s Sinks) Release() ([]Event, error) {
	if len(s) == 0 || !holds(s[0]) {
		return nil, flushAll(s)
	}
	released, err := s[0].(Releaser).Release()
	if err != nil {
		return nil, err
	}
	for _, ev := range released {
		for _, k := range s[1:] {
			if k == nil {
				continue
			}
			if err := k.Emit(ev); err != nil {
				return nil, err
			}
		}
	}
	return released, flushAll(s[1:])
}

func flushAll(s []Sink) error {
	for _, k := range s {
		if f, ok := k.(Flusher); ok {
			if err := f.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// chanSink hands events on to the channel of a run started with Start or
// StartContinue.
type chanSink chan<- Event

func (c chanSink) Emit(ev Event) error {
	c <- ev
	return nil
}
