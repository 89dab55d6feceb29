package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/agentty/agentty/config"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/search"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/tools"
)

// indexDir is where the search index of a session store lives: beside
// its sessions folder, <data>/index.
func indexDir(store *sessions.Store) string {
	return filepath.Join(filepath.Dir(store.Dir()), "index")
}

// progressEvery is how many files a walk indexes before agentty index and
// agentty search say, on stderr, how far it is.
const progressEvery = 1000

// openIndex opens the index of store and the workspace; what was wrong
// with an index that had to be rebuilt goes to stderr. Progress of a big
// update goes there too.
func openIndex(o options, store *sessions.Store, stderr io.Writer, getenv func(string) string) (*search.Index, error) {
	cfg, err := searchConfig(o, stderr, getenv)
	if err != nil {
		return nil, err
	}
	emb := embedding(o, cfg, getenv)
	if emb.err != nil {
		return nil, emb.err
	}
	ix, notices, err := search.Open(search.Config{
		Dir:            indexDir(store),
		Workspace:      cmp.Or(o.workspace, "."),
		Sessions:       store,
		Embedder:       emb.e,
		EmbeddingModel: emb.model,
		Progress: func(p search.Progress) {
			if !p.Done && p.FilesIndexed >= progressEvery {
				fmt.Fprintf(stderr, "indexing: %d files indexed, %d seen…\n", p.FilesIndexed, p.FilesSeen)
			}
		},
	})
	for _, n := range notices {
		fmt.Fprintln(stderr, "agentty: "+n)
	}
	return ix, err
}

// searchConfig is the config as a run would see it: the user's, with what
// trust allows of the workspace's (never asking; a notice says what was
// left out).
func searchConfig(o options, stderr io.Writer, getenv func(string) string) (*config.Settings, error) {
	cfg, ws, err := config.Load(getenv, cmp.Or(o.workspace, "."))
	if err != nil {
		return nil, err
	}
	if ws != nil {
		trusted, notice, err := decideTrust(o, ws, getenv)
		if err != nil {
			return nil, err
		}
		if trusted {
			cfg.Merge(ws.Cfg)
		} else {
			cfg.Merge(ws.Safe())
			if notice != "" {
				fmt.Fprintln(stderr, "agentty: "+notice)
			}
		}
	}
	return cfg, nil
}

// embedder is the embedding model the config names, if any, or why it
// cannot be used.
type embedder struct {
	e     search.Embedder
	model string
	err   error
}

// embedding returns the embedder of the config's embedding_model, through
// the same OpenAI-compatible server as the model (--base-url,
// OPENAI_BASE_URL or base_url, and OPENAI_API_KEY); none when it is not
// set.
func embedding(o options, cfg *config.Settings, getenv func(string) string) embedder {
	if cfg.EmbeddingModel == "" {
		return embedder{}
	}
	key := getenv("OPENAI_API_KEY")
	base := cmp.Or(o.baseURL, getenv("OPENAI_BASE_URL"), cfg.BaseURL)
	if key == "" && base == "" {
		return embedder{err: fmt.Errorf("embedding_model %q needs OPENAI_API_KEY, or OPENAI_BASE_URL (or base_url) for a local server", cfg.EmbeddingModel)}
	}
	e := search.NewOpenAIEmbedder(search.OpenAIConfig{BaseURL: base, APIKey: key, Model: cfg.EmbeddingModel})
	return embedder{e: redactedEmbedder{e, config.NewRedactor(getenv, cfg)}, model: cfg.EmbeddingModel}
}

// redactedEmbedder sends texts to the embedding server with the secrets
// agentty holds replaced, as every tool result is before the model sees it:
// the index embeds the workspace's files as they are.
type redactedEmbedder struct {
	e search.Embedder
	r *config.Redactor
}

func (x redactedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = x.r.Redact(t)
	}
	return x.e.Embed(ctx, out)
}

// searchCmd runs `agentty search QUERY [--scope workspace|sessions|all]
// [--json] [-k N]`: it brings the index up to date and prints the best
// chunks.
func searchCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("search", stderr)
	var o options
	fs.StringVar(&o.dataDir, "data-dir", "", "where sessions live")
	fs.StringVar(&o.workspace, "workspace", "", "the folder whose files are searched (default: the current folder)")
	scope := fs.String("scope", search.ScopeAll, "workspace, sessions or all")
	k := fs.Int("k", 10, "how many chunks")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseInterspersed(fs, args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "agentty search: %s\n", strings.TrimPrefix(err.Error(), "search: "))
		return code
	}
	query := strings.TrimSpace(strings.Join(fs.Args(), " "))
	switch {
	case query == "":
		return fail(exitUsage, errors.New("say what to search for: agentty search QUERY [--scope workspace|sessions|all] [--json] [-k N]"))
	case *scope != search.ScopeWorkspace && *scope != search.ScopeSessions && *scope != search.ScopeAll:
		return fail(exitUsage, fmt.Errorf("--scope %q: want workspace, sessions or all", *scope))
	case *k <= 0:
		return fail(exitUsage, fmt.Errorf("-k %d: want at least 1", *k))
	}
	store, err := o.localStore(getenv)
	if err != nil {
		return fail(exitError, err)
	}
	ix, err := openIndex(o, store, stderr, getenv)
	if err != nil {
		return fail(exitError, err)
	}
	defer ix.Close()
	if _, err := ix.Update(ctx); err != nil {
		return fail(exitError, err)
	}
	hits, err := ix.Search(ctx, query, *scope, *k)
	if err != nil {
		return fail(exitError, err)
	}
	if *asJSON {
		if hits == nil {
			hits = []search.Hit{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Query string       `json:"query"`
			Scope string       `json:"scope"`
			Hits  []search.Hit `json:"hits"`
		}{query, *scope, hits})
		return 0
	}
	if len(hits) == 0 {
		fmt.Fprintf(stdout, "nothing found for %q\n", query)
		return 0
	}
	for i, h := range hits {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "%d. %s  (score %.2f)\n", i+1, h.Where(), h.Score)
		for _, line := range preview(h.Text, query, 3) {
			fmt.Fprintf(stdout, "   %s\n", line)
		}
	}
	return 0
}

// preview is up to n lines of a chunk to show under a hit: the lines
// that hold a word of the query (by its first five letters, a crude stem),
// else the first lines that are not blank; each on one line, cut to fit,
// "…" after them when lines were left out.
func preview(text, query string, n int) []string {
	var stems []string
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 4 {
			stems = append(stems, w[:min(len(w), 5)])
		}
	}
	var lines, hits []string
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		lines = append(lines, line)
		lower := strings.ToLower(line)
		for _, st := range stems {
			if strings.Contains(lower, st) {
				hits = append(hits, line)
				break
			}
		}
	}
	if len(hits) == 0 {
		hits = lines
	}
	var out []string
	for _, line := range hits[:min(n, len(hits))] {
		out = append(out, engine.OneLine(line, 100))
	}
	if len(lines) > len(out) {
		out = append(out, "…")
	}
	return out
}

// indexCmd runs `agentty index [--rebuild] [--json]`: it brings the index
// up to date (or builds it anew) and says what it holds.
func indexCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("index", stderr)
	var o options
	fs.StringVar(&o.dataDir, "data-dir", "", "where sessions live")
	fs.StringVar(&o.workspace, "workspace", "", "the folder whose files are indexed (default: the current folder)")
	rebuild := fs.Bool("rebuild", false, "throw the index away and build it anew")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseInterspersed(fs, args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "agentty index: %s\n", strings.TrimPrefix(err.Error(), "search: "))
		return code
	}
	if fs.NArg() > 0 {
		return fail(exitUsage, fmt.Errorf("unexpected argument %q (agentty index [--rebuild] [--json])", fs.Arg(0)))
	}
	store, err := o.localStore(getenv)
	if err != nil {
		return fail(exitError, err)
	}
	ix, err := openIndex(o, store, stderr, getenv)
	if err != nil {
		return fail(exitError, err)
	}
	defer ix.Close()
	start := time.Now()
	update := ix.Update
	if *rebuild {
		update = ix.Rebuild
	}
	st, err := update(ctx)
	if err != nil {
		return fail(exitError, err)
	}
	took := time.Since(start)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			search.Stats
			Added           int   `json:"files_added"`
			Removed         int   `json:"files_removed"`
			SessionsUpdated int   `json:"sessions_updated"`
			SessionsRemoved int   `json:"sessions_removed"`
			TookMS          int64 `json:"took_ms"`
		}{st, st.Added, st.Removed, st.SessionsUpdated, st.SessionsRemoved, took.Milliseconds()})
		return 0
	}
	fmt.Fprintf(stdout, "index    %s (%s)\n", st.Path, sizeWords(st.Bytes))
	fmt.Fprintf(stdout, "files    %d in %s, %d chunks\n", st.Files, st.Workspace, st.FileChunk)
	fmt.Fprintf(stdout, "sessions %d, %d chunks\n", st.Sessions, st.Chunks-st.FileChunk)
	fmt.Fprintf(stdout, "updated  %s: %d files added or changed, %d removed; %d sessions with new events, %d removed (%s)\n",
		st.Updated.Local().Format("2006-01-02 15:04:05"), st.Added, st.Removed, st.SessionsUpdated, st.SessionsRemoved, took.Round(time.Millisecond))
	return 0
}

func sizeWords(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// knowledge is what search_knowledge searches: the index of the session
// store and the workspace, opened on the first search and brought up to
// date before each (only what changed is read). The store is opened then
// too, so that a setup that never searches makes nothing on disk.
type knowledge struct {
	store func() (*sessions.Store, error)
	ws    string
	emb   embedder

	mu sync.Mutex // guards ix
	ix *search.Index
}

var _ tools.Knowledge = (*knowledge)(nil)

func newKnowledge(store func() (*sessions.Store, error), wsDir string, emb embedder) *knowledge {
	return &knowledge{store: store, ws: cmp.Or(wsDir, "."), emb: emb}
}

// index returns the open index, opening it the first time. An index that
// had to be rebuilt is rebuilt silently here: the search still answers,
// and agentty index says so.
func (k *knowledge) index() (*search.Index, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ix != nil {
		return k.ix, nil
	}
	store, err := k.store()
	if err != nil {
		return nil, err
	}
	if k.emb.err != nil {
		return nil, k.emb.err
	}
	ix, _, err := search.Open(search.Config{Dir: indexDir(store), Workspace: k.ws, Sessions: store, Embedder: k.emb.e, EmbeddingModel: k.emb.model})
	if err != nil {
		return nil, err
	}
	k.ix = ix
	return ix, nil
}

// Search implements tools.Knowledge.
func (k *knowledge) Search(ctx context.Context, query, scope string, n int) ([]tools.KnowledgeHit, error) {
	ix, err := k.index()
	if err != nil {
		return nil, err
	}
	if _, err := ix.Update(ctx); err != nil {
		return nil, err
	}
	hits, err := ix.Search(ctx, query, scope, n)
	if err != nil {
		return nil, err
	}
	out := make([]tools.KnowledgeHit, 0, len(hits))
	for _, h := range hits {
		out = append(out, tools.KnowledgeHit{Source: h.Source, Where: h.Where(), Score: h.Score, Text: h.Text, Session: h.Session, Run: h.Run})
	}
	return out, nil
}

// Close closes the index if a search opened it.
func (k *knowledge) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ix == nil {
		return nil
	}
	err := k.ix.Close()
	k.ix = nil
	return err
}
