package enginetest_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine/enginetest"
)

func post(t *testing.T, s *enginetest.Server, body string) (int, string, string) {
	t.Helper()
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestServerQueue: replies in order, each request recorded, an error once
// the queue is empty, and Reset starting afresh.
func TestServerQueue(t *testing.T) {
	stream := enginetest.Answer("a", "b")
	s := enginetest.NewServer(t,
		enginetest.Reply{Body: stream, Gap: time.Millisecond},
		enginetest.Reply{Status: 429, Headers: map[string]string{"Retry-After": "1"}, Body: `{"error":{"message":"slow down"}}`})
	tests := []struct {
		status      int
		contentType string
		body        string
	}{
		{200, "text/event-stream", stream},
		{429, "application/json", `{"error":{"message":"slow down"}}`},
		{500, "text/plain; charset=utf-8", "{\"error\":{\"message\":\"the fake server has no more replies\"}}\n"},
	}
	for i, tt := range tests {
		status, ct, body := post(t, s, `{"n":`+strconv.Itoa(i+1)+`}`)
		if status != tt.status || ct != tt.contentType || body != tt.body {
			t.Errorf("request %d: %d %s %q, want %d %s %q", i+1, status, ct, body, tt.status, tt.contentType, tt.body)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[1].Body["n"] != 2.0 || string(reqs[2].Raw) != `{"n":3}` {
		t.Errorf("requests = %+v", reqs)
	}
	s.Reset(enginetest.Reply{Body: "data: [DONE]\n\n"})
	if status, _, body := post(t, s, `{}`); status != 200 || body != "data: [DONE]\n\n" || len(s.Requests()) != 1 {
		t.Errorf("after Reset: %d %q, %d requests", status, body, len(s.Requests()))
	}
}

// TestServerFunc: the function sees the request's number and the request.
func TestServerFunc(t *testing.T) {
	s := enginetest.NewServerFunc(t, func(n int, req enginetest.Request) enginetest.Reply {
		return enginetest.Reply{Body: enginetest.SSE(enginetest.TextChunk(req.Header.Get("X-Test") + strconv.Itoa(n)))}
	})
	for _, want := range []string{"1", "2"} {
		req, _ := http.NewRequest("POST", s.URL()+"/chat/completions", strings.NewReader("{}"))
		req.Header.Set("X-Test", "n=")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `"content":"n=`+want+`"`) {
			t.Errorf("request %s: %s", want, b)
		}
	}
}
