// Package script is a model that plays decisions from a JSON file, for tests
// and demos:
//
//	{"turns":[{"tool_calls":[{"name":"calculator","arguments":{"expression":"2+2"}}]},
//	          {"answer":"4","delay_ms":200}]}
//
// Turn i answers the run's decision i, so a resumed run picks up where it
// stopped. A turn may also fail: "error" with "fail_attempts" (how many
// attempts fail before the turn succeeds; 0 means every attempt),
// "retryable" and "retry_after_ms".
package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// Turn is one scripted decision.
type Turn struct {
	ToolCalls []Call `json:"tool_calls,omitempty"`
	Answer    string `json:"answer,omitempty"`
	// Stream delivers the answer word by word as text deltas.
	Stream  bool `json:"stream,omitempty"`
	DelayMS int  `json:"delay_ms,omitempty"`

	Error        string `json:"error,omitempty"`
	FailAttempts int    `json:"fail_attempts,omitempty"`
	Retryable    bool   `json:"retryable,omitempty"`
	RetryAfterMS int    `json:"retry_after_ms,omitempty"`
}

// Call is a scripted tool call. Arguments may be any JSON value; a string is
// sent as it is, which lets a script send malformed arguments.
type Call struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Script is the file's content.
type Script struct {
	Turns []Turn `json:"turns"`
	// Summary answers a summary call (compaction); without it a summary
	// call fails, and the engine trims the history instead.
	Summary string `json:"summary,omitempty"`
}

// Model plays a Script. It is safe for concurrent use: it keeps no state of
// its own.
type Model struct {
	name   string
	script Script
}

var _ engine.Model = (*Model)(nil)

// Load reads a script file.
func Load(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	return Parse(path, b)
}

// Parse reads a script from b; name is used in errors.
func Parse(name string, b []byte) (*Model, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	for i, t := range s.Turns {
		if t.Answer == "" && len(t.ToolCalls) == 0 && t.Error == "" {
			return nil, fmt.Errorf("script %s: turn %d has neither answer, tool_calls nor error", name, i)
		}
		for j, c := range t.ToolCalls {
			if c.Name == "" {
				return nil, fmt.Errorf("script %s: turn %d, tool call %d has no name", name, i, j)
			}
		}
	}
	return &Model{name: name, script: s}, nil
}

// Decide plays turn req.Turn.
func (m *Model) Decide(ctx context.Context, req *engine.Request) (engine.Decision, error) {
	if req.Summarize {
		if m.script.Summary == "" {
			return engine.Decision{}, engine.Permanent(fmt.Errorf("script %s: no summary for a summary call (add \"summary\")", m.name))
		}
		return engine.Decision{Text: m.script.Summary}, nil
	}
	if req.Turn >= len(m.script.Turns) {
		return engine.Decision{}, engine.Permanent(fmt.Errorf("script %s: out of turns at decision %d (it has %d)", m.name, req.Turn+1, len(m.script.Turns)))
	}
	t := m.script.Turns[req.Turn]
	if t.DelayMS > 0 {
		timer := time.NewTimer(time.Duration(t.DelayMS) * time.Millisecond)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return engine.Decision{}, ctx.Err()
		}
	}
	if t.Error != "" && (t.FailAttempts == 0 || req.Attempt <= t.FailAttempts) {
		err := errors.New(t.Error)
		if t.Retryable {
			return engine.Decision{}, engine.Transient(err, time.Duration(t.RetryAfterMS)*time.Millisecond)
		}
		return engine.Decision{}, engine.Permanent(err)
	}
	var d engine.Decision
	for i, c := range t.ToolCalls {
		args := []byte(c.Arguments)
		var s string
		if json.Unmarshal(args, &s) == nil {
			args = []byte(s)
		}
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", req.Turn, i)
		}
		d.ToolCalls = append(d.ToolCalls, engine.ToolCall{ID: id, Name: c.Name, Args: args})
	}
	if len(d.ToolCalls) == 0 {
		d.Text = t.Answer
		if t.Stream {
			for _, w := range strings.SplitAfter(t.Answer, " ") {
				req.Delta(w, false)
			}
		}
	}
	return d, nil
}
