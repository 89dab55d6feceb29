// Package openai is agentty's model for OpenAI-compatible chat completions
// (OpenAI itself, Ollama, llama.cpp server, vLLM, LM Studio, proxies),
// through github.com/sashabaranov/go-openai, streamed.
//
// Real servers differ from the reference and from what go-openai expects;
// this package copes with what captures of real traffic show: tool calls
// whole in one chunk or split over many; every parallel call at index 0
// (told apart by id), no index at all, or a first call at index 1; "" as the
// arguments of a call without parameters; errors reported mid-stream as an
// "error:" line, a data: {"error":…} object or finish_reason "error"
// (which go-openai may return as a plain end of stream); hundreds of
// keep-alive comments before the first chunk; reasoning as
// reasoning_content or reasoning; and Retry-After, which go-openai hides,
// read by a wrapping http.RoundTripper.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentty/agentty/engine"
)

// Defaults used where Config leaves a field zero.
const (
	DefaultTimeout      = 10 * time.Minute
	DefaultStallTimeout = 90 * time.Second
)

// Config sets up a Model.
type Config struct {
	// Model is the model name the server knows, as gpt-4o-mini or
	// qwen2.5-coder:7b.
	Model string
	// BaseURL is the API's base, as http://localhost:11434/v1; empty means
	// OpenAI's.
	BaseURL string
	// APIKey is sent as a bearer token; local servers need none. It never
	// appears in events, errors or files.
	APIKey string
	// Temperature, when set, is sent with every request.
	Temperature *float64
	// Timeout bounds one request, stream included (default 10 min).
	Timeout time.Duration
	// StallTimeout bounds the silence before the first byte and between
	// chunks (default 90 s): a stalled server is retried.
	StallTimeout time.Duration
	// Transport is the HTTP transport; nil means http.DefaultTransport.
	Transport http.RoundTripper
}

// Model is an engine.Model on an OpenAI-compatible server. It is safe for
// concurrent use.
type Model struct {
	cfg    Config
	client *goopenai.Client
	// noUsageOption is set once the server refused stream_options (some
	// older servers reject fields they do not know): usage is estimated.
	noUsageOption atomic.Bool
}

var _ engine.Model = (*Model)(nil)

// New returns a model for cfg.
func New(cfg Config) *Model {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = DefaultStallTimeout
	}
	base := cfg.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c := goopenai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		c.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	// Some servers send hundreds of keep-alive comments before the first
	// chunk; go-openai gives up after 300 by default.
	c.EmptyMessagesLimit = 1 << 20
	c.HTTPClient = &http.Client{Transport: &transport{base: base, stall: cfg.StallTimeout}}
	return &Model{cfg: cfg, client: goopenai.NewClientWithConfig(c)}
}

// Name returns the model's name.
func (m *Model) Name() string { return m.cfg.Model }

// Decide streams one chat completion and turns it into a decision.
func (m *Model) Decide(ctx context.Context, req *engine.Request) (engine.Decision, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	info := &respInfo{}
	ctx = context.WithValue(ctx, respInfoKey{}, info)
	stream, err := m.client.CreateChatCompletionStream(ctx, m.request(req))
	if err != nil && !m.noUsageOption.Load() && refusedStreamOptions(err) {
		m.noUsageOption.Store(true)
		stream, err = m.client.CreateChatCompletionStream(ctx, m.request(req))
	}
	if err != nil {
		return engine.Decision{}, m.classify(err, info)
	}
	defer stream.Close()
	var acc accumulator
	for {
		raw, err := stream.RecvRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return engine.Decision{}, m.classify(err, info)
		}
		if err := acc.add(raw, req); err != nil {
			return engine.Decision{}, m.classify(err, info)
		}
	}
	if e := info.streamError(); e != nil {
		return engine.Decision{}, m.classify(e, info)
	}
	return acc.decision()
}

// request builds the chat-completions request.
func (m *Model) request(req *engine.Request) goopenai.ChatCompletionRequest {
	msgs := make([]goopenai.ChatCompletionMessage, 0, len(req.Messages)+1)
	if sys := systemText(req); sys != "" {
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: sys})
	}
	for _, h := range req.Messages {
		msg := goopenai.ChatCompletionMessage{Role: string(h.Role), Content: h.Content, ToolCallID: h.ToolCallID}
		if h.Role == engine.RoleTool {
			msg.Name = h.Name
		}
		for _, c := range h.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, goopenai.ToolCall{ID: c.ID, Type: goopenai.ToolTypeFunction,
				Function: goopenai.FunctionCall{Name: c.Name, Arguments: string(c.Args)}})
		}
		msgs = append(msgs, msg)
	}
	r := goopenai.ChatCompletionRequest{
		Model:    m.cfg.Model,
		Messages: msgs,
		Stream:   true,
	}
	if !m.noUsageOption.Load() {
		r.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	}
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: &goopenai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	temp := m.cfg.Temperature
	if req.Options.Temperature != nil {
		temp = req.Options.Temperature
	}
	if temp != nil {
		r.Temperature = float32(*temp)
	}
	if req.Options.MaxTokens > 0 {
		// max_tokens, not max_completion_tokens: the local servers
		// (Ollama, llama.cpp, vLLM) know the older name.
		//lint:ignore SA1019 local servers know max_tokens
		r.MaxTokens = req.Options.MaxTokens
	}
	return r
}

// refusedStreamOptions reports a 400 that blames stream_options.
func refusedStreamOptions(err error) bool {
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	case errors.As(err, &apiErr):
		return apiErr.HTTPStatusCode/100 == 4 && strings.Contains(apiErr.Message, "stream_options")
	case errors.As(err, &reqErr):
		return reqErr.HTTPStatusCode/100 == 4 && strings.Contains(string(reqErr.Body), "stream_options")
	}
	return false
}

// systemText is the system prompt with the memory facts after it.
func systemText(req *engine.Request) string {
	if len(req.Memory) == 0 {
		return req.System
	}
	var b strings.Builder
	b.WriteString(req.System)
	b.WriteString("\n\nFacts you were asked to remember (key: value):\n")
	for _, f := range req.Memory {
		fmt.Fprintf(&b, "- %s: %s\n", f.Key, f.Value)
	}
	return strings.TrimLeft(b.String(), "\n")
}

// chunk is one streamed chat-completion chunk, read with the fields
// go-openai's own type leaves out (reasoning, a missing index, error).
type chunk struct {
	Choices []struct {
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent string  `json:"reasoning_content"`
			Reasoning        string  `json:"reasoning"`
			ToolCalls        []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	} `json:"error"`
}

// accumulator builds a decision from chunks.
type accumulator struct {
	text, reasoning strings.Builder
	calls           []toolCall
	byIndex         map[int]int
	finish          string
	usage           engine.Usage
	chunks          int
}

type toolCall struct {
	id, name string
	args     strings.Builder
}

func (a *accumulator) add(raw []byte, req *engine.Request) error {
	var c chunk
	if err := json.Unmarshal(raw, &c); err != nil {
		return engine.Transient(fmt.Errorf("the server sent a chunk that is not JSON: %.80s", raw), 0)
	}
	a.chunks++
	if c.Error != nil {
		return &streamErr{msg: c.Error.Message, typ: c.Error.Type, code: c.Error.Code}
	}
	if c.Usage != nil && (c.Usage.PromptTokens > 0 || c.Usage.CompletionTokens > 0) {
		a.usage = engine.Usage{PromptTokens: c.Usage.PromptTokens, CompletionTokens: c.Usage.CompletionTokens}
	}
	for _, ch := range c.Choices {
		d := ch.Delta
		if d.Content != nil && *d.Content != "" {
			a.text.WriteString(*d.Content)
			req.Delta(*d.Content, false)
		}
		for _, r := range []string{d.ReasoningContent, d.Reasoning} {
			if r != "" {
				a.reasoning.WriteString(r)
				req.Delta(r, true)
			}
		}
		for _, tc := range d.ToolCalls {
			i := a.slot(tc.Index, tc.ID)
			if tc.Function.Name != "" && a.calls[i].name == "" {
				a.calls[i].name = tc.Function.Name
			}
			a.calls[i].args.WriteString(tc.Function.Arguments)
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	return nil
}

// slot finds the call a tool-call delta belongs to. A delta with an id
// starts a call unless its index already holds a call with that same id;
// one without an id continues the call at its index, or the last call.
func (a *accumulator) slot(index *int, id string) int {
	if a.byIndex == nil {
		a.byIndex = map[int]int{}
	}
	if index != nil {
		if i, ok := a.byIndex[*index]; ok && (id == "" || a.calls[i].id == id) {
			return i
		}
	} else if id == "" && len(a.calls) > 0 {
		return len(a.calls) - 1
	}
	a.calls = append(a.calls, toolCall{id: id})
	i := len(a.calls) - 1
	if index != nil {
		a.byIndex[*index] = i
	}
	return i
}

func (a *accumulator) decision() (engine.Decision, error) {
	switch a.finish {
	case "error":
		return engine.Decision{}, engine.Transient(errors.New("the server ended the answer with finish_reason \"error\""), 0)
	case "":
		if a.chunks == 0 {
			return engine.Decision{}, engine.Transient(errors.New("the server closed the stream without sending anything"), 0)
		}
		return engine.Decision{}, engine.Transient(errors.New("the stream ended before the answer was finished"), 0)
	}
	d := engine.Decision{Text: a.text.String(), Reasoning: a.reasoning.String(), Usage: a.usage}
	for _, c := range a.calls {
		if c.name == "" {
			return engine.Decision{}, engine.Transient(errors.New("the server sent a tool call without a name"), 0)
		}
		d.ToolCalls = append(d.ToolCalls, engine.ToolCall{ID: c.id, Name: c.name, Args: json.RawMessage(c.args.String())})
	}
	if d.Text == "" && len(d.ToolCalls) == 0 {
		return engine.Decision{}, engine.Transient(fmt.Errorf("the server finished (%s) with neither text nor tool calls", a.finish), 0)
	}
	return d, nil
}

// streamErr is an error the server reported inside a stream.
type streamErr struct {
	msg, typ string
	code     any
}

func (e *streamErr) Error() string {
	return fmt.Sprintf("the server reported an error mid-stream: %s", e.msg)
}

// status returns the HTTP-like status in the error's code, if any.
func (e *streamErr) status() int {
	switch c := e.code.(type) {
	case float64:
		return int(c)
	case string:
		n, _ := strconv.Atoi(c)
		return n
	}
	return 0
}

// classify turns an error into one line that names the status and the
// server's message, marked retryable or not, with the key taken out.
func (m *Model) classify(err error, info *respInfo) error {
	after, _ := info.get()
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	var se *streamErr
	status, msg := 0, ""
	switch {
	case errors.As(err, &apiErr):
		status, msg = apiErr.HTTPStatusCode, apiErr.Message
		if status == 0 { // an error object inside the stream
			return m.transient(fmt.Errorf("the server reported an error mid-stream: %s", msg), after, 0)
		}
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
		msg = strings.TrimSpace(string(reqErr.Body))
		if msg == "" && reqErr.Err != nil {
			msg = reqErr.Err.Error()
		}
	case errors.As(err, &se):
		if s := se.status(); s >= 400 && s < 500 && s != 408 && s != 409 && s != 429 {
			return m.permanent(fmt.Errorf("the server refused the request mid-stream (%d): %s", s, se.msg), s)
		}
		return m.transient(se, after, se.status())
	case info.stalled():
		return m.transient(fmt.Errorf("the server sent nothing for %s", m.cfg.StallTimeout), 0, 0)
	case errors.Is(err, context.DeadlineExceeded):
		return m.transient(fmt.Errorf("the request took longer than %s", m.cfg.Timeout), 0, 0)
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, goopenai.ErrTooManyEmptyStreamMessages):
		return m.transient(errors.New("the server sent too many empty stream lines"), 0, 0)
	default:
		if engine.IsRetryable(err) || errors.Is(err, io.EOF) {
			return m.transient(fmt.Errorf("connection: %w", err), after, 0)
		}
		return m.permanent(err, 0)
	}
	line := fmt.Sprintf("%s (HTTP %d): %s", statusWords(status), status, engine.OneLine(msg, maxErrorRunes))
	if status == 408 || status == 409 || status == 429 || status >= 500 {
		return m.transient(errors.New(line), after, status)
	}
	return m.permanent(errors.New(line), status)
}

func statusWords(status int) string {
	switch status {
	case 400:
		return "the server rejected the request"
	case 401:
		return "authentication failed: check OPENAI_API_KEY"
	case 403:
		return "permission denied"
	case 404:
		return "not found: check the model name and --base-url"
	case 408:
		return "request timed out"
	case 409:
		return "conflict"
	case 429:
		return "rate limited"
	}
	if status >= 500 {
		return "server error"
	}
	return "HTTP error"
}

// maxErrorRunes bounds the server's words quoted in an error.
const maxErrorRunes = 300

func (m *Model) redact(err error) error {
	if m.cfg.APIKey == "" || !strings.Contains(err.Error(), m.cfg.APIKey) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), m.cfg.APIKey, "[redacted]"))
}

func (m *Model) transient(err error, after time.Duration, status int) error {
	return &engine.Error{Err: m.redact(err), Retryable: true, RetryAfter: after, Status: status}
}

func (m *Model) permanent(err error, status int) error {
	return &engine.Error{Err: m.redact(err), Status: status}
}

// respInfo is what the transport saw of one request's response: the
// Retry-After go-openai hides, errors reported on lines go-openai skips, and
// whether the stream stalled.
type respInfo struct {
	mu         sync.Mutex
	retryAfter time.Duration
	status     int
	errLine    string
	stall      bool
}

type respInfoKey struct{}

func (i *respInfo) get() (time.Duration, int) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.retryAfter, i.status
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
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
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
		info.mu.Unlock()
	}
	timer.Reset(t.stall)
	if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		// A server that ignored "stream": one JSON answer. It becomes one
		// chunk of a stream, so the rest of the way is the same.
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		timer.Stop()
		cancel()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(asStream(body)))
		resp.Header.Set("Content-Type", "text/event-stream")
		return resp, nil
	}
	resp.Body = &watchBody{rc: resp.Body, timer: timer, stall: t.stall, cancel: cancel, info: info}
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

// watchBody passes the response body through, restarting the stall timer
// on every read and noting "error:" lines.
type watchBody struct {
	rc     io.ReadCloser
	timer  *time.Timer
	stall  time.Duration
	cancel context.CancelFunc
	info   *respInfo
	line   []byte // the unfinished line so far
}

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.stall)
		b.scan(p[:n])
	}
	if err != nil {
		b.timer.Stop()
		if b.info != nil && b.info.stalled() {
			return n, context.DeadlineExceeded
		}
	}
	return n, err
}

// scan looks for lines that start with "error:".
func (b *watchBody) scan(p []byte) {
	if b.info == nil {
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(b.line) < 4096 {
				b.line = append(b.line, p...)
			}
			return
		}
		line := append(b.line, p[:i]...)
		b.line = b.line[:0]
		p = p[i+1:]
		if rest, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("error:")); ok {
			b.info.mu.Lock()
			b.info.errLine = string(bytes.TrimSpace(rest))
			b.info.mu.Unlock()
		}
	}
}

func (b *watchBody) Close() error {
	b.timer.Stop()
	b.cancel()
	return b.rc.Close()
}
