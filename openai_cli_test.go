package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestRunAgainstLocalServer points agentty run at an in-process
// OpenAI-compatible server that fails once, then calls a tool, then answers.
func TestRunAgainstLocalServer(t *testing.T) {
	const key = "sk-cli-SECRET-0987654321"
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, `{"error":{"message":"no key"}}`, 401)
			return
		}
		switch i % 3 {
		case 1:
			http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, 503)
			return
		case 2:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"calculator","arguments":"{\"expr"}}]}}]}`+"\n\n")
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ession\":\"17*23\"}"}}]}}]}`+"\n\n")
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\n")
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			for _, p := range []string{"The ", "answer ", "is ", "391."} {
				fmt.Fprintf(w, `data: {"choices":[{"index":0,"delta":{"content":%q}}]}`+"\n\n", p)
			}
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
			fmt.Fprint(w, `data: {"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":9}}`+"\n\n")
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	home := t.TempDir()
	env := map[string]string{"AGENTTY_HOME": home, "OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": key}

	code, out, errs := runCLI(t, context.Background(), env, "run", "--model", "some-model", "what is 17*23?")
	if code != 0 || strings.TrimSpace(out) != "The answer is 391." {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runCLI(t, context.Background(), env, "run", "--json", "what is 17*23?")
	if code != 0 {
		t.Fatalf("--json: exit %d, %s", code, errs)
	}
	for _, want := range []string{`"kind":"text_delta"`, `"kind":"usage"`, `"kind":"retry"`, `"status":503`, `"model":"gpt-4o-mini"`, `"prompt_tokens":120`} {
		if !strings.Contains(out, want) {
			t.Errorf("--json output lacks %s", want)
		}
	}
	// The key is in no output and no file.
	if strings.Contains(out+errs, key) {
		t.Errorf("the API key was printed")
	}
	filepath.Walk(home, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), key) {
				t.Errorf("the API key is written in %s", p)
			}
		}
		return nil
	})

	// A bad key: one clear line, no retries.
	env["OPENAI_API_KEY"] = "sk-wrong"
	code, _, errs = runCLI(t, context.Background(), env, "run", "--model", "some-model", "hi")
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code != 1 || !strings.Contains(lines[len(lines)-1], "authentication failed") || strings.Contains(errs, "sk-wrong") {
		t.Errorf("bad key: exit %d, stderr %q", code, errs)
	}
}

func TestModelNeedsKeyOrServer(t *testing.T) {
	code, _, errs := runCLI(t, context.Background(), map[string]string{"AGENTTY_HOME": t.TempDir()}, "run", "--model", "gpt-4o", "hi")
	if code != 1 || !strings.Contains(errs, "needs OPENAI_API_KEY") {
		t.Errorf("exit %d, %q", code, errs)
	}
}
