package search_test

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/search"
)

// embedServer is an OpenAI-compatible embeddings endpoint whose vectors
// are deterministic: a bag of words hashed into 1024 dimensions, with
// synonyms folded together (so that vectors find what words miss). It
// fails the requests whose numbers are in fail (1-based) with status.
type embedServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []int // inputs per request since the last take, failed ones included
	total    int   // requests ever
	fail     map[int]int
}

var synonyms = map[string]string{"automobile": "car", "vehicle": "car", "cars": "car"}

func vector(text string) []float32 {
	v := make([]float32, 1024)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if s, ok := synonyms[w]; ok {
			w = s
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%1024]++
	}
	return v
}

func newEmbedServer(t *testing.T, fail map[int]int) *embedServer {
	s := &embedServer{fail: fail}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		s.mu.Lock()
		s.requests = append(s.requests, len(req.Input))
		s.total++
		n := s.total
		s.mu.Unlock()
		if status := s.fail[n]; status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write([]byte(`{"error":{"message":"try again","type":"server_error"}}`))
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, in := range req.Input {
			data = append(data, item{"embedding", i, vector(in)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *embedServer) take() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests
	s.requests = nil
	return r
}

func (s *embedServer) embedder(model string) *search.OpenAIEmbedder {
	return search.NewOpenAIEmbedder(search.OpenAIConfig{BaseURL: s.URL + "/v1", Model: model, Batch: 4,
		Retry: engine.Retry{Initial: time.Millisecond, Max: time.Millisecond, Attempts: 3}})
}

func openWith(t *testing.T, e *env, emb search.Embedder, model string) *search.Index {
	t.Helper()
	ix, _, err := search.Open(search.Config{Dir: e.dir, Workspace: e.ws, Sessions: e.store, Embedder: emb, EmbeddingModel: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func TestVectorsFusedWithBM25(t *testing.T) {
	e := newEnv(t)
	e.write(t, "garage.md", "The car needs new tyres before winter.\n")
	for i, text := range []string{"Bread rises overnight.", "The river floods in spring.", "Chess openings: the Sicilian.",
		"Tea is steeped for three minutes.", "Winter tyres grip on snow.", "The library closes at six.",
		"Bicycles need oil.", "An automobile museum opens downtown soon.", "Owls hunt at night."} {
		e.write(t, string(rune('a'+i))+".md", text+"\n")
	}
	// The first request fails with 503 and is retried.
	srv := newEmbedServer(t, map[int]int{1: 503})
	ix := openWith(t, e, srv.embedder("bag-64"), "bag-64")
	st, err := ix.Update(context.Background())
	if err != nil || st.EmbedError != "" {
		t.Fatalf("update: %v, embed error %q", err, st.EmbedError)
	}
	if st.Vectors != 10 {
		t.Fatalf("vectors: %d, want 10", st.Vectors)
	}
	// 10 chunks in batches of 4, the first tried twice: 4 4 4 2.
	if got := srv.take(); !equal(got, []int{4, 4, 4, 2}) {
		t.Fatalf("requests (inputs each): %v, want [4 4 4 2] (a 503 retried, then batches of 4)", got)
	}

	// BM25 alone finds the museum only; the vectors know an automobile is
	// a car, and the fused ranking has both on top.
	lexOnly := wheres(e.search(t, "automobile vehicle", search.ScopeWorkspace, 3))
	if len(lexOnly) != 1 || lexOnly[0] != "h.md:1-1" {
		t.Fatalf("BM25 alone: %v, want only h.md", lexOnly)
	}
	hits, err := ix.Search(context.Background(), "automobile vehicle", search.ScopeWorkspace, 3)
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, h := range hits[:2] {
		top[h.Path] = true
	}
	if !top["garage.md"] || !top["h.md"] {
		t.Fatalf("fused: %v, want garage.md and h.md first", wheres(hits))
	}
	if hits[0].Score <= hits[1].Score || hits[0].Score > 2.0/61 {
		t.Errorf("fused scores %v: want reciprocal rank sums, best first", []float64{hits[0].Score, hits[1].Score})
	}
	srv.take()

	// Nothing changed: nothing embedded. A changed file: only its chunk.
	if _, err := ix.Update(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := srv.take(); len(got) != 0 {
		t.Fatalf("unchanged update embedded: %v", got)
	}
	e.write(t, "a.md", "Sourdough bread rises overnight.\n")
	if _, err := ix.Update(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := srv.take(); !equal(got, []int{1}) {
		t.Fatalf("one changed file: requests %v, want [1]", got)
	}

	// Another model: every vector made again.
	ix.Close()
	ix = openWith(t, e, srv.embedder("bag-64-v2"), "bag-64-v2")
	if st, _ := ix.Update(context.Background()); st.Vectors != 10 {
		t.Fatalf("new model: %d vectors", st.Vectors)
	}
	if got := srv.take(); !equal(got, []int{4, 4, 2}) {
		t.Fatalf("new model: requests %v, want [4 4 2]", got)
	}
}

func TestEmbeddingFailureLeavesBM25(t *testing.T) {
	e := newEnv(t)
	e.write(t, "a.md", "The car needs new tyres.\n")
	srv := newEmbedServer(t, map[int]int{1: 400, 2: 400})
	ix := openWith(t, e, srv.embedder("m"), "m")
	st, err := ix.Update(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Vectors != 0 || !strings.Contains(st.EmbedError, "400") || !strings.Contains(st.EmbedError, "1 attempts") {
		t.Fatalf("a 400: vectors %d, error %q; want none, the status, and no retry", st.Vectors, st.EmbedError)
	}
	// The query's embedding fails too (request 2): BM25 answers.
	hits, err := ix.Search(context.Background(), "tyres", search.ScopeAll, 5)
	if err != nil || len(hits) != 1 {
		t.Fatalf("search: %v, %v", err, wheres(hits))
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
