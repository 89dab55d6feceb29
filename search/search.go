// Package search is agentty's one search over the user's own material: the
// workspace's text files and every journaled session. Chunks (files cut on
// line boundaries with overlap; the sessions' user messages, answers, tool
// results and memory facts) are kept in an SQLite database in the data
// folder (<data>/index/index.db) with a full-text index scored by BM25
// (SQLite FTS5 through the pure-Go modernc driver; no cgo).
//
// The index is brought up to date incrementally: a manifest keeps each
// file's size, modification time and content hash and each session's
// journal size and last event indexed, so that only changed and deleted
// files and new session events are read again. An index that cannot be
// read is rebuilt with a notice, never a crash.
//
// An Index is safe for concurrent use, and several agentty processes may
// share one database (SQLite's locking; writers wait for each other).
package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentty/agentty/sessions"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// Scopes of a search.
const (
	ScopeWorkspace = "workspace"
	ScopeSessions  = "sessions"
	ScopeAll       = "all"
)

// Kinds of session chunks.
const (
	KindFile   = "file"
	KindUser   = "user"
	KindAnswer = "answer"
	KindTool   = "tool"
	KindMemory = "memory"
)

// schemaVersion changes when the tables do; an index of another version
// is rebuilt.
//
// fts.scope is "sessions" for a session's chunk and the workspace's
// absolute path for a file's, so that a search is filtered and ranked in
// the full-text table alone, and only the k best are joined with chunks.
const schemaVersion = "3"

// Config says what to index. Its zero value indexes nothing.
type Config struct {
	// Dir is the index folder (<data>/index).
	Dir string
	// Workspace is the folder whose text files are indexed ("" for none).
	Workspace string
	// Sessions is the store whose sessions are indexed (nil for none).
	Sessions *sessions.Store
	// ChunkLines, ChunkBytes and Overlap shape the chunks (defaults
	// DefaultChunkLines, DefaultChunkBytes, DefaultOverlap; a negative
	// Overlap is none).
	ChunkLines, ChunkBytes, Overlap int
	// MaxFileBytes: larger files are not indexed (default 1 MiB).
	MaxFileBytes int64
	// Embedder, when set, gives every chunk a vector (EmbeddingModel
	// names it: vectors of another model are thrown away), and searches
	// fuse the BM25 ranking with the nearest vectors by reciprocal rank
	// fusion.
	Embedder       Embedder
	EmbeddingModel string
	// Progress, if set, is told how an update goes: after every batch of
	// files and once at the end. It is called on the updating goroutine.
	Progress func(Progress)
}

// Progress is what an update has done so far.
type Progress struct {
	FilesSeen, FilesIndexed int
	SessionsSeen            int
	Done                    bool
}

// Hit is one chunk found.
type Hit struct {
	Source    string  `json:"source"` // "workspace" or "sessions"
	Kind      string  `json:"kind"`   // file, user, answer, tool or memory
	Path      string  `json:"path,omitempty"`
	StartLine int     `json:"start_line,omitempty"`
	EndLine   int     `json:"end_line,omitempty"`
	Session   string  `json:"session,omitempty"`
	Title     string  `json:"title,omitempty"`
	Run       string  `json:"run,omitempty"`
	Step      int     `json:"step,omitempty"`
	Tool      string  `json:"tool,omitempty"`
	Score     float64 `json:"score"`
	Text      string  `json:"text"`
}

// Where says where a hit came from: "path:12-40" for a file,
// "session ID (title), run R, step N" for a session's chunk.
func (h Hit) Where() string {
	if h.Source == ScopeWorkspace {
		return fmt.Sprintf("%s:%d-%d", h.Path, h.StartLine, h.EndLine)
	}
	s := "session " + h.Session
	if h.Title != "" {
		s += fmt.Sprintf(" (%s)", h.Title)
	}
	s += fmt.Sprintf(", %s, step %d, %s", h.Run, h.Step, h.Kind)
	if h.Tool != "" {
		s += " " + h.Tool
	}
	return s
}

// Stats says what is indexed and how fresh it is.
type Stats struct {
	Path      string    `json:"path"`
	Workspace string    `json:"workspace,omitempty"`
	Files     int       `json:"files"`
	Sessions  int       `json:"sessions"`
	Chunks    int       `json:"chunks"`
	FileChunk int       `json:"file_chunks"`
	Updated   time.Time `json:"updated,omitzero"`
	Bytes     int64     `json:"bytes"`
	// Vectors counts the chunks with a vector; EmbedError says why the
	// last update could not embed them all (the search is then lexical
	// for the rest).
	Vectors    int    `json:"vectors"`
	EmbedError string `json:"embed_error,omitempty"`
	// Changed counts what the last update read again: files added or
	// changed, files removed, sessions with new events, sessions removed.
	Added, Removed, SessionsUpdated, SessionsRemoved int `json:"-"`
}

// Index is the search index. Its methods are safe for concurrent use.
type Index struct {
	cfg  Config
	path string
	root string // the workspace's absolute path, the key of its files

	mu sync.Mutex // serialises updates within this process
	db *sql.DB
	// hook, when set (by tests, before any use), is told of the points
	// where an update can wait on another: "lock wait" (the index
	// folder's lock is held elsewhere) and "sessions read".
	hook func(string)

	// embedDown is set when the embedding server failed: until then
	// (UnixNano), search and update go on with BM25 alone instead of
	// waiting through the server's retries again; embedWhy says why.
	embedDown atomic.Int64
	embedWhy  atomic.Pointer[string]
}

// embedPause is how long a failed embedding server is left alone.
const embedPause = time.Minute

// queryEmbedTimeout bounds embedding a query: a search waits no longer
// for the server, and goes on with BM25.
const queryEmbedTimeout = 10 * time.Second

func (ix *Index) embedAvailable() bool { return time.Now().UnixNano() >= ix.embedDown.Load() }

// embedFailed notes that the embedding server failed with err.
func (ix *Index) embedFailed(err error) {
	why := err.Error()
	ix.embedWhy.Store(&why)
	ix.embedDown.Store(time.Now().Add(embedPause).UnixNano())
}

// Open opens (or creates) the index in cfg.Dir. An index that cannot be
// read, or of another schema version, is removed and made anew; notices
// then says so.
func Open(cfg Config) (ix *Index, notices []string, err error) {
	if cfg.Dir == "" {
		return nil, nil, errors.New("search: no index folder")
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	switch {
	case cfg.Overlap == 0:
		cfg.Overlap = DefaultOverlap
	case cfg.Overlap < 0:
		cfg.Overlap = 0
	}
	ix = &Index{cfg: cfg, path: filepath.Join(cfg.Dir, "index.db")}
	if cfg.Workspace != "" {
		if ix.root, err = filepath.Abs(cfg.Workspace); err != nil {
			return nil, nil, fmt.Errorf("search: workspace: %w", err)
		}
	}
	unlock, err := lockDir(cfg.Dir, nil)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	db, err := ix.open()
	if err != nil {
		notices = append(notices, fmt.Sprintf("search: the index %s could not be read (%v); it is rebuilt", ix.path, err))
		if err := removeDB(ix.path); err != nil {
			return nil, notices, fmt.Errorf("search: remove %s: %w", ix.path, err)
		}
		if db, err = ix.open(); err != nil {
			return nil, notices, fmt.Errorf("search: %s: %w", ix.path, err)
		}
	}
	ix.db = db
	if cfg.Embedder != nil {
		if err := ix.checkModel(); err != nil {
			db.Close()
			return nil, notices, fmt.Errorf("search: %s: %w", ix.path, err)
		}
	}
	return ix, notices, nil
}

func removeDB(path string) error {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// open opens the database, checks it and makes its tables.
func (ix *Index) open() (*sql.DB, error) {
	// The index holds past sessions: the owner's alone. SQLite creates
	// its file with the umask's mode (0644), and its -wal and -shm files
	// with the database's, so the database is made (or made) 0600 first.
	f, err := os.OpenFile(ix.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	err = f.Chmod(0o600)
	f.Close()
	if err != nil {
		return nil, err
	}
	for _, side := range []string{"-wal", "-shm"} {
		os.Chmod(ix.path+side, 0o600) // absent is fine
	}
	dsn := "file:" + ix.path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	if err := check(db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func check(db *sql.DB) error {
	var res string
	if err := db.QueryRow(`PRAGMA quick_check`).Scan(&res); err != nil {
		return err
	}
	if res != "ok" {
		return fmt.Errorf("quick_check: %s", res)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'meta'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return create(db)
	}
	var v string
	if err := db.QueryRow(`SELECT value FROM meta WHERE key = 'version'`).Scan(&v); err != nil {
		return fmt.Errorf("version: %w", err)
	}
	if v != schemaVersion {
		return fmt.Errorf("schema version %s, want %s", v, schemaVersion)
	}
	// Touch every table, so that a damaged one shows now.
	for _, t := range []string{"files", "sessions", "chunks", "fts", "vectors"} {
		if err := db.QueryRow(`SELECT count(*) FROM ` + t).Scan(&n); err != nil {
			return fmt.Errorf("table %s: %w", t, err)
		}
	}
	return nil
}

const schema = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(root TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL,
	hash TEXT NOT NULL, PRIMARY KEY(root, path));
CREATE TABLE sessions(id TEXT PRIMARY KEY, size INTEGER NOT NULL, events INTEGER NOT NULL, title TEXT NOT NULL);
CREATE TABLE chunks(id INTEGER PRIMARY KEY, source TEXT NOT NULL, kind TEXT NOT NULL, root TEXT NOT NULL DEFAULT '',
	path TEXT NOT NULL DEFAULT '', start_line INTEGER NOT NULL DEFAULT 0, end_line INTEGER NOT NULL DEFAULT 0,
	session TEXT NOT NULL DEFAULT '', run TEXT NOT NULL DEFAULT '', step INTEGER NOT NULL DEFAULT 0, tool TEXT NOT NULL DEFAULT '');
CREATE INDEX chunks_file ON chunks(root, path);
CREATE INDEX chunks_session ON chunks(session);
CREATE VIRTUAL TABLE fts USING fts5(text, scope UNINDEXED, tokenize = 'porter unicode61');
CREATE TABLE vectors(id INTEGER PRIMARY KEY, scope TEXT NOT NULL, v BLOB NOT NULL);
CREATE INDEX vectors_scope ON vectors(scope);
INSERT INTO meta(key, value) VALUES ('version', '` + schemaVersion + `');
`

// autoVacuumIncremental is PRAGMA auto_vacuum's INCREMENTAL: the pages a
// removal frees are kept on a list until reclaim cuts them off the file.
const autoVacuumIncremental = 2

func create(db *sql.DB) error {
	// Before the first table, or it takes a VACUUM to change.
	if _, err := db.Exec(`PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, stmt := range strings.Split(schema, ";\n") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := tx.Exec(stmt); err != nil {
			return fmt.Errorf("create: %w", err)
		}
	}
	return tx.Commit()
}

// Path returns the database file.
func (ix *Index) Path() string { return ix.path }

// Close closes the database.
func (ix *Index) Close() error { return ix.db.Close() }

// Rebuild empties the index and indexes everything again.
func (ix *Index) Rebuild(ctx context.Context) (Stats, error) {
	unlock, err := lockDir(ix.cfg.Dir, nil)
	if err != nil {
		return Stats{}, err
	}
	ix.mu.Lock()
	if err := ix.db.Close(); err != nil {
		unlock()
		ix.mu.Unlock()
		return Stats{}, fmt.Errorf("search: rebuild: %w", err)
	}
	err = removeDB(ix.path)
	if err == nil {
		ix.db, err = ix.open()
	}
	ix.mu.Unlock()
	unlock()
	if err != nil {
		return Stats{}, fmt.Errorf("search: rebuild %s: %w", ix.path, err)
	}
	return ix.Update(ctx)
}

// Stats says what the index holds.
func (ix *Index) Stats() (Stats, error) {
	st := Stats{Path: ix.path, Workspace: ix.root}
	q := func(dst *int, query string, args ...any) error {
		return ix.db.QueryRow(query, args...).Scan(dst)
	}
	for _, e := range []error{
		q(&st.Files, `SELECT count(*) FROM files WHERE root = ?`, ix.root),
		q(&st.FileChunk, `SELECT count(*) FROM chunks WHERE source = 'workspace' AND root = ?`, ix.root),
		q(&st.Sessions, `SELECT count(*) FROM sessions`),
		q(&st.Chunks, `SELECT count(*) FROM chunks WHERE source = 'sessions' OR root = ?`, ix.root),
		q(&st.Vectors, `SELECT count(*) FROM vectors WHERE scope IN (?, ?)`, ScopeSessions, ix.root),
	} {
		if e != nil {
			return st, fmt.Errorf("search: stats: %w", e)
		}
	}
	var updated string
	if err := ix.db.QueryRow(`SELECT value FROM meta WHERE key = ?`, "updated:"+ix.root).Scan(&updated); err == nil {
		st.Updated, _ = time.Parse(time.RFC3339Nano, updated)
	}
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(ix.path + suffix); err == nil {
			st.Bytes += fi.Size()
		}
	}
	return st, nil
}
