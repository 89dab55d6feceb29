package openai_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// reply is one scripted answer of the fake server.
type reply struct {
	status  int
	headers map[string]string
	body    string        // sent as is (SSE, or a JSON error)
	stall   time.Duration // silence before the first byte
	cut     bool          // drop the connection after body
}

// recorded is a request the fake server received.
type recorded struct {
	header http.Header
	body   map[string]any
	raw    []byte
}

// fakeServer speaks the chat-completions wire format from a queue of
// replies, and records every request.
type fakeServer struct {
	t       testing.TB
	mu      sync.Mutex
	replies []reply
	reqs    []recorded
	srv     *httptest.Server
}

func newFake(t testing.TB, replies ...reply) *fakeServer {
	f := &fakeServer{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServer) url() string { return f.srv.URL + "/v1" }

func (f *fakeServer) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	json.Unmarshal(raw, &body)
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{header: r.Header.Clone(), body: body, raw: raw})
	if len(f.replies) == 0 {
		f.mu.Unlock()
		http.Error(w, `{"error":{"message":"the fake server has no more replies"}}`, 500)
		return
	}
	rp := f.replies[0]
	f.replies = f.replies[1:]
	f.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "wrong path "+r.URL.Path, 404)
		return
	}
	if rp.stall > 0 {
		select {
		case <-time.After(rp.stall):
		case <-r.Context().Done():
			return
		}
	}
	status := rp.status
	if status == 0 {
		status = 200
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	for k, v := range rp.headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(status)
	io.WriteString(w, rp.body)
	w.(http.Flusher).Flush()
	if rp.cut {
		panic(http.ErrAbortHandler) // drop the connection mid-stream
	}
}

// sse builds a stream: each payload a data: event, then [DONE].
func sse(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		fmt.Fprintf(&b, "data: %s\n\n", p)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func textChunk(s string) string {
	b, _ := json.Marshal(s)
	return `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}`
}

func finishChunk(reason string) string {
	return `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

const usageChunk = `{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":42,"completion_tokens":7,"total_tokens":49}}`

// answer is a streamed text answer in pieces, with a usage chunk.
func answer(pieces ...string) string {
	var ps []string
	for _, p := range pieces {
		ps = append(ps, textChunk(p))
	}
	return sse(append(ps, finishChunk("stop"), usageChunk)...)
}

// toolCallStream streams one call with its arguments split in pieces.
func toolCallStream(id, name, args string, pieces int) string {
	first := fmt.Sprintf(`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]},"finish_reason":null}]}`, id, name)
	ps := []string{first}
	step := max(len(args)/pieces, 1)
	for i := 0; i < len(args); i += step {
		part, _ := json.Marshal(args[i:min(i+step, len(args))])
		ps = append(ps, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":%s}}]},"finish_reason":null}]}`, part))
	}
	return sse(append(ps, finishChunk("tool_calls"), usageChunk)...)
}
