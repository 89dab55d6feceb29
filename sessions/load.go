package sessions

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"

	"github.com/agentty/agentty/engine"
)

// Reading a session: its journal decoded line by line, what a corrupt line
// leaves readable, and the meta that the events say.

// CorruptError reports a journal line that cannot be read, in the middle of
// the journal. The session can still be read up to the line before it.
type CorruptError struct {
	File string
	Line int
	Err  error
}

// Error says which line of which file, and what is wrong with it.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("sessions: %s line %d is corrupt: %v (the session can be opened read-only up to line %d)", e.File, e.Line, e.Err, e.Line-1)
}

// Unwrap returns the decoding or replay error.
func (e *CorruptError) Unwrap() error { return e.Err }

// Loaded is a session read from its journal.
type Loaded struct {
	Meta    Meta
	Session *engine.Session
	// Events holds every event read, unknown kinds included, in order.
	Events []engine.Event
	// Warnings says what was repaired or skipped: a torn last line, events
	// of kinds this version does not know.
	Warnings []string
	// Corrupt is set when a line before the end could not be read; Session
	// and Events hold what came before it.
	Corrupt *CorruptError

	good int64  // bytes up to the end of the last good line
	torn []byte // an incomplete last line
}

// Load reads a session's journal without taking its lock: a reader may look
// at a session another agentty is writing. A corrupt line is reported in
// Loaded.Corrupt and as the error, with everything before it loaded.
func (s *Store) Load(id string) (*Loaded, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	raw, err := s.b.ReadJournal(id)
	if err != nil {
		return nil, err
	}
	m, ok, _ := s.b.ReadMeta(id)
	return s.loaded(id, raw, m, ok)
}

// loaded replays session id's journal raw, with its stored meta m (when
// ok) for what the journal does not say.
func (s *Store) loaded(id string, raw []byte, m Meta, ok bool) (*Loaded, error) {
	name := s.JournalPath(id)
	if name == "" {
		name = "session " + id
	}
	l := Read(raw, name, id)
	if ok {
		if m.Title != "" {
			l.Meta.Title = m.Title
		}
		if l.Meta.Created.IsZero() { // no events yet (Reserve)
			l.Meta.Created, l.Meta.Updated = m.Created, m.Updated
		}
	}
	if l.Corrupt != nil {
		return l, l.Corrupt
	}
	return l, nil
}

// Read replays journal bytes into a fresh session. It never fails: a torn
// last line is dropped with a warning; a bad line elsewhere stops the
// replay and is reported in Corrupt. name is used in messages.
func Read(b []byte, name, id string) *Loaded {
	l := &Loaded{Session: engine.NewSession(id), Meta: Meta{ID: id, Format: engine.SchemaVersion}}
	// Split into complete lines; what follows the last newline is torn.
	var lines [][]byte
	off := 0
	for off < len(b) {
		end := bytes.IndexByte(b[off:], '\n')
		if end < 0 {
			l.torn = b[off:]
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s line %d is incomplete (%d bytes, a crash mid-write?) and was dropped", name, len(lines)+1, len(b)-off))
			break
		}
		lines = append(lines, b[off:off+end+1])
		off += end + 1
	}
	decoded := decodeLines(lines)
	l.Events = make([]engine.Event, 0, len(lines))
	for i, ln := range lines {
		if len(bytes.TrimSpace(ln)) > 0 {
			d := decoded[i]
			if d.err != nil {
				l.Corrupt = &CorruptError{File: name, Line: i + 1, Err: d.err}
				break
			}
			ev := d.ev
			if !ev.Known() {
				l.Warnings = append(l.Warnings, fmt.Sprintf("%s line %d: unknown event kind %q (written by a newer agentty?) was skipped", name, i+1, ev.Kind))
			} else if err := l.Session.Apply(ev); err != nil {
				l.Corrupt = &CorruptError{File: name, Line: i + 1, Err: err}
				break
			}
			l.Events = append(l.Events, ev)
			l.Meta.observe(ev)
		}
		l.good += int64(len(ln))
	}
	l.Meta.LastStep = l.Session.Steps
	l.Meta.Runs = l.Session.Runs
	l.Meta.Usage = l.Session.Usage
	l.Meta.Interrupted = l.Session.Interrupted()
	return l
}

type decodedLine struct {
	ev  engine.Event
	err error
}

// decodeLines decodes journal lines, on every core for a long journal:
// decoding is most of the cost of a resume, and lines decode independently.
// Applying them stays sequential.
func decodeLines(lines [][]byte) []decodedLine {
	out := make([]decodedLine, len(lines))
	decode := func(from, to int) {
		for i := from; i < to; i++ {
			if raw := bytes.TrimSpace(lines[i]); len(raw) > 0 {
				out[i].ev, out[i].err = engine.DecodeEvent(raw)
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(lines)/500)
	if workers <= 1 {
		decode(0, len(lines))
		return out
	}
	var wg sync.WaitGroup
	per := (len(lines) + workers - 1) / workers
	for w := range workers {
		wg.Go(func() { decode(w*per, min((w+1)*per, len(lines))) })
	}
	wg.Wait()
	return out
}

// observe updates the meta for one event.
func (m *Meta) observe(ev engine.Event) {
	if m.Created.IsZero() {
		m.Created = ev.Time
	}
	if ev.Time.After(m.Updated) {
		m.Updated = ev.Time
	}
	if ev.Step > m.LastStep {
		m.LastStep = ev.Step
	}
	switch d := ev.Data.(type) { // the model calls of every run, sub-runs' too
	case *engine.UsageRecorded:
		m.Usage.Add(d.Usage)
	case *engine.ContextCompacted:
		m.Usage.Add(d.Usage)
	}
	if ev.ParentRun != "" {
		return // a sub-run: the runs, title, model and state are the top-level runs'
	}
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		m.Runs++
		if m.Title == "" {
			m.Title = Title(d.Task)
		}
		if d.Model != "" {
			m.Model = d.Model
		}
		m.Interrupted = true
	case *engine.RunFinished:
		m.Interrupted = false
	case *engine.ModelChanged:
		m.Model = d.Model
	}
	st, _ := ev.Data.(*engine.Settings) // settings_changed, or a run's
	if d, ok := ev.Data.(*engine.RunStarted); ok {
		st = d.Settings
	}
	if st != nil {
		if st.Workspace != "" {
			m.Workspace = st.Workspace
		}
		if m.Origin == "" {
			m.Origin = st.Origin
		}
	}
}
