package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// respInfo is what the transport saw of one request's response: the
// Retry-After go-openai hides, errors reported on lines go-openai skips, and
// whether the stream stalled.
type respInfo struct {
	mu         sync.Mutex
	retryAfter time.Duration
	status     int
	errLine    string
	stall      bool
	tooLarge   bool
	// timer aborts the response when it fires; progress restarts it for
	// another stall period. Set by RoundTrip before the body is read.
	timer    *time.Timer
	stallFor time.Duration
}

// progress restarts the stall timer: the stream carried part of an answer
// (text, reasoning, a tool call, its end). Bytes alone do not count: a
// server that sends only keep-alive comments or empty deltas stalls like
// one that sends nothing.
func (i *respInfo) progress() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.timer != nil && !i.stall {
		i.timer.Reset(i.stallFor)
	}
}

type respInfoKey struct{}

func (i *respInfo) get() (time.Duration, int) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.retryAfter, i.status
}

func (i *respInfo) large() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.tooLarge
}

func (i *respInfo) stalled() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.stall
}

// streamError returns the error of an "error:" line the server sent (as
// llama.cpp server does), which go-openai passes over.
func (i *respInfo) streamError() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.errLine == "" {
		return nil
	}
	var body struct {
		Code    any    `json:"code"`
		Message string `json:"message"`
		Type    string `json:"type"`
	}
	if json.Unmarshal([]byte(i.errLine), &body) != nil || body.Message == "" {
		return &streamErr{msg: i.errLine}
	}
	return &streamErr{msg: body.Message, typ: body.Type, code: body.Code}
}

// transport wraps the HTTP transport: it records Retry-After, watches the
// stream for "error:" lines, and aborts a response that stalls.
type transport struct {
	base  http.RoundTripper
	stall time.Duration
	// maxLine bounds one line of the stream (a chunk): go-openai reads a
	// line whole, so a server that never ends one would fill the memory.
	maxLine int
}

// headersKey carries a decision's extra headers (Config.Headers) in the
// request's context to the transport.
type headersKey struct{}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if h, _ := req.Context().Value(headersKey{}).(http.Header); len(h) > 0 {
		req = req.Clone(req.Context()) // a RoundTripper must not change the request
		for k, v := range h {
			req.Header[k] = v
		}
	}
	info, _ := req.Context().Value(respInfoKey{}).(*respInfo)
	ctx, cancel := context.WithCancel(req.Context())
	timer := time.AfterFunc(t.stall, func() {
		if info != nil {
			info.mu.Lock()
			info.stall = true
			info.mu.Unlock()
		}
		cancel()
	})
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		timer.Stop()
		cancel()
		if info != nil && info.stalled() {
			return nil, context.DeadlineExceeded
		}
		return nil, err
	}
	if info != nil {
		info.mu.Lock()
		info.status = resp.StatusCode
		info.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		info.timer, info.stallFor = timer, t.stall
		info.mu.Unlock()
	}
	timer.Reset(t.stall)
	if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		// A server that ignored "stream": one JSON answer. It becomes one
		// chunk of a stream, so the rest of the way is the same.
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(t.maxLine)+1))
		resp.Body.Close()
		timer.Stop()
		cancel()
		if info != nil {
			info.mu.Lock()
			info.timer = nil // read whole: nothing to restart
			info.mu.Unlock()
		}
		if err != nil {
			return nil, err
		}
		if t.maxLine > 0 && len(body) > t.maxLine {
			if info != nil {
				info.mu.Lock()
				info.tooLarge = true
				info.mu.Unlock()
			}
			return nil, errTooLarge
		}
		resp.Body = io.NopCloser(bytes.NewReader(asStream(body)))
		resp.Header.Set("Content-Type", "text/event-stream")
		return resp, nil
	}
	resp.Body = &watchBody{rc: resp.Body, timer: timer, stall: t.stall, maxLine: t.maxLine, cancel: cancel, info: info}
	return resp, nil
}

// asStream turns a whole chat completion into the stream that would have
// carried it: one chunk whose delta is the message, then [DONE]. A body that
// is not a completion is passed on as it is, for the reader to reject.
func asStream(body []byte) []byte {
	var whole struct {
		Choices []struct {
			Index        int             `json:"index"`
			Message      json.RawMessage `json:"message"`
			FinishReason string          `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if json.Unmarshal(body, &whole) != nil || len(whole.Choices) == 0 {
		return body
	}
	type choice struct {
		Index        int             `json:"index"`
		Delta        json.RawMessage `json:"delta"`
		FinishReason string          `json:"finish_reason"`
	}
	c := struct {
		Choices []choice        `json:"choices"`
		Usage   json.RawMessage `json:"usage,omitempty"`
	}{Usage: whole.Usage}
	for _, ch := range whole.Choices {
		c.Choices = append(c.Choices, choice{Index: ch.Index, Delta: ch.Message, FinishReason: ch.FinishReason})
	}
	chunk, err := json.Marshal(c)
	if err != nil {
		return body
	}
	return append(append([]byte("data: "), chunk...), "\n\ndata: [DONE]\n\n"...)
}

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// watchBody passes the response body through, noting "error:" lines and
// refusing a line longer than maxLine. Without a respInfo to be told of
// progress (see respInfo.progress), every read restarts the stall timer.
type watchBody struct {
	rc      io.ReadCloser
	timer   *time.Timer
	stall   time.Duration
	maxLine int
	cancel  context.CancelFunc
	info    *respInfo
	line    []byte // the unfinished line so far (its first 4 KiB)
	lineLen int    // its length
	// other counts the bytes of lines that are not data (comments,
	// keep-alives): go-openai keeps them all, so they are bounded too.
	other int
}

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		if b.info == nil {
			b.timer.Reset(b.stall)
		}
		if b.scan(p[:n]) {
			b.timer.Stop()
			b.cancel()
			b.info.mu.Lock()
			b.info.tooLarge = true
			b.info.mu.Unlock()
			return 0, errTooLarge
		}
	}
	if err != nil {
		b.timer.Stop()
		if b.info != nil && b.info.stalled() {
			return n, context.DeadlineExceeded
		}
	}
	return n, err
}

// scan looks for lines that start with "error:"; it reports a line longer
// than maxLine.
func (b *watchBody) scan(p []byte) bool {
	if b.info == nil {
		return false
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(b.line) < 4096 {
				b.line = append(b.line, p[:min(len(p), 4096-len(b.line))]...)
			}
			b.lineLen += len(p)
			return b.maxLine > 0 && b.lineLen > b.maxLine
		}
		if b.maxLine > 0 && b.lineLen+i > b.maxLine {
			return true
		}
		line := append(b.line, p[:min(i, 4096-len(b.line))]...)
		if t := bytes.TrimSpace(line); len(t) > 0 && !bytes.HasPrefix(t, []byte("data:")) {
			if b.other += b.lineLen + i; b.maxLine > 0 && b.other > b.maxLine {
				return true
			}
		}
		b.line, b.lineLen = b.line[:0], 0
		p = p[i+1:]
		if rest, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("error:")); ok {
			b.info.mu.Lock()
			b.info.errLine = string(bytes.TrimSpace(rest))
			b.info.mu.Unlock()
		}
	}
	return false
}

func (b *watchBody) Close() error {
	b.timer.Stop()
	b.cancel()
	return b.rc.Close()
}
