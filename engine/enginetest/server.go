package enginetest

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

// Reply is one scripted answer of a Server.
type Reply struct {
	// Status is the HTTP status. Zero sends 200 with Body as an event
	// stream; any other status sends Body as JSON.
	Status int
	// Headers are set on the response after Content-Type, so they may
	// replace it.
	Headers map[string]string
	// Body is sent as it is: an event stream (see SSE), or a JSON error.
	Body string
	// Stall is a silence before the first byte; the client giving up on
	// the request cuts it short.
	Stall time.Duration
	// Gap, when set, sends Body one event at a time, each flushed, with
	// Gap after each, as a model streams its tokens.
	Gap time.Duration
	// Cut drops the connection after Body.
	Cut bool
}

// Request is a request a Server received.
type Request struct {
	Header http.Header
	// Body is the JSON body, decoded; nil when it is not JSON.
	Body map[string]any
	Raw  []byte
}

// Server is an in-process server that speaks OpenAI's chat-completions
// wire format at /v1/chat/completions. It answers each request with the
// next Reply of its queue (NewServer) or with what a function decides
// (NewServerFunc), and records every request. It is safe for concurrent
// use, and closed when the test ends.
type Server struct {
	srv *httptest.Server

	mu      sync.Mutex // guards the fields below
	replies []Reply
	reply   func(n int, req Request) Reply
	n       int
	reqs    []Request
}

// NewServer returns a server that answers with replies, in order, and
// with an error (HTTP 500) once they run out.
func NewServer(t testing.TB, replies ...Reply) *Server {
	return newServer(t, &Server{replies: replies})
}

// NewServerFunc returns a server that answers the nth request (from 1)
// with reply(n, req). reply is called on the request's goroutine, and may
// be called by several at once.
func NewServerFunc(t testing.TB, reply func(n int, req Request) Reply) *Server {
	return newServer(t, &Server{reply: reply})
}

func newServer(t testing.TB, s *Server) *Server {
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL returns the API's base URL, ending in /v1, as OPENAI_BASE_URL,
// --base-url and openai.Config.BaseURL take it.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Reset forgets the requests received so far and makes replies the queue.
func (s *Server) Reset(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies, s.reqs = replies, nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	req := Request{Header: r.Header.Clone(), Raw: raw}
	json.Unmarshal(raw, &req.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.n++
	n, reply := s.n, s.reply
	var rp Reply
	if reply == nil {
		if len(s.replies) == 0 {
			s.mu.Unlock()
			http.Error(w, `{"error":{"message":"the fake server has no more replies"}}`, 500)
			return
		}
		rp, s.replies = s.replies[0], s.replies[1:]
	}
	s.mu.Unlock()
	if reply != nil {
		rp = reply(n, req)
	}
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "wrong path "+r.URL.Path, 404)
		return
	}
	if rp.Stall > 0 && !wait(r, rp.Stall) {
		return
	}
	status := rp.Status
	if status == 0 {
		status = 200
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	for k, v := range rp.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(status)
	flush := w.(http.Flusher).Flush
	if rp.Gap > 0 {
		for _, ev := range strings.SplitAfter(rp.Body, "\n\n") {
			if ev == "" {
				continue
			}
			io.WriteString(w, ev)
			flush()
			if !wait(r, rp.Gap) {
				return
			}
		}
	} else {
		io.WriteString(w, rp.Body)
		flush()
	}
	if rp.Cut {
		panic(http.ErrAbortHandler) // drop the connection mid-stream
	}
}

// wait waits d, or until the client gives up on r; it reports whether d
// passed.
func wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// SSE builds an event stream: each payload a data: event, then [DONE].
func SSE(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		fmt.Fprintf(&b, "data: %s\n\n", p)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// TextChunk is a chunk whose delta is the text s.
func TextChunk(s string) string {
	b, _ := json.Marshal(s)
	return `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}`
}

// FinishChunk is a chunk that ends the answer with reason (stop,
// tool_calls, error).
func FinishChunk(reason string) string {
	return `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

// UsageChunk is the chunk that reports the tokens of the request.
func UsageChunk(prompt, completion int) string {
	return fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		prompt, completion, prompt+completion)
}

// Answer is a streamed text answer in pieces, then a usage chunk of 42
// prompt and 7 completion tokens.
func Answer(pieces ...string) string {
	var ps []string
	for _, p := range pieces {
		ps = append(ps, TextChunk(p))
	}
	return SSE(append(ps, FinishChunk("stop"), UsageChunk(42, 7))...)
}

// ToolCallStream streams one call of tool name with id: a chunk that
// names it, then its arguments args in about pieces pieces, then a usage
// chunk of 42 prompt and 7 completion tokens.
func ToolCallStream(id, name, args string, pieces int) string {
	first := fmt.Sprintf(`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]},"finish_reason":null}]}`, id, name)
	ps := []string{first}
	step := max(len(args)/pieces, 1)
	for i := 0; i < len(args); i += step {
		part, _ := json.Marshal(args[i:min(i+step, len(args))])
		ps = append(ps, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":%s}}]},"finish_reason":null}]}`, part))
	}
	return SSE(append(ps, FinishChunk("tool_calls"), UsageChunk(42, 7))...)
}
