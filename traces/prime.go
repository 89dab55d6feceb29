package traces

import "github.com/agentty/agentty/engine"

// Prime gives s the journaled events of a run that another process began
// and is continued here (a worker that died): s makes their spans as
// `agentty sessions trace` would, and sends none of those that end among
// them (the other process sent them). The spans still open at the end of
// past (the run's, a call or a decision the other process was in) carry
// their journaled start and are sent when the live events end them, so
// the live export of a continued run says what its journal says.
func (s *Sink) Prime(past []engine.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.priming = true
	defer func() { s.priming = false }()
	for _, ev := range past {
		s.emit(ev)
	}
}

// Sent counts the spans handed to the processors.
func (s *Sink) Sent() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}
