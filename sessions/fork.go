package sessions

import (
	"fmt"

	"github.com/agentty/agentty/engine"
)

// Fork makes a new session whose journal is the prefix of id's up to the end
// of step at. The source is only read, so it may be open elsewhere.
func (s *Store) Fork(id string, at int) (string, error) {
	l, err := s.Load(id)
	if err != nil {
		return "", err
	}
	if at < 0 || at > l.Session.Steps {
		return "", fmt.Errorf("sessions: fork %s: step %d is not in the session (it has steps 0 to %d)", id, at, l.Session.Steps)
	}
	j, err := s.Create()
	if err != nil {
		return "", err
	}
	for _, ev := range l.Events {
		// A run that starts at step `at` begins after it.
		if ev.Step > at || ev.Step == at && ev.Kind == engine.KindRunStarted {
			break
		}
		ev.Session = j.ID
		if err := j.Emit(ev); err != nil {
			j.Close()
			return "", err
		}
	}
	j.mu.Lock()
	j.meta.Title = Title(fmt.Sprintf("%s (fork of %s at step %d)", l.Meta.Title, id, at))
	j.mu.Unlock()
	if err := j.Close(); err != nil {
		return "", err
	}
	return j.ID, nil
}
