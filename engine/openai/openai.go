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
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentty/agentty/engine"
)

// Defaults used where Config leaves a field zero.
const (
	DefaultTimeout      = 10 * time.Minute
	DefaultStallTimeout = 90 * time.Second
	// DefaultMaxAnswerBytes bounds one answer: its text, reasoning and
	// tool calls' arguments together.
	DefaultMaxAnswerBytes = 4 << 20
)

// Config sets up a Model.
type Config struct {
	// Model is the model name the server knows, as gpt-4o-mini or
	// qwen2.5-coder:7b.
	Model string
	// NoStructuredOutput leaves response_format out of a request with an
	// output schema, for a server that refuses it (the answer is still
	// validated).
	NoStructuredOutput bool
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
	// StallTimeout bounds the time before the answer's first part and
	// between parts (default 90 s): a stalled server is retried. Only
	// text, reasoning, tool calls and the answer's end count as parts;
	// keep-alive comments and empty deltas do not.
	StallTimeout time.Duration
	// MaxAnswerBytes bounds an answer (DefaultMaxAnswerBytes when 0): text,
	// reasoning and tool calls' arguments together. A larger one ends the
	// decision with an error, not retried.
	MaxAnswerBytes int
	// Transport is the HTTP transport; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Headers, when set, gives headers to add to the request for one
	// decision, such as a W3C traceparent that lets a proxy join the trace.
	Headers func(*engine.Request) http.Header
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
	if cfg.MaxAnswerBytes <= 0 {
		cfg.MaxAnswerBytes = DefaultMaxAnswerBytes
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
	c.HTTPClient = &http.Client{Transport: &transport{base: base, stall: cfg.StallTimeout, maxLine: cfg.MaxAnswerBytes + 64<<10}}
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
	if m.cfg.Headers != nil {
		ctx = context.WithValue(ctx, headersKey{}, m.cfg.Headers(req))
	}
	stream, err := m.client.CreateChatCompletionStream(ctx, m.request(req))
	if err != nil && !m.noUsageOption.Load() && refusedStreamOptions(err) {
		m.noUsageOption.Store(true)
		stream, err = m.client.CreateChatCompletionStream(ctx, m.request(req))
	}
	if err != nil {
		return engine.Decision{}, m.classify(err, info)
	}
	defer stream.Close()
	acc := accumulator{max: m.cfg.MaxAnswerBytes, progress: info.progress}
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
	d, err := acc.decision()
	if err == nil && d.Text != "" && req.OutputSchema != nil && !m.cfg.NoStructuredOutput {
		if _, wrapped := responseSchema(req.OutputSchema); wrapped {
			d.Text = unwrapAnswer(d.Text) // asked for inside {"answer": …}
		}
	}
	return d, err
}

// request builds the chat-completions request.
func (m *Model) request(req *engine.Request) goopenai.ChatCompletionRequest {
	msgs := make([]goopenai.ChatCompletionMessage, 0, len(req.Messages)+1)
	if sys := systemText(req); sys != "" {
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: sys})
	}
	if req.Summary != "" {
		// A user message, not a system one: the summary is made from
		// tool results, which are someone else's text.
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, Content: SummaryHeading + req.Summary})
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
	if req.OutputSchema != nil && !m.cfg.NoStructuredOutput {
		schema, _ := responseSchema(req.OutputSchema)
		r.ResponseFormat = &goopenai.ChatCompletionResponseFormat{Type: goopenai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &goopenai.ChatCompletionResponseFormatJSONSchema{Name: "answer", Schema: schema}}
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

// SummaryHeading begins the message that carries the summary of compacted
// history, after the system prompt.
const SummaryHeading = "Summary of the earlier conversation (its messages are left out to save context):\n\n"

// InstructionsHeading begins the project instructions in the system prompt.
const InstructionsHeading = "\n\n# Project instructions\n\n"

// systemText is the system prompt with the project instructions and the
// memory facts after it.
func systemText(req *engine.Request) string {
	if len(req.Memory) == 0 && req.Instructions == "" {
		return req.System
	}
	var b strings.Builder
	b.WriteString(req.System)
	if req.Instructions != "" {
		b.WriteString(InstructionsHeading)
		b.WriteString(req.Instructions)
	}
	if len(req.Memory) == 0 {
		return strings.TrimLeft(b.String(), "\n")
	}
	b.WriteString("\n\nFacts you were asked to remember (key: value):\n")
	for _, f := range req.Memory {
		fmt.Fprintf(&b, "- %s: %s\n", f.Key, f.Value)
	}
	return strings.TrimLeft(b.String(), "\n")
}
