package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/search"
)

// TestSearchKnowledgeInARun: a scripted run asks search_knowledge about
// a past session and a workspace file; the next run asks again after the
// workspace changed and sees the change (the index updated in between).
func TestSearchKnowledgeInARun(t *testing.T) {
	ws := t.TempDir()
	env := map[string]string{"AGENTTY_HOME": t.TempDir()}
	os.WriteFile(filepath.Join(ws, "DECISIONS.md"), []byte("# Decisions\n\nThe retry policy: five attempts with full jitter.\n"), 0o644)

	// A past session that said something about the retry policy.
	past := writeScript(t, `{"turns":[{"answer":"We settled on a circuit breaker for the payment client."}]}`)
	if code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+past, "what about the payment client?"); code != 0 {
		t.Fatalf("past session: exit %d: %s", code, errs)
	}

	sc := writeScript(t, `{"turns":[{"tool_calls":[
		{"name":"search_knowledge","arguments":{"query":"payment client circuit breaker","scope":"sessions"}},
		{"name":"search_knowledge","arguments":{"query":"retry policy","scope":"workspace","k":2}},
		{"name":"search_knowledge","arguments":{"query":"zebra","scope":"all"}},
		{"name":"search_knowledge","arguments":{"query":"x","scope":"elsewhere"}}]},{"answer":"done"}]}`)
	code, out, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--json", "--model", "script:"+sc, "look it up")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	results := toolResults(t, out)
	if len(results) != 4 {
		t.Fatalf("want 4 tool results, got %d:\n%s", len(results), out)
	}
	for i, want := range []string{
		"[1] sessions session ",
		"[1] workspace DECISIONS.md:1-3 (score ",
		`nothing found for "zebra" in the workspace's files and the past sessions`,
		"scope", // refused by the schema's enum
	} {
		if !strings.Contains(results[i].Result, want) {
			t.Errorf("call %d: result %q, want it to hold %q", i, results[i].Result, want)
		}
	}
	if !strings.Contains(results[0].Result, "circuit breaker for the payment client") || results[0].Status != engine.ToolOK {
		t.Errorf("sessions: %+v", results[0])
	}
	if !strings.Contains(results[1].Result, "five attempts with full jitter") || strings.Contains(results[1].Result, "[2]") {
		t.Errorf("workspace, k 2: %q (one file, one chunk)", results[1].Result)
	}
	if results[3].Status != engine.ToolError {
		t.Errorf("a bad scope: status %s, want error", results[3].Status)
	}

	// The workspace changes; the next search sees it.
	os.WriteFile(filepath.Join(ws, "DECISIONS.md"), []byte("# Decisions\n\nThe retry policy was dropped for a token bucket.\n"), 0o644)
	sc2 := writeScript(t, `{"turns":[{"tool_calls":[{"name":"search_knowledge","arguments":{"query":"retry policy","scope":"workspace"}}]},{"answer":"done"}]}`)
	_, out, _ = runCLI(t, context.Background(), env, "run", "--workspace", ws, "--json", "--model", "script:"+sc2, "again")
	if r := toolResults(t, out); len(r) != 1 || !strings.Contains(r[0].Result, "token bucket") || strings.Contains(r[0].Result, "jitter") {
		t.Fatalf("after the change: %+v", r)
	}
}

func toolResults(t *testing.T, out string) []engine.ToolFinished {
	t.Helper()
	var res []engine.ToolFinished
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct {
			Kind string          `json:"kind"`
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Kind != string(engine.KindToolFinished) {
			continue
		}
		var tf engine.ToolFinished
		if err := json.Unmarshal(ev.Data, &tf); err != nil {
			t.Fatal(err)
		}
		res = append(res, tf)
	}
	// The calls of one decision run in parallel: their results in call order.
	slices.SortStableFunc(res, func(a, b engine.ToolFinished) int { return a.Index - b.Index })
	return res
}

func TestSearchAndIndexCommands(t *testing.T) {
	ws := t.TempDir()
	env := map[string]string{"AGENTTY_HOME": t.TempDir()}
	os.WriteFile(filepath.Join(ws, "a.md"), []byte("the albatross flies far\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "b.md"), []byte("the penguin swims\n"), 0o644)
	sc := writeScript(t, `{"turns":[{"answer":"An albatross can glide for hours."}]}`)
	if code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "tell me about the albatross"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}

	code, out, errs := runCLI(t, context.Background(), env, "index", "--workspace", ws, "--json")
	if code != 0 {
		t.Fatalf("index: exit %d: %s", code, errs)
	}
	var st struct {
		search.Stats
		Added           int `json:"files_added"`
		SessionsUpdated int `json:"sessions_updated"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("index --json: %v\n%s", err, out)
	}
	if st.Files != 2 || st.Added != 2 || st.Sessions != 1 || st.SessionsUpdated != 1 || st.Updated.IsZero() {
		t.Fatalf("index --json: %+v", st)
	}
	// Again: nothing new.
	code, out, _ = runCLI(t, context.Background(), env, "index", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "files    2 in ") || !strings.Contains(out, "0 files added or changed, 0 removed; 0 sessions with new events") {
		t.Fatalf("index again: exit %d:\n%s", code, out)
	}

	code, out, errs = runCLI(t, context.Background(), env, "search", "--workspace", ws, "albatross", "--json")
	if code != 0 {
		t.Fatalf("search: exit %d: %s", code, errs)
	}
	var res struct {
		Query string
		Hits  []search.Hit
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("search --json: %v\n%s", err, out)
	}
	sources := map[string]int{}
	for _, h := range res.Hits {
		sources[h.Source]++
	}
	// The file, and the session's task and answer.
	if res.Query != "albatross" || sources["workspace"] != 1 || sources["sessions"] != 2 {
		t.Fatalf("search albatross: %+v", res)
	}

	code, out, _ = runCLI(t, context.Background(), env, "search", "--workspace", ws, "--scope", "workspace", "-k", "1", "albatross", "penguin")
	if code != 0 || strings.Count(out, "(score ") != 1 || !strings.Contains(out, "1. ") {
		t.Fatalf("search -k 1: exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI(t, context.Background(), env, "search", "--workspace", ws, "zebra")
	if code != 0 || !strings.Contains(out, `nothing found for "zebra"`) {
		t.Fatalf("search zebra: exit %d:\n%s", code, out)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"search"}, "say what to search for"},
		{[]string{"search", "--scope", "web", "x"}, `--scope "web": want workspace, sessions or all`},
		{[]string{"search", "-k", "0", "x"}, "-k 0: want at least 1"},
		{[]string{"index", "extra"}, `unexpected argument "extra"`},
	} {
		code, _, errs := runCLI(t, context.Background(), env, c.args...)
		if code != app.ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs, app.ExitUsage, c.want)
		}
	}

	// A corrupt index: rebuilt with a notice, and the search answers.
	p := filepath.Join(env["AGENTTY_HOME"], "index", "index.db")
	os.Remove(p + "-wal")
	os.Remove(p + "-shm")
	os.WriteFile(p, []byte("garbage, not a database"), 0o600)
	code, out, errs = runCLI(t, context.Background(), env, "search", "--workspace", ws, "penguin")
	if code != 0 || !strings.Contains(errs, "could not be read") || !strings.Contains(errs, "rebuilt") || !strings.Contains(out, "b.md:1-1") {
		t.Fatalf("corrupt index: exit %d, stderr %q:\n%s", code, errs, out)
	}
	code, out, _ = runCLI(t, context.Background(), env, "index", "--rebuild", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "2 files added or changed") {
		t.Fatalf("index --rebuild: exit %d:\n%s", code, out)
	}
}

// TestSearchWithEmbeddingModel: embedding_model in the config gives the
// index vectors from the same OpenAI-compatible server, and the search
// fuses them with BM25.
func TestSearchWithEmbeddingModel(t *testing.T) {
	var mu sync.Mutex
	var models, inputs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		models = append(models, r.URL.Path+" "+req.Model)
		inputs = append(inputs, req.Input...)
		mu.Unlock()
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, in := range req.Input {
			// Two dimensions: about cars (car, automobile) or not.
			v := []float32{0, 1}
			if strings.Contains(in, "car") || strings.Contains(in, "automobile") {
				v = []float32{1, 0}
			}
			data = append(data, item{i, v})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	}))
	defer srv.Close()

	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "garage.md"), []byte("the car needs tyres\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "kitchen.md"), []byte("bread and tea\n"), 0o644)
	const key = "sk-test-embed-0123456789abcdef"
	os.WriteFile(filepath.Join(ws, ".env.example"), []byte("OPENAI_API_KEY="+key+"\n"), 0o644)
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(cfgPath, []byte(`{"embedding_model": "test-embed"}`), 0o600)
	env := map[string]string{"AGENTTY_HOME": t.TempDir(), "AGENTTY_CONFIG": cfgPath, "OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": key}

	code, out, errs := runCLI(t, context.Background(), env, "index", "--workspace", ws, "--json")
	var st search.Stats
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Vectors != 3 || st.EmbedError != "" {
		t.Fatalf("index: exit %d, stderr %q:\n%s", code, errs, out)
	}
	code, out, errs = runCLI(t, context.Background(), env, "search", "--workspace", ws, "--scope", "workspace", "automobile")
	if code != 0 || !strings.HasPrefix(out, "1. garage.md:1-1") {
		t.Fatalf("search automobile: exit %d, stderr %q:\n%s", code, errs, out)
	}
	mu.Lock()
	if len(models) == 0 || models[0] != "/v1/embeddings test-embed" {
		t.Errorf("requests: %q", models)
	}
	for _, in := range inputs { // the key agentty holds never leaves in a text to embed
		if strings.Contains(in, key) {
			t.Errorf("a text sent to be embedded holds the API key: %q", in)
		}
	}
	mu.Unlock()

	// No server to ask: a clear error.
	delete(env, "OPENAI_BASE_URL")
	delete(env, "OPENAI_API_KEY")
	code, _, errs = runCLI(t, context.Background(), env, "search", "--workspace", ws, "car")
	if code != app.ExitError || !strings.Contains(errs, `embedding_model "test-embed" needs OPENAI_API_KEY`) {
		t.Fatalf("no server: exit %d, stderr %q", code, errs)
	}
}

func TestPreview(t *testing.T) {
	text := "package retry\n\nimport \"time\"\n\n// Backoff doubles the delay.\nfunc Backoff() {}\n// Jitter spreads retries.\n"
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"backoff jitter", []string{"// Backoff doubles the delay.", "func Backoff() {}", "// Jitter spreads retries.", "…"}},
		{"zebra", []string{"package retry", `import "time"`, "// Backoff doubles the delay.", "…"}},
		{"retries", []string{"// Jitter spreads retries.", "…"}},
	} {
		if got := preview(text, c.query, 3); !slices.Equal(got, c.want) {
			t.Errorf("preview for %q: %q, want %q", c.query, got, c.want)
		}
	}
	if got := preview("one line", "x", 3); !slices.Equal(got, []string{"one line"}) {
		t.Errorf("one line: %q", got)
	}
}
