package search_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/search"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/tools"
)

// env is a workspace, a session store and an index over both.
type env struct {
	ws    string
	store *sessions.Store
	dir   string
	ix    *search.Index
}

func newEnv(t *testing.T) *env {
	t.Helper()
	home := t.TempDir()
	store, err := sessions.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{ws: t.TempDir(), store: store, dir: filepath.Join(home, "index")}
	e.open(t)
	return e
}

func (e *env) open(t *testing.T) []string {
	t.Helper()
	ix, notices, err := search.Open(search.Config{Dir: e.dir, Workspace: e.ws, Sessions: e.store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	e.ix = ix
	return notices
}

// write writes a workspace file with a modification time of its own, so
// that a change is seen even within the file system's clock resolution.
var clock = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (e *env) write(t *testing.T, name, text string) {
	t.Helper()
	p := filepath.Join(e.ws, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Minute)
	if err := os.Chtimes(p, clock, clock); err != nil {
		t.Fatal(err)
	}
}

func (e *env) update(t *testing.T) search.Stats {
	t.Helper()
	st, err := e.ix.Update(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (e *env) search(t *testing.T, q, scope string, k int) []search.Hit {
	t.Helper()
	hits, err := e.ix.Search(context.Background(), q, scope, k)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

func wheres(hits []search.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Where())
	}
	return out
}

func TestFilesIncremental(t *testing.T) {
	e := newEnv(t)
	e.write(t, "notes.md", "# Notes\nThe retry policy uses exponential backoff with full jitter.\n")
	e.write(t, "src/main.go", "package main\n\nfunc main() { println(\"hello lighthouse\") }\n")
	e.write(t, ".gitignore", "ignored.txt\nbuild/\n")
	e.write(t, "ignored.txt", "lighthouse keeper\n")
	e.write(t, "build/out.txt", "lighthouse beacon\n")
	if err := os.WriteFile(filepath.Join(e.ws, "blob.bin"), []byte("lighthouse\x00\x01\x02"), 0o644); err != nil {
		t.Fatal(err)
	}

	st := e.update(t)
	if st.Added != 3 || st.Removed != 0 || st.Files != 3 {
		t.Fatalf("first update: added %d removed %d files %d, want 3, 0, 3 (notes.md, src/main.go, .gitignore)", st.Added, st.Removed, st.Files)
	}
	if got := wheres(e.search(t, "lighthouse", search.ScopeWorkspace, 10)); len(got) != 1 || got[0] != "src/main.go:1-3" {
		t.Fatalf("lighthouse: got %v, want only src/main.go:1-3 (ignored and binary files left out)", got)
	}

	// Nothing changed: nothing read.
	if st := e.update(t); st.Added != 0 || st.Removed != 0 {
		t.Fatalf("unchanged update: added %d removed %d, want 0, 0", st.Added, st.Removed)
	}
	// Touched but the same bytes: the hash says unchanged.
	clock = clock.Add(time.Hour)
	os.Chtimes(filepath.Join(e.ws, "notes.md"), clock, clock)
	if st := e.update(t); st.Added != 0 {
		t.Fatalf("touched file: added %d, want 0 (same content hash)", st.Added)
	}

	// Changed: the old text is gone, the new one found.
	e.write(t, "notes.md", "# Notes\nThe retry policy was replaced by a circuit breaker.\n")
	if st := e.update(t); st.Added != 1 || st.Removed != 0 {
		t.Fatalf("changed file: added %d removed %d, want 1, 0", st.Added, st.Removed)
	}
	if got := e.search(t, "jitter", search.ScopeWorkspace, 10); len(got) != 0 {
		t.Fatalf("jitter after the change: got %v, want nothing", wheres(got))
	}
	if got := e.search(t, "circuit breaker", search.ScopeWorkspace, 10); len(got) != 1 || got[0].Path != "notes.md" {
		t.Fatalf("circuit breaker: got %v, want notes.md", wheres(got))
	}

	// Added and deleted.
	e.write(t, "docs/breaker.md", "The circuit breaker opens after five failures.\n")
	if err := os.Remove(filepath.Join(e.ws, "src/main.go")); err != nil {
		t.Fatal(err)
	}
	if st := e.update(t); st.Added != 1 || st.Removed != 1 || st.Files != 3 {
		t.Fatalf("add and delete: added %d removed %d files %d, want 1, 1, 3", st.Added, st.Removed, st.Files)
	}
	if got := e.search(t, "lighthouse", search.ScopeAll, 10); len(got) != 0 {
		t.Fatalf("lighthouse after deleting main.go: got %v", wheres(got))
	}
	if got := wheres(e.search(t, "circuit breaker", search.ScopeWorkspace, 10)); len(got) != 2 {
		t.Fatalf("circuit breaker: got %v, want notes.md and docs/breaker.md", got)
	}

	// The index survives a reopen with the manifest: nothing read again.
	e.ix.Close()
	e.open(t)
	if st := e.update(t); st.Added != 0 || st.Removed != 0 || st.Files != 3 {
		t.Fatalf("after reopening: added %d removed %d files %d, want 0, 0, 3", st.Added, st.Removed, st.Files)
	}
}

// run is one run of a session: the task, what the lookup tool returns, a
// fact remembered ("key=value", or none) and the answer.
type run struct{ task, result, fact, answer string }

// sessionEngine answers each task with a lookup (and remember, for a
// fact) and then the answer: real runs, journaled as agentty journals them.
func sessionEngine(t *testing.T, r *run) *engine.Engine {
	t.Helper()
	lookup := engine.Tool{Name: "lookup", Schema: []byte(`{"type":"object"}`),
		Func: func(context.Context, *engine.Call) (string, error) { return r.result, nil }}
	model := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		if m := req.Messages[len(req.Messages)-1]; m.Role == engine.RoleTool {
			return engine.Decision{Text: r.answer}, nil
		}
		calls := []engine.ToolCall{{ID: "c1", Name: "lookup", Args: []byte(`{}`)}}
		if k, v, ok := strings.Cut(r.fact, "="); ok {
			args, _ := json.Marshal(map[string]string{"key": k, "value": v})
			calls = append(calls, engine.ToolCall{ID: "c2", Name: "remember", Args: args})
		}
		return engine.Decision{ToolCalls: calls}, nil
	})
	return engine.New(engine.Config{Model: model, Tools: enginetest.Registry(t, lookup, tools.Remember())})
}

func runIn(t *testing.T, j *sessions.Journal, s *engine.Session, r run) {
	t.Helper()
	res := sessionEngine(t, &r).Run(context.Background(), s, r.task, j)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
}

func newSession(t *testing.T, store *sessions.Store, runs ...run) string {
	t.Helper()
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewSession(j.ID)
	for _, r := range runs {
		runIn(t, j, s, r)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return j.ID
}

func TestSessionsIncremental(t *testing.T) {
	e := newEnv(t)
	first := newSession(t, e.store, run{task: "what should the retry policy be?", result: "retries: 5 attempts",
		fact: "retry policy=five attempts, full jitter", answer: "We decided on five attempts with full jitter."})
	st := e.update(t)
	if st.SessionsUpdated != 1 || st.Sessions != 1 {
		t.Fatalf("first update: sessions updated %d, indexed %d; want 1, 1", st.SessionsUpdated, st.Sessions)
	}
	chunks := st.Chunks
	if chunks != 4 {
		t.Fatalf("chunks: %d, want 4 (task, tool result, fact, answer)", chunks)
	}
	hits := e.search(t, "what did we decide about the retry policy", search.ScopeSessions, 5)
	if len(hits) == 0 || hits[0].Session != first || hits[0].Run != "run-1" {
		t.Fatalf("retry policy: got %v", wheres(hits))
	}
	kinds := map[string]bool{}
	for _, h := range hits {
		kinds[h.Kind] = true
	}
	for _, k := range []string{search.KindUser, search.KindAnswer, search.KindMemory} {
		if !kinds[k] {
			t.Errorf("retry policy: no %s chunk among %v", k, wheres(hits))
		}
	}

	// Unchanged: nothing read.
	if st := e.update(t); st.SessionsUpdated != 0 {
		t.Fatalf("unchanged: %d sessions updated", st.SessionsUpdated)
	}

	// New events in the session: only they are added.
	j, l, err := e.store.OpenWriter(first)
	if err != nil {
		t.Fatal(err)
	}
	runIn(t, j, l.Session, run{task: "and the timeout?", result: "12:00", answer: "Thirty seconds per request."})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	st = e.update(t)
	if st.SessionsUpdated != 1 || st.Chunks != chunks+3 {
		t.Fatalf("appended run: updated %d, chunks %d; want 1, %d (no chunk indexed twice)", st.SessionsUpdated, st.Chunks, chunks+3)
	}
	hits = e.search(t, "thirty seconds", search.ScopeSessions, 5)
	if len(hits) != 1 || hits[0].Run != "run-2" || hits[0].Step == 0 || hits[0].Kind != search.KindAnswer {
		t.Fatalf("thirty seconds: got %+v", hits)
	}

	// A new session: only it is read.
	second := newSession(t, e.store, run{task: "pick a database", result: "sqlite.go", answer: "SQLite with FTS5."})
	if st := e.update(t); st.SessionsUpdated != 1 || st.Sessions != 2 {
		t.Fatalf("new session: updated %d, sessions %d; want 1, 2", st.SessionsUpdated, st.Sessions)
	}
	if hits := e.search(t, "database", search.ScopeSessions, 5); len(hits) != 1 || hits[0].Session != second {
		t.Fatalf("database: got %v", wheres(hits))
	}

	// A removed session's chunks go.
	if err := e.store.Remove(second); err != nil {
		t.Fatal(err)
	}
	if st := e.update(t); st.SessionsRemoved != 1 || st.Sessions != 1 {
		t.Fatalf("removed session: removed %d, sessions %d; want 1, 1", st.SessionsRemoved, st.Sessions)
	}
	if hits := e.search(t, "database", search.ScopeSessions, 5); len(hits) != 0 {
		t.Fatalf("database after removal: got %v", wheres(hits))
	}
}

func TestScopes(t *testing.T) {
	e := newEnv(t)
	e.write(t, "design.md", "The zeppelin design keeps state in one place.\n")
	newSession(t, e.store, run{task: "tell me about the zeppelin", result: "nothing", answer: "The zeppelin floats."})
	e.update(t)
	for _, c := range []struct {
		scope   string
		sources []string
	}{
		{search.ScopeWorkspace, []string{"workspace"}},
		{search.ScopeSessions, []string{"sessions"}},
		{search.ScopeAll, []string{"sessions", "workspace"}},
	} {
		t.Run(c.scope, func(t *testing.T) {
			got := map[string]bool{}
			for _, h := range e.search(t, "zeppelin", c.scope, 10) {
				got[h.Source] = true
			}
			if len(got) != len(c.sources) {
				t.Fatalf("scope %s: sources %v, want %v", c.scope, got, c.sources)
			}
			for _, s := range c.sources {
				if !got[s] {
					t.Fatalf("scope %s: sources %v, want %v", c.scope, got, c.sources)
				}
			}
		})
	}
	if _, err := e.ix.Search(context.Background(), "zeppelin", "elsewhere", 5); err == nil || !strings.Contains(err.Error(), `scope "elsewhere"`) {
		t.Fatalf("bad scope: err %v", err)
	}

	// Another workspace sharing the index sees its own files only, and
	// the same sessions.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "x.md"), []byte("no airships here\n"), 0o644)
	ix2, _, err := search.Open(search.Config{Dir: e.dir, Workspace: other, Sessions: e.store})
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	if _, err := ix2.Update(context.Background()); err != nil {
		t.Fatal(err)
	}
	hits, _ := ix2.Search(context.Background(), "zeppelin", search.ScopeAll, 10)
	if len(hits) == 0 {
		t.Fatal("other workspace: the shared sessions not found")
	}
	for _, h := range hits {
		if h.Source == "workspace" {
			t.Fatalf("other workspace: found the first workspace's %s", h.Where())
		}
	}
}

func TestQuerySyntaxIsText(t *testing.T) {
	e := newEnv(t)
	e.write(t, "a.md", "NEAR the AND gate, OR not\n")
	e.update(t)
	for _, q := range []string{`"unbalanced`, `a AND`, `NEAR(`, `*`, `col:umn`, `^start`, `-minus`, `???`} {
		if _, err := e.ix.Search(context.Background(), q, search.ScopeAll, 5); err != nil {
			t.Errorf("query %q: %v", q, err)
		}
	}
	if hits := e.search(t, "gate?", search.ScopeAll, 5); len(hits) != 1 {
		t.Fatalf("gate?: got %v", wheres(hits))
	}
}

func TestCorruptIndexRebuilt(t *testing.T) {
	e := newEnv(t)
	e.write(t, "a.md", "the phoenix rises\n")
	e.update(t)
	e.ix.Close()

	for name, damage := range map[string][]byte{
		"garbage":   []byte("this is not a database at all, not even close, just words and more words\n"),
		"truncated": nil,
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(e.dir, "index.db")
			os.Remove(p + "-wal")
			os.Remove(p + "-shm")
			if damage == nil {
				b, _ := os.ReadFile(p)
				damage = b[:len(b)/3]
				if len(damage) < 100 {
					damage = append([]byte("SQLite format 3\x00"), make([]byte, 200)...)
				}
			}
			if err := os.WriteFile(p, damage, 0o600); err != nil {
				t.Fatal(err)
			}
			notices := e.open(t)
			if len(notices) != 1 || !strings.Contains(notices[0], "rebuilt") {
				t.Fatalf("notices %q, want one saying the index is rebuilt", notices)
			}
			e.update(t)
			if hits := e.search(t, "phoenix", search.ScopeAll, 5); len(hits) != 1 {
				t.Fatalf("after the rebuild: got %v", wheres(hits))
			}
			e.ix.Close()
		})
	}
}

func TestRebuild(t *testing.T) {
	e := newEnv(t)
	e.write(t, "a.md", "the griffin\n")
	e.update(t)
	st, err := e.ix.Rebuild(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 1 || st.Files != 1 {
		t.Fatalf("rebuild: added %d files %d, want 1, 1", st.Added, st.Files)
	}
	if hits := e.search(t, "griffin", search.ScopeAll, 5); len(hits) != 1 {
		t.Fatalf("griffin: %v", wheres(hits))
	}
}

// TestRemovedGivesSpaceBack: what is removed from the workspace (or the
// sessions) leaves the index's file, not only its tables: the file shrinks
// to a fraction of its size, and the next update and search still work.
func TestRemovedGivesSpaceBack(t *testing.T) {
	e := newEnv(t)
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango")
	for i := range 60 {
		var b strings.Builder
		for j := range 1500 {
			fmt.Fprintf(&b, "%s%d ", words[(i*7+j)%len(words)], (i*131+j*17)%9973)
			if j%12 == 11 {
				b.WriteString("\n")
			}
		}
		e.write(t, fmt.Sprintf("doc%03d.txt", i), b.String())
	}
	e.update(t)
	db := filepath.Join(e.dir, "index.db")
	full := fileSize(t, db)
	for i := range 60 {
		os.Remove(filepath.Join(e.ws, fmt.Sprintf("doc%03d.txt", i)))
	}
	e.write(t, "kept.txt", "the zebra stays")
	if st := e.update(t); st.Removed != 60 {
		t.Fatalf("removed %d, want 60", st.Removed)
	}
	if after := fileSize(t, db); after*4 > full {
		t.Errorf("the index is %d bytes after removing all but one file, was %d: the space was not given back", after, full)
	}
	if hits := e.search(t, "zebra", "", 5); len(hits) != 1 {
		t.Errorf("the next search: %v", wheres(hits))
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
