package app

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/agentty/agentty/config"
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

// OpenIndex opens the index of store and the workspace; what was wrong
// with an index that had to be rebuilt goes to stderr. Progress of a big
// update goes there too.
func OpenIndex(o Options, store *sessions.Store, stderr io.Writer, getenv func(string) string) (*search.Index, error) {
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
		Workspace:      cmp.Or(o.Workspace, "."),
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

// Redactor takes out of text the secrets a run in workspace holds (the API
// key, the credentials of the config as the run sees it), for what agentty
// shows outside a run: a session's diff. It asks nothing.
func Redactor(o Options, workspace string, getenv func(string) string) (*config.Redactor, error) {
	o.Workspace = workspace
	cfg, err := searchConfig(o, io.Discard, getenv)
	if err != nil {
		return nil, fmt.Errorf("the config's secrets, to keep them out of what is shown: %w", err)
	}
	if len(o.MCP) > 0 {
		cfg.Merge(&config.Settings{MCPServers: o.MCP})
	}
	return config.NewRedactor(getenv, cfg), nil
}

// searchConfig is the config as a run would see it: the user's, with what
// trust allows of the workspace's (never asking; a notice says what was
// left out).
func searchConfig(o Options, stderr io.Writer, getenv func(string) string) (*config.Settings, error) {
	cfg, ws, err := config.Load(getenv, cmp.Or(o.Workspace, "."))
	if err != nil {
		return nil, err
	}
	if ws != nil {
		trusted, notice, err := DecideTrust(o, ws, getenv)
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
func embedding(o Options, cfg *config.Settings, getenv func(string) string) embedder {
	if cfg.EmbeddingModel == "" {
		return embedder{}
	}
	key := getenv("OPENAI_API_KEY")
	base := cmp.Or(o.BaseURL, getenv("OPENAI_BASE_URL"), cfg.BaseURL)
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
