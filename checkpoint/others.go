package checkpoint

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// Other sessions' files: sessions of one workspace share it, and a rewind
// of one must not take away, behind the key that rewinds its own steps,
// what another session's steps made since.

// Change is a file a session's step changed, as its checkpoints say: the
// checkpoint after the step lists it as changed since the one before.
type Change struct {
	Path    string
	Session string
	Step    int
	Time    time.Time // when the checkpoint that saw it was taken
}

// Made is what a session's own steps changed in the workspace: the files
// each checkpoint that follows one taken before a step lists as changed
// (the step's tools ran between the two). What changed between a run's
// end and the next step's checkpoint (by hand, or by someone else) is not
// the session's.
func Made(session string, points []Point) []Change {
	var out []Change
	for i := 1; i < len(points); i++ {
		prev := points[i-1]
		if prev.Reason != engine.CheckpointBefore {
			continue
		}
		for _, f := range points[i].Changed {
			out = append(out, Change{Path: f, Session: session, Step: prev.Step, Time: points[i].Time})
		}
	}
	return out
}

// Theirs notes in p.Others the files p writes or removes that another
// session's steps changed after the state p restores was kept (all of
// them when its time is not known): restoring them undoes that session's
// work, which Apply does only when told to (ApplyOver). changes are the
// other sessions' (Made); the session's own are passed over.
func (p *Plan) Theirs(session string, changes []Change) {
	p.Others = nil
	touched := append(slices.Clone(p.Write), p.Remove...)
	for _, c := range changes {
		if c.Session == session || !slices.Contains(touched, c.Path) {
			continue
		}
		if !p.To.Time.IsZero() && !c.Time.IsZero() && !c.Time.After(p.To.Time) {
			continue
		}
		if i := slices.IndexFunc(p.Others, func(o Change) bool { return o.Path == c.Path && o.Session == c.Session }); i >= 0 {
			p.Others[i] = c // the latest step of that session
			continue
		}
		p.Others = append(p.Others, c)
	}
	slices.SortFunc(p.Others, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
}

// String names a change: "notes.txt (session 0abc12, step 3)".
func (c Change) String() string {
	return fmt.Sprintf("%s (session %s, step %d)", c.Path, c.Session, c.Step)
}

// OthersError names the files a rewind would remove or overwrite that
// other sessions made or changed.
type OthersError struct{ Files []Change }

func (e *OthersError) Error() string {
	names := make([]string, len(e.Files))
	for i, c := range e.Files {
		names[i] = c.String()
	}
	return fmt.Sprintf("%d %s made or changed by other sessions would be removed or overwritten: %s",
		len(e.Files), engine.Plural(len(e.Files), "file"), strings.Join(names, ", "))
}
