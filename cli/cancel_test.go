package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agentty/agentty/app"
)

// Ctrl+C while an answer streams: agentty run prints what was streamed, says
// how to go on, and the next run's request shows the model its cut-off
// answer.
func TestRunCancelledMidAnswer(t *testing.T) {
	streamed := make(chan struct{})
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n > 1 {
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"and they lived happily."}}]}`+"\n\n")
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		for _, p := range []string{"Once upon ", "a time"} {
			fmt.Fprintf(w, `data: {"choices":[{"index":0,"delta":{"content":%q}}]}`+"\n\n", p)
		}
		w.(http.Flusher).Flush()
		close(streamed)
		<-r.Context().Done() // a slow model: the rest never comes
	}))
	defer srv.Close()
	env := map[string]string{"AGENTTY_HOME": t.TempDir(), "OPENAI_BASE_URL": srv.URL + "/v1", "AGENTTY_CONFIG": t.TempDir() + "/none.json"}
	// Cancel once the second piece has reached the engine: the --json
	// output shows it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &watchWriter{want: `"text":"a time"`, cancel: cancel}
	var errb strings.Builder
	code := Execute(ctx, []string{"run", "--json", "--model", "m", "tell me a story"}, strings.NewReader(""), out, &errb, func(k string) string { return env[k] })
	<-streamed
	errs := errb.String()
	if code != app.ExitCancelled || !strings.Contains(out.String(), `"partial":"Once upon a time"`) {
		t.Fatalf("exit %d, stderr %q; want 130 and run_finished with the streamed text:\n%s", code, errs, out)
	}
	m := regexp.MustCompile(`go on with: agentty run --session (\S+) TASK`).FindStringSubmatch(errs)
	if m == nil {
		t.Fatalf("stderr does not say how to go on: %q", errs)
	}
	code, answer, errs := runCLI(t, context.Background(), env, "run", "--session", m[1], "go on")
	if code != 0 || !strings.Contains(answer, "happily") {
		t.Fatalf("go on: exit %d, %q %q", code, answer, errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(bodies[1], `"role":"assistant","content":"Once upon a time\n\n[cut off: the person cancelled this answer]"`) {
		t.Errorf("the next request does not show the model its cut-off answer:\n%s", bodies[1])
	}
}

// watchWriter collects what is written and cancels once want appears.
type watchWriter struct {
	mu     sync.Mutex
	b      strings.Builder
	want   string
	cancel func()
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if w.cancel != nil && strings.Contains(w.b.String(), w.want) {
		w.cancel()
		w.cancel = nil
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
