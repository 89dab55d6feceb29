package sessions

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentty/agentty/engine"
)

// Journal appends a session's events to its journal. It implements
// engine.Releaser: put it first in an engine.Sinks, and the sinks after it
// hear of each event only once it is written. The engine flushes whenever
// it is about to wait (before the model is asked, before a tool runs,
// before the gate waits) and at each step's end, so the events between two
// waits go to disk in one write(2), and a killed process loses nothing it
// reported. The file is fsynced at every step boundary and at the end of a
// run. text_delta events are passed on but not journaled: the decision
// event that follows holds the whole text.
//
// A Journal holds the session's lock until Close. Emit and Flush are called
// from one run's goroutine at a time; Close may be called from another.
type Journal struct {
	ID string

	mu sync.Mutex // guards everything below
	// create is set for a new session not yet in the backend: it is
	// made, locked and opened when the first event is written, so a
	// session no one used leaves nothing behind.
	create Backend
	w      Writer
	meta   Meta
	buf    []byte         // encoded events not yet written
	queue  []engine.Event // events not yet released
	sync   bool           // the buffer ends a step or a run: make it durable
	// mark and markQ are the lengths of buf and queue before the last
	// top-level step_started not yet written, when marked (DiscardStep).
	mark, markQ int
	marked      bool
	saveMeta    bool
	// saved is the meta last written, when stored: Close writes the
	// meta only when it changed since (a run's end wrote it already).
	saved    Meta
	stored   bool
	closed   bool
	syncs    int           // syncs done
	syncTime time.Duration // time spent in them
}

var _ engine.Releaser = (*Journal)(nil)

// Create returns the journal of a new session. Nothing is stored until its
// first event is written: a session no one used is never listed, and there
// is nothing to clean up.
func (s *Store) Create() (*Journal, error) { return s.CreateID(NewID()) }

// CreateID is Create with the new session's id chosen by the caller (a
// run submitted to a queue has its id before a worker makes it); writing
// its first event fails if the id is taken.
func (s *Store) CreateID(id string) (*Journal, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	now := time.Now()
	return &Journal{ID: id, create: s.b, meta: Meta{ID: id, Created: now, Updated: now, Format: engine.SchemaVersion}}, nil
}

// TimesFromEvents makes the session's created and updated times those of
// its events, not the time it was made: for a session made of what
// happened earlier (an imported transcript). Call it before the first
// event.
func (j *Journal) TimesFromEvents() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.meta.Created, j.meta.Updated = time.Time{}, time.Time{}
}

// Resume opens session id for appending, as OpenWriter does. When the
// session cannot be written — open in another agentty, or damaged — it
// reads what can be read instead and returns a nil journal with readOnly
// saying why, for the caller to show it read-only. err is set only when
// nothing could be read.
func (s *Store) Resume(id string) (j *Journal, l *Loaded, readOnly string, err error) {
	j, l, err = s.OpenWriter(id)
	var corrupt *CorruptError
	switch {
	case err == nil:
		return j, l, "", nil
	case errors.Is(err, ErrLocked):
		readOnly = fmt.Sprintf("session %s is open in another agentty", id)
		if msg := err.Error(); strings.Contains(msg, ErrLocked.Error()) {
			readOnly += msg[strings.Index(msg, ErrLocked.Error())+len(ErrLocked.Error()):] // who writes it, when known
		}
	case errors.As(err, &corrupt):
		readOnly = corrupt.Error()
	default:
		return nil, nil, "", err
	}
	if l == nil {
		if l, _ = s.Load(id); l == nil {
			return nil, nil, "", err
		}
	}
	return nil, l, readOnly, nil
}

// OpenWriter takes a session's lock and reads its journal, for appending.
// It returns ErrLocked when another agentty has the session open, and the
// CorruptError of a damaged journal (use Load to read it up to the damage).
// A torn last line is kept aside in events.jsonl.torn and cut off.
func (s *Store) OpenWriter(id string) (*Journal, *Loaded, error) {
	if err := checkID(id); err != nil {
		return nil, nil, err
	}
	w, l, err := s.lockAndLoad(id)
	if err != nil {
		return nil, l, err
	}
	if c, ok := w.(tailCutter); ok && len(l.torn) > 0 {
		if err := c.cutTail(l.good, l.torn); err != nil {
			w.Close()
			return nil, l, err
		}
		if err := w.WriteMeta(l.Meta); err != nil {
			w.Close()
			return nil, l, err
		}
	}
	// The meta is written with the first run's start, or at Close: one
	// synced write a run fewer on the bus, and nothing is lost if the
	// process dies before (the next open rebuilds it, as this one did).
	return &Journal{ID: id, w: w, meta: l.Meta, saved: l.Meta, stored: len(l.torn) > 0}, l, nil
}

// Emit adds ev to the journal; it is written at the next Flush.
func (j *Journal) Emit(ev engine.Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return fmt.Errorf("sessions: %s: journal is closed", j.ID)
	}
	if ev.Kind == engine.KindStepStarted && ev.ParentRun == "" {
		j.mark, j.markQ, j.marked = len(j.buf), len(j.queue), true
	}
	j.queue = append(j.queue, ev)
	if ev.Kind == engine.KindTextDelta {
		return nil
	}
	var err error
	n := len(j.buf)
	if j.buf, err = ev.AppendJSON(j.buf); err != nil {
		j.buf = j.buf[:n]
		return fmt.Errorf("sessions: %s: encode %s: %w", j.ID, ev.Kind, err)
	}
	j.buf = append(j.buf, '\n')
	j.meta.observe(ev)
	switch d := ev.Data.(type) {
	case *engine.RunFinished:
		j.sync, j.saveMeta = true, true
	case *engine.RunStarted:
		j.saveMeta = true
	case *engine.StepFinished:
		if d.ToolCalls > 0 {
			j.sync = true // a step that answered is synced with run_finished
		}
	}
	return nil
}

// Flush writes what Emit added.
func (j *Journal) Flush() error {
	_, err := j.Release()
	return err
}

// Release writes what Emit added, with one write(2) (and an fsync at a
// step's or a run's end), and hands back the events written.
func (j *Journal) Release() ([]engine.Event, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.release()
}

func (j *Journal) release() ([]engine.Event, error) {
	if len(j.buf) > 0 && j.create != nil {
		w, err := j.create.Lock(j.ID, true)
		if err != nil {
			return nil, &WriteError{j.ID, err}
		}
		j.create, j.w = nil, w
	}
	if j.w != nil && (len(j.buf) > 0 || j.sync) {
		start := time.Now()
		err := j.w.Append(j.buf, j.sync)
		if j.sync {
			j.syncs++
			j.syncTime += time.Since(start)
		}
		if errors.As(err, new(syncError)) {
			j.buf, j.marked = j.buf[:0], false // written, not durable: not to be written twice
		}
		if err != nil {
			return nil, &WriteError{j.ID, err}
		}
		j.buf = j.buf[:0]
		j.sync = false
	}
	j.marked = false
	if j.saveMeta && j.w != nil {
		j.saveMeta = false
		if err := j.w.WriteMeta(j.meta); err != nil {
			return nil, &WriteError{j.ID, err}
		}
		j.saved, j.stored = j.meta, true
	}
	out := j.queue
	j.queue = j.queue[:0]
	return out, nil
}

// DiscardStep drops the events not yet written from the start of the
// run's last step on: a run stopped before its next decision (a worker
// draining) leaves its journal as if the step before were the last it
// made (a handoff after it included).
func (j *Journal) DiscardStep() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.marked {
		j.buf, j.queue, j.marked = j.buf[:j.mark], j.queue[:j.markQ], false
	}
}

// DropUnwritten drops every event not yet written: after a write failed,
// the journal ends where the backend last took it, as if the process had
// died there, and whoever opens the session next continues from there.
func (j *Journal) DropUnwritten() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.buf, j.queue, j.marked, j.sync, j.saveMeta = j.buf[:0], j.queue[:0], false, false, false
}

// Syncs reports the fsyncs done so far and the time they took.
func (j *Journal) Syncs() (int, time.Duration) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.syncs, j.syncTime
}

// SetTitle names the session (in meta.json, written when the journal is
// next saved or closed); the title its first task would give it is not
// used then.
func (j *Journal) SetTitle(title string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.meta.Title = Title(title)
}

// Meta returns the session's meta as the journal has seen it.
func (j *Journal) Meta() Meta {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.meta
}

// Close makes the journal durable, writes the meta and releases the lock.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	_, err := j.release()
	j.closed = true
	if j.w == nil { // never written: nothing stored
		return err
	}
	if !j.stored || j.meta != j.saved {
		if merr := j.w.WriteMeta(j.meta); err == nil {
			err = merr
		}
	}
	if cerr := j.w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sessions: close %s: %w", j.ID, err)
	}
	return nil
}
