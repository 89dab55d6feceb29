package search_test

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
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/search"
	"github.com/agentty/agentty/sessions"
)

// Several processes opening a fresh index at once: one must not
// take the other's half-made database for a corrupt one and delete it.
func TestConcurrentFirstOpen(t *testing.T) {
	for round := 0; round < 20; round++ {
		home := t.TempDir()
		store, _ := sessions.Open(home)
		dir := filepath.Join(home, "index")
		var wg sync.WaitGroup
		var mu sync.Mutex
		var all []string
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ix, notices, err := search.Open(search.Config{Dir: dir, Workspace: t.TempDir(), Sessions: store})
				mu.Lock()
				all = append(all, notices...)
				if err != nil {
					all = append(all, "ERR "+err.Error())
				}
				mu.Unlock()
				if ix != nil {
					ix.Close()
				}
			}()
		}
		wg.Wait()
		if len(all) > 0 {
			t.Fatalf("round %d: concurrent first opens: %q", round, all)
		}
	}
}

// Two processes updating the same index while a session grows:
// no chunk is indexed twice.
func TestConcurrentUpdates(t *testing.T) {
	home := t.TempDir()
	store, _ := sessions.Open(home)
	dir := filepath.Join(home, "index")
	id := newSession(t, store, run{task: "alpha task", result: "alpha result", answer: "alpha answer"})
	a, _, err := search.Open(search.Config{Dir: dir, Sessions: store})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, _, err := search.Open(search.Config{Dir: dir, Sessions: store})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := a.Update(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The session grows.
	j, l, err := store.OpenWriter(id)
	if err != nil {
		t.Fatal(err)
	}
	runIn(t, j, l.Session, run{task: "zeppelin task", result: "zeppelin result", answer: "zeppelin answer"})
	j.Close()
	// A third connection holds the write lock, so that both updaters read
	// what is indexed before either writes (as two processes may).
	lock, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "index.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	conn, err := lock.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	// Both updaters are made to wait at the point of the race: each has
	// read what is indexed (or, with the folder's lock, the second waits
	// for the first) before the write lock is let go.
	points := make(chan string, 8)
	for _, ix := range []*search.Index{a, b} {
		search.SetHook(ix, func(what string) { points <- what })
	}
	var wg sync.WaitGroup
	for _, ix := range []*search.Index{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ix.Update(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	for waits := 0; waits < 2; waits++ {
		select {
		case <-points:
		case <-time.After(time.Minute):
			t.Fatal("the updaters never reached the point of the race")
		}
	}
	conn.ExecContext(context.Background(), "COMMIT")
	conn.Close()
	wg.Wait()
	hits, err := a.Search(context.Background(), "zeppelin", search.ScopeSessions, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 {
		var ws []string
		for _, h := range hits {
			ws = append(ws, h.Where())
		}
		t.Fatalf("zeppelin: %d hits, want 3 (task, result, answer):\n%s", len(hits), strings.Join(ws, "\n"))
	}
}

// Lines of ~400 bytes make chunks of 5 lines; the overlap is at most half
// of one, so a line is in at most two chunks (it was in five).
func TestOverlapIsAtMostHalfAChunk(t *testing.T) {
	e := newEnv(t)
	var b strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "line%03d %s\n", i, strings.Repeat("x", 390))
	}
	e.write(t, "wide.txt", b.String())
	st := e.update(t)
	t.Logf("100 lines of 400 bytes (40 KB): %d chunks", st.FileChunk)
	if st.FileChunk > 40 {
		t.Errorf("%d chunks for 100 lines of ~400 bytes: the overlap (5 lines) is as big as a chunk, each advancing one line", st.FileChunk)
	}
	hits := e.search(t, "line050", search.ScopeWorkspace, 20)
	if len(hits) > 2 {
		t.Errorf("one line found in %d chunks", len(hits))
	}
}

// A long line is indexed whole, in pieces (it was cut at 2,000 bytes).
func TestLongLinesAreIndexedWhole(t *testing.T) {
	e := newEnv(t)
	e.write(t, "data.json", `{"items":[`+strings.Repeat(`"filler",`, 500)+`"needleword"]}`+"\n")
	e.update(t)
	if hits := e.search(t, "needleword", search.ScopeWorkspace, 5); len(hits) == 0 {
		t.Errorf("a word after the first 2000 bytes of a line is never found")
	}
}

// Nothing outside the workspace is read, even through a symlink, and a
// FIFO in it is passed over, never waited on.
func TestOnlyTheWorkspacesRegularFiles(t *testing.T) {
	e := newEnv(t)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("outsideword\n"), 0o600)
	os.Symlink(outside, filepath.Join(e.ws, "link.txt"))
	os.Symlink(filepath.Dir(outside), filepath.Join(e.ws, "linkdir"))
	if err := syscall.Mkfifo(filepath.Join(e.ws, "pipe.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.write(t, "inside.txt", "insideword\n")
	e.update(t)
	if hits := e.search(t, "outsideword", search.ScopeWorkspace, 5); len(hits) != 0 {
		t.Errorf("a file outside the workspace was indexed: %+v", hits)
	}
	if hits := e.search(t, "insideword", search.ScopeWorkspace, 5); len(hits) != 1 {
		t.Errorf("the workspace's own file: %d hits", len(hits))
	}
}

// downEmbedder fails every call, counting them.
type downEmbedder struct{ calls atomic.Int32 }

func (d *downEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	d.calls.Add(1)
	return nil, errors.New("connection refused")
}

// An embedding server that is down is left alone for a while: the next
// update and searches go on with BM25 alone, without calling it again, and
// say why.
func TestAnEmbeddingServerDownIsLeftAlone(t *testing.T) {
	e := newEnv(t)
	e.write(t, "notes.md", "the retry policy\n")
	down := &downEmbedder{}
	ix, _, err := search.Open(search.Config{Dir: e.dir, Workspace: e.ws, Sessions: e.store, Embedder: down, EmbeddingModel: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	st, err := ix.Update(context.Background())
	if err != nil || st.EmbedError == "" {
		t.Fatalf("first update: %v, embed error %q", err, st.EmbedError)
	}
	calls := down.calls.Load()
	st, err = ix.Update(context.Background())
	hits, serr := ix.Search(context.Background(), "retry", search.ScopeAll, 5)
	if err != nil || serr != nil || len(hits) != 1 || !strings.Contains(st.EmbedError, "BM25 alone") {
		t.Errorf("after: update %v %q, search %v, %d hits", err, st.EmbedError, serr, len(hits))
	}
	if n := down.calls.Load(); n != calls {
		t.Errorf("the server that was down was called %d more times", n-calls)
	}
}

// Two processes with different embedding models on one index: once the
// second has taken it for its model, the first adds no vectors of its own
// model to it (and searches it by BM25 alone).
func TestAnotherModelsVectorsAreNotMixed(t *testing.T) {
	e := newEnv(t)
	e.write(t, "a.md", "alpha words here\n")
	a := openWith(t, e, hashEmbedder{}, "model-a")
	if _, err := a.Update(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := openWith(t, e, hashEmbedder{}, "model-b") // throws model-a's vectors away
	e.write(t, "b.md", "beta words here\n")
	if _, err := a.Update(context.Background()); err != nil { // a still runs: embeds with model-a
		t.Fatal(err)
	}
	st, err := b.Stats()
	if err != nil {
		t.Fatal(err)
	}
	var model string
	db, _ := sql.Open("sqlite", "file:"+filepath.Join(e.dir, "index.db"))
	defer db.Close()
	if err := db.QueryRow(`SELECT value FROM meta WHERE key='embedding_model'`).Scan(&model); err != nil {
		t.Fatalf("reading the index's embedding model: %v", err)
	}
	if model != "model-b" {
		t.Errorf("the index's embedding model is %q; b took it for model-b", model)
	}
	if st.Vectors > 0 && model == "model-b" {
		t.Errorf("the index says its vectors are model-b's, and holds %d made by model-a", st.Vectors)
	}
}

// TestIndexFilesArePrivate: the index (past sessions, the workspace's
// text) and SQLite's side files are the owner's alone, an old 0644 index
// included.
func TestIndexFilesArePrivate(t *testing.T) {
	home := t.TempDir()
	store, _ := sessions.Open(home)
	newSession(t, store, run{task: "alpha task", result: "alpha result", answer: "alpha answer"})
	dir := filepath.Join(home, "index")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "index.db"), nil, 0o644) // as an older agentty left it
	ix, _, err := search.Open(search.Config{Dir: dir, Sessions: store})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Update(context.Background()); err != nil {
		t.Fatal(err)
	}
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		fi, err := f.Info()
		if err == nil && fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v, want 0600", f.Name(), fi.Mode().Perm())
		}
	}
}
