package console

import (
	"time"

	"github.com/agentty/agentty/checkpoint"
	"github.com/agentty/agentty/sessions"
)

// OthersMade is what the steps of the sessions other than self changed in
// the workspace where names (host:folder, as checkpoints name it) after
// since: read from the journals of the sessions written since (or being
// written). A rewind of self asks before it takes that work away
// (checkpoint.Plan.Theirs). A session that cannot be read is passed over.
func OthersMade(store *sessions.Store, self, where string, since time.Time) []checkpoint.Change {
	list, err := store.List()
	if err != nil {
		return nil
	}
	var out []checkpoint.Change
	for _, s := range list {
		if s.ID == self || s.Err != nil || (!since.IsZero() && s.Updated.Before(since) && !s.Interrupted) {
			continue
		}
		l, _ := store.Load(s.ID) // a torn last line is no reason to pass it over
		if l == nil {
			continue
		}
		var points []checkpoint.Point
		for _, p := range checkpoint.Points(l.Events) {
			if p.Where == where {
				points = append(points, p)
			}
		}
		out = append(out, checkpoint.Made(s.ID, points)...)
	}
	return out
}
