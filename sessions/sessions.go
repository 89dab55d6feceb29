// Package sessions keeps agentty's sessions on disk: one folder per session
// holding an append-only journal of engine events (events.jsonl, the source
// of truth) and meta.json (title, model, times, last step; always rebuildable
// from the journal). A session is resumed by replaying its journal into a
// fresh engine.Session.
//
// Layout under the home folder:
//
//	sessions/<id>/events.jsonl   one engine.Event per line
//	sessions/<id>/meta.json      rewritten atomically
//	sessions/<id>/lock           held (flock) by the one writer
//
// Folders are 0700 and files 0600. Nothing here ever holds an API key: the
// journal stores engine events, which carry none.
package sessions

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// Errors returned by Store methods; test with errors.Is.
var (
	ErrNotFound = errors.New("no such session")
	ErrLocked   = errors.New("the session is open in another agentty")
)

// Home returns the agentty home folder: $AGENTTY_HOME, else
// $XDG_DATA_HOME/agentty, else ~/.local/share/agentty.
func Home(getenv func(string) string) (string, error) {
	if h := getenv("AGENTTY_HOME"); h != "" {
		return h, nil
	}
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "agentty"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("sessions: no home folder: set AGENTTY_HOME or --data-dir")
		}
	}
	return filepath.Join(home, ".local", "share", "agentty"), nil
}

// Meta describes a session. It is kept in meta.json and can always be
// rebuilt from the journal.
type Meta struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Model    string    `json:"model,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	LastStep int       `json:"last_step"`
	Runs     int       `json:"runs"`
	// Interrupted is set when the last run has no run_finished event.
	Interrupted bool `json:"interrupted,omitempty"`
	// Format is the journal format version (engine.SchemaVersion).
	Format int `json:"format"`
	// Usage sums the session's model calls: tokens and cost.
	Usage engine.Usage `json:"usage"`
	// Workspace is the folder the session was last worked on in, and
	// Origin what made it (console, run, eval, workflow, worker), from
	// its settings events ("" for sessions from before them).
	Workspace string `json:"workspace,omitempty"`
	Origin    string `json:"origin,omitempty"`
}

// Store holds sessions: a folder of files (Open) or another Backend
// (OpenWith). Its methods are safe for concurrent use; a session's journal
// has one writer at a time, enforced by the backend.
type Store struct {
	dir string // the local folder (crash files, the search index sit beside it)
	b   Backend
}

// Open returns the store under home, creating its folder if needed.
func Open(home string) (*Store, error) {
	dir := filepath.Join(home, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	return &Store{dir: dir, b: files{dir}}, nil
}

// OpenWith returns a store whose sessions are kept by b; home is still
// the local data folder, for what stays on this machine.
func OpenWith(home string, b Backend) *Store {
	return &Store{dir: filepath.Join(home, "sessions"), b: b}
}

// Close releases what the backend holds (a connection); a folder of files
// holds nothing.
func (s *Store) Close() error {
	if c, ok := s.b.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Dir returns the local folder of sessions (under the data folder), even
// when another backend holds them: Where says where they are.
func (s *Store) Dir() string { return s.dir }

// Where says where the sessions are kept, for messages.
func (s *Store) Where() string { return s.b.Where() }

// Local reports whether the sessions are the local folder's files.
func (s *Store) Local() bool {
	_, ok := s.b.(files)
	return ok
}

// JournalPath returns the path of a session's journal, for messages; ""
// when the sessions are not local files.
func (s *Store) JournalPath(id string) string {
	if !s.Local() {
		return ""
	}
	return filepath.Join(s.dir, id, "events.jsonl")
}

// CheckID says why id cannot name a session (nil when it can).
func CheckID(id string) error { return checkID(id) }

// checkID refuses ids that could name something outside the store.
func checkID(id string) error {
	if id == "" || strings.ContainsAny(id, `/\.`) || len(id) > 64 {
		return fmt.Errorf("sessions: %q is not a session id", id)
	}
	return nil
}

// NewID returns a short id that sorts by creation time: 9 base-36 digits of
// milliseconds since the epoch, then 4 random ones.
func NewID() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	ms := uint64(time.Now().UnixMilli())
	var b [13]byte
	for i := 8; i >= 0; i-- {
		b[i] = digits[ms%36]
		ms /= 36
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	for i := range r {
		b[9+i] = digits[int(r[i])%36]
	}
	return string(b[:])
}

// Listing is one row of List: the session's meta, or why it could not be
// read.
type Listing struct {
	Meta
	// Writing is set for a session whose last run has not finished and
	// that an agentty is writing now: it is running, not interrupted.
	Writing bool  `json:"writing,omitempty"`
	Err     error `json:"-"`
}

// HereFirst orders list so that the sessions last worked on in the
// folders (absolute paths, the nearest first: a folder, then those above
// it) come first, a folder's before the next one's, each part keeping its
// order.
func HereFirst(list []Listing, folders ...string) {
	rank := func(l Listing) int {
		if i := slices.Index(folders, l.Workspace); i >= 0 {
			return i
		}
		return len(folders)
	}
	slices.SortStableFunc(list, func(a, b Listing) int { return rank(a) - rank(b) })
}

// Age says how long ago t was, as lists show it: "40s ago", "12m ago",
// "5h ago", "3d ago", and the date for what is older than two weeks; "-"
// for a zero t.
func Age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := max(now.Sub(t).Round(time.Second), 0)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h ago"
	case d < 14*24*time.Hour:
		return strconv.Itoa(int(d.Hours()/24)) + "d ago"
	}
	return t.Local().Format("2006-01-02")
}

// Here splits list into what a list of workspace's sessions shows (those
// last worked on there, or in a folder not known, made by anything but an
// eval) and how many it leaves out: sessions of other folders, and those
// evals made.
func Here(list []Listing, workspace string) (here []Listing, elsewhere, evals int) {
	for _, l := range list {
		switch {
		case l.Origin == "eval":
			evals++
		case l.Workspace != "" && l.Workspace != workspace:
			elsewhere++
		default:
			here = append(here, l)
		}
	}
	return here, elsewhere, evals
}

// writingChecker is a Backend that can tell whether a session is being
// written now (its writer's lock or lease is held), and read its last
// event without reading the journal: the meta of a running session is as
// old as its run's start.
type writingChecker interface {
	Writing(id string) bool
	LastLine(id string) ([]byte, error)
}

// List returns every session, newest first. A session that cannot be read
// is listed with its error; it never stops the others.
func (s *Store) List() ([]Listing, error) {
	ids, err := s.b.IDs()
	if err != nil {
		return nil, err
	}
	var out []Listing
	for _, id := range ids {
		if checkID(id) != nil {
			continue
		}
		m, err := s.Meta(id)
		l := Listing{Meta: m, Err: err}
		if w, ok := s.b.(writingChecker); ok && m.Interrupted {
			if l.Writing = w.Writing(id); l.Writing {
				l.Meta = freshen(l.Meta, w, id)
			}
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b Listing) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out, nil
}

// Meta returns a session's stored meta, rebuilding it from the journal when
// it is missing or unreadable.
func (s *Store) Meta(id string) (Meta, error) {
	if err := checkID(id); err != nil {
		return Meta{}, err
	}
	m, ok, err := s.b.ReadMeta(id)
	if ok {
		return m, nil
	}
	if errors.Is(err, ErrNotFound) {
		return Meta{ID: id}, err
	}
	r, err := s.Load(id)
	if r == nil {
		return Meta{ID: id}, err
	}
	return r.Meta, err
}

// freshen takes a running session's last step and time from its last
// event.
func freshen(m Meta, w writingChecker, id string) Meta {
	line, err := w.LastLine(id)
	if err != nil || len(line) == 0 {
		return m
	}
	ev, err := engine.DecodeEvent(line)
	if err != nil {
		return m
	}
	m.LastStep = max(m.LastStep, ev.Step)
	if ev.Time.After(m.Updated) {
		m.Updated = ev.Time
	}
	return m
}

// decodeMeta reads a stored meta; ok is false when it is not id's.
func decodeMeta(raw []byte, id string) (Meta, bool) {
	var m Meta
	if json.Unmarshal(raw, &m) != nil || m.ID != id {
		return Meta{}, false
	}
	return m, true
}

// Remove deletes a session. It refuses one that is open in another agentty.
func (s *Store) Remove(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	return s.b.Remove(id)
}

// Rename sets a session's title. It takes the session's lock, as a writer
// does, and so refuses (ErrLocked) a session open in another agentty: that
// agentty's journal rewrites the meta from what it holds, and would put
// the old title back.
func (s *Store) Rename(id, title string) error {
	title = strings.TrimSpace(title)
	if title == "" {
		return fmt.Errorf("sessions: rename %s: the title is empty", id)
	}
	if err := checkID(id); err != nil {
		return err
	}
	w, err := s.b.Lock(id, false)
	switch {
	case errors.Is(err, ErrNotFound):
		return fmt.Errorf("sessions: rename %s: %w", id, ErrNotFound)
	case errors.Is(err, ErrLocked):
		return fmt.Errorf("sessions: rename %s: %w", id, err) // saying who writes it
	}
	if err != nil {
		return err
	}
	defer w.Close()
	m, err := s.Meta(id)
	if err != nil {
		return err
	}
	m.Title = title
	return w.WriteMeta(m)
}

// writeMeta replaces meta.json atomically: a temporary file, synced, then
// renamed over the old one.
func writeMeta(path string, m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".meta-*.tmp")
	if err != nil {
		return fmt.Errorf("sessions: write meta: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("sessions: write meta: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sessions: write meta: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("sessions: write meta: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("sessions: write meta: %w", err)
	}
	return nil
}

// Title makes a session title from its first task: one line of at most 60
// characters.
func Title(task string) string {
	task, _, _ = strings.Cut(task, engine.AttachedMarker) // the message, not the files it attached
	return engine.OneLine(task, 60)
}
