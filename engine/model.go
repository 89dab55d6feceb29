package engine

import (
	"context"
	"encoding/json"
	"math"
)

// Role is who a message is from.
type Role string

// Message roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a session's history. An assistant message may
// carry tool calls; each is answered by a tool message with its ToolCallID.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
	// Structured is a tool result's structured form (ToolFinished's), for
	// a program that reads the history (a workflow's planner); no model is
	// sent it, and it is not in the message's JSON.
	Structured json.RawMessage `json:"-"`
}

// ToolCall is a model's request to run one tool. Args is the JSON object of
// arguments exactly as the model sent it; it may be invalid JSON, which the
// engine reports back to the model.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Usage counts the tokens of one decision. Estimated is set when the model
// reported none and the counts were estimated from the text.
type Usage struct {
	PromptTokens     int  `json:"prompt_tokens"`
	CompletionTokens int  `json:"completion_tokens"`
	Estimated        bool `json:"estimated,omitempty"`
	// CachedTokens are the prompt tokens the server had cached (priced
	// lower by some).
	CachedTokens int `json:"cached_prompt_tokens,omitempty"`
	// Cost is what the calls cost in US dollars, as the server said or
	// at the model's price; Priced counts the calls whose cost is known
	// and Calls the calls summed (a session's totals; 0 in one call's
	// usage, which is one call). A cost with no price is unknown, never
	// zero (FormatCost).
	Cost   float64 `json:"cost_usd,omitempty"`
	Priced int     `json:"priced,omitempty"`
	Calls  int     `json:"calls,omitempty"`
	// ReplayedCost is what a call that was not made, its decision played
	// from a recording (engine/replay), cost when it was recorded: not
	// spent (Cost stays 0), and counted against a cost budget so that a
	// replay stops where the recording did.
	ReplayedCost float64 `json:"replayed_cost_usd,omitempty"`
}

// Add adds one model call's usage u (or totals) to the totals t.
// Counts saturate at the largest int instead of wrapping.
func (t *Usage) Add(u Usage) {
	t.PromptTokens = addSat(t.PromptTokens, u.PromptTokens)
	t.CompletionTokens = addSat(t.CompletionTokens, u.CompletionTokens)
	t.CachedTokens = addSat(t.CachedTokens, u.CachedTokens)
	t.Cost += u.Cost
	t.ReplayedCost += u.ReplayedCost
	t.Priced += u.Priced
	t.Calls += max(u.Calls, 1)
}

// addSat is a+b for counts of zero or more, at most math.MaxInt.
func addSat(a, b int) int {
	if s := a + b; s >= a || b < 0 {
		return s
	}
	return math.MaxInt
}

// ToolSchema is what a model is told about a tool.
type ToolSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Options are per-request model settings. Zero values mean the model's
// defaults.
type Options struct {
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
}

// Request is what the model is asked to decide on. Messages is a read-only
// view of the session's history after trimming: a Model must not modify or
// keep it after Decide returns.
type Request struct {
	System string `json:"system,omitempty"`
	// Instructions are the project's instructions (AGENTS.md and the
	// like), to be given with the system prompt.
	Instructions string `json:"instructions,omitempty"`
	// Summary stands for the history before Messages, compacted: a model
	// gives it after the system prompt, before the messages.
	Summary  string       `json:"summary,omitempty"`
	Memory   []Fact       `json:"memory,omitempty"`
	Messages []Message    `json:"messages"`
	Tools    []ToolSchema `json:"tools,omitempty"`
	Options  Options      `json:"options"`
	// Turn counts the decisions of this run from 0; a resumed run continues
	// the count.
	Turn int `json:"turn"`
	// Attempt is 1 for the first try of this decision, 2 for the first retry.
	Attempt int `json:"attempt,omitempty"`
	// Session, Run and Step say whose decision this is, for a model that
	// labels its requests (a trace context header, a log line).
	Session string `json:"session,omitempty"`
	Run     string `json:"run,omitempty"`
	Step    int    `json:"step,omitempty"`
	// Summarize is set when the engine asks for a summary of a transcript
	// (compaction): Messages holds it as one user message, and the answer
	// is the summary. No tools are offered.
	// OutputSchema, when set, is the JSON Schema the final answer must
	// meet: a client that can ask the server for structured output does.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Summarize    bool            `json:"summarize,omitempty"`

	delta func(TextDelta)
}

// Delta reports a piece of streamed output. A streaming Model calls it from
// the goroutine that called Decide, before Decide returns.
func (r *Request) Delta(text string, reasoning bool) {
	if r.delta != nil && text != "" {
		r.delta(TextDelta{Text: text, Reasoning: reasoning, Attempt: r.Attempt})
	}
}

// LastUser returns the index of the last user message in Messages, or -1.
func (r *Request) LastUser() int {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == RoleUser {
			return i
		}
	}
	return -1
}

// Decision is a model's answer to a Request: tool calls to run, or, when it
// has none, Text is the final answer.
type Decision struct {
	Text      string
	Reasoning string
	ToolCalls []ToolCall
	Usage     Usage
	// Model is the model that answered, when the server says ("" when
	// not): it may differ from the one asked for (an alias, a router).
	Model string
}

// Model decides the next move. Errors that are worth retrying satisfy
// IsRetryable; all others end the run.
type Model interface {
	Decide(ctx context.Context, req *Request) (Decision, error)
}

// WithDeltas sets the function that receives r's streamed output, for
// calling a Model outside a run (tests, tools); the engine sets its own.
func WithDeltas(r *Request, f func(TextDelta)) *Request {
	r.delta = f
	return r
}

// toolCallJSON is how a ToolCall is written: see splitArgs.
type toolCallJSON struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Args     json.RawMessage `json:"args,omitempty"`
	ArgsText *string         `json:"args_text,omitempty"`
}

// splitArgs writes arguments as JSON when they are JSON, else (a model's
// malformed arguments) as text, so that every event can be journaled and
// read back byte for byte.
func splitArgs(a json.RawMessage) (json.RawMessage, *string) {
	if len(a) == 0 || json.Valid(a) {
		return a, nil
	}
	text := string(a)
	return nil, &text
}

// joinArgs undoes splitArgs.
func joinArgs(raw json.RawMessage, text *string) json.RawMessage {
	if text != nil {
		return json.RawMessage(*text)
	}
	return raw
}

// MarshalJSON implements json.Marshaler.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	j := toolCallJSON{ID: c.ID, Name: c.Name}
	j.Args, j.ArgsText = splitArgs(c.Args)
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *ToolCall) UnmarshalJSON(b []byte) error {
	var j toolCallJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = ToolCall{ID: j.ID, Name: j.Name, Args: joinArgs(j.Args, j.ArgsText)}
	return nil
}

// FullHistory is a Model that reads what it needs from the run's whole
// history (a workflow's planner): its requests are never trimmed or
// compacted. Such a model sends its requests nowhere: its decisions
// have no usage and cost nothing.
type FullHistory interface {
	Model
	FullHistory() bool
}

func wantsFullHistory(m Model) bool {
	f, ok := m.(FullHistory)
	return ok && f.FullHistory()
}
