package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Backend is where a Store keeps its sessions: a folder of files (Open, the
// default) or anything else that holds, per session, an append-only journal
// of JSON lines and a meta, with one writer at a time (bus.Journals keeps
// them in NATS JetStream). The Store does the rest (ids, replay, meta
// rebuilt from the journal, forks, exports) the same for every backend.
type Backend interface {
	// Where says where the sessions are, for messages.
	Where() string
	// IDs lists the sessions, in no particular order.
	IDs() ([]string, error)
	// ReadMeta returns the meta stored for a session. ok is false when
	// none is stored or it cannot be read (the Store then rebuilds it from
	// the journal); err is ErrNotFound when there is no such session.
	ReadMeta(id string) (m Meta, ok bool, err error)
	// ReadJournal returns a session's journal, one event per line;
	// ErrNotFound when there is no such session.
	ReadJournal(id string) ([]byte, error)
	// Lock makes the caller the session's one writer until the Writer is
	// closed: ErrLocked when another writer has it. create asks for a new
	// session (an error if the id is taken); otherwise ErrNotFound when
	// there is no such session.
	Lock(id string, create bool) (Writer, error)
	// Remove deletes a session, refusing (ErrLocked) one being written.
	Remove(id string) error
}

// Writer appends to one session's journal, from Backend.Lock.
type Writer interface {
	// Append adds whole lines to the journal. With sync they are durable
	// when it returns (a step's or a run's end); without, they are at
	// least handed to the backend. ErrLocked when another writer has
	// written since the session was opened.
	Append(lines []byte, sync bool) error
	// WriteMeta replaces the session's stored meta.
	WriteMeta(m Meta) error
	// Close makes what was appended durable and gives up the lock.
	Close() error
}

// WriteError is a journal that could not be written: the backend failed
// (a disk error, a server that stayed away past the retries). What was
// written before it stands; the run must not go on past it. A worker hands
// its request back rather than acknowledge a run not journaled.
type WriteError struct {
	ID  string
	Err error
}

func (e *WriteError) Error() string { return e.Err.Error() }

// Unwrap returns the backend's error.
func (e *WriteError) Unwrap() error { return e.Err }

// syncError is an Append whose lines were written but not made durable:
// they must not be written again.
type syncError struct{ error }

func (e syncError) Unwrap() error { return e.error }

// tailCutter is a Writer whose journal can end in a torn line (a file cut
// by a crash mid-write): OpenWriter has it keep the torn bytes aside and
// cut the journal back to its last whole line.
type tailCutter interface {
	cutTail(good int64, torn []byte) error
}

// files is the default Backend: sessions/<id>/ with events.jsonl,
// meta.json and the lock file.
type files struct{ dir string }

func (b files) Where() string { return b.dir }

func (b files) path(id, file string) string { return filepath.Join(b.dir, id, file) }

func (b files) IDs() ([]string, error) {
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return nil, fmt.Errorf("sessions: list: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && checkID(e.Name()) == nil {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

func (b files) exists(id string) bool {
	_, err := os.Stat(filepath.Join(b.dir, id))
	return err == nil
}

func (b files) ReadMeta(id string) (Meta, bool, error) {
	raw, err := os.ReadFile(b.path(id, "meta.json"))
	if err != nil {
		if _, serr := os.Stat(filepath.Join(b.dir, id)); errors.Is(serr, fs.ErrNotExist) {
			return Meta{}, false, fmt.Errorf("sessions: %s: %w", id, ErrNotFound)
		}
		return Meta{}, false, nil
	}
	m, ok := decodeMeta(raw, id)
	return m, ok, nil
}

func (b files) ReadJournal(id string) ([]byte, error) {
	raw, err := os.ReadFile(b.path(id, "events.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		if !b.exists(id) {
			return nil, fmt.Errorf("sessions: %s: %w", id, ErrNotFound)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	return raw, nil
}

func (b files) Lock(id string, create bool) (Writer, error) {
	dir := filepath.Join(b.dir, id)
	flag := 0
	if create {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, fmt.Errorf("sessions: create %s: %w", id, err)
		}
		flag = os.O_EXCL
	} else if !b.exists(id) {
		return nil, fmt.Errorf("sessions: %s: %w", id, ErrNotFound)
	}
	w, err := b.open(id, flag)
	if err != nil && create {
		// The folder is this writer's alone (a new id): take it away, so
		// that the next write can try again from the start.
		os.RemoveAll(dir)
	}
	return w, err
}

func (b files) open(id string, flag int) (*fileWriter, error) {
	lf, err := lock(b.path(id, "lock"))
	if err != nil {
		return nil, fmt.Errorf("sessions: open %s: %w", id, err)
	}
	f, err := os.OpenFile(b.path(id, "events.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND|flag, 0o600)
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("sessions: open %s: %w", id, err)
	}
	return &fileWriter{id: id, f: f, lockf: lf, metaPath: b.path(id, "meta.json")}, nil
}

// LastLine returns the journal's last whole line, reading only its tail.
func (b files) LastLine(id string) ([]byte, error) {
	f, err := os.Open(b.path(id, "events.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	n := min(st.Size(), 64<<10)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, st.Size()-n); err != nil {
		return nil, err
	}
	buf = bytes.TrimRight(buf, "\n")
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:]
	}
	return buf, nil
}

// Writing reports whether an agentty holds the session's lock. It asks
// for a shared lock, for an instant, on the lock file if there is one.
func (b files) Writing(id string) bool {
	f, err := os.Open(b.path(id, "lock"))
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil
}

func (b files) Remove(id string) error {
	if !b.exists(id) {
		return fmt.Errorf("sessions: rm %s: %w", id, ErrNotFound)
	}
	l, err := lock(b.path(id, "lock"))
	if err != nil {
		return fmt.Errorf("sessions: rm %s: %w", id, err)
	}
	defer l.Close()
	if err := os.RemoveAll(filepath.Join(b.dir, id)); err != nil {
		return fmt.Errorf("sessions: rm %s: %w", id, err)
	}
	return nil
}

// fileWriter appends to events.jsonl and holds the lock file.
type fileWriter struct {
	id       string
	f        *os.File
	lockf    *os.File
	metaPath string
}

func (w *fileWriter) Append(lines []byte, sync bool) error {
	if len(lines) > 0 {
		if _, err := w.f.Write(lines); err != nil {
			return fmt.Errorf("sessions: %s: append: %w", w.id, err)
		}
	}
	if sync {
		if err := w.f.Sync(); err != nil {
			return syncError{fmt.Errorf("sessions: %s: sync: %w", w.id, err)}
		}
	}
	return nil
}

func (w *fileWriter) WriteMeta(m Meta) error { return writeMeta(w.metaPath, m) }

func (w *fileWriter) cutTail(good int64, torn []byte) error {
	if err := os.WriteFile(filepath.Join(filepath.Dir(w.metaPath), "events.jsonl.torn"), torn, 0o600); err != nil {
		return fmt.Errorf("sessions: open %s: keep torn line: %w", w.id, err)
	}
	if err := w.f.Truncate(good); err != nil {
		return fmt.Errorf("sessions: open %s: %w", w.id, err)
	}
	return nil
}

func (w *fileWriter) Close() error {
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.lockf.Close()
	return err
}
