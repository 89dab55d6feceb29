package importer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// codexLine is a line of a Codex rollout: {timestamp, type, payload}, or in
// the older format (before the payload wrapper) the item itself, after a
// first line of the session's {id, timestamp, instructions}.
type codexLine struct {
	Timestamp  string          `json:"timestamp"`
	Type       string          `json:"type"`
	Payload    json.RawMessage `json:"payload"`
	ID         string          `json:"id"`
	RecordType string          `json:"record_type"`
}

// codexItem is a payload: a response item, session_meta, turn_context or
// an event. Fields whose type Codex changed between versions (turn_context's
// summary is a string, a reasoning item's a list) are read raw, where they
// are used, so that no line is refused for a value's type.
type codexItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Summary   json.RawMessage `json:"summary"`
	Action    json.RawMessage `json:"action"`
	ID        string          `json:"id"`
	Cwd       string          `json:"cwd"`
	Model     string          `json:"model"`
	Message   json.RawMessage `json:"message"`
	Info      *struct {
		Total codexUsage  `json:"total_token_usage"`
		Last  *codexUsage `json:"last_token_usage"`
	} `json:"info"`
}

// codexUsage is a token_count's usage.
type codexUsage struct {
	Input     int `json:"input_tokens"`
	Cached    int `json:"cached_input_tokens"`
	Output    int `json:"output_tokens"`
	Reasoning int `json:"reasoning_output_tokens"`
	Total     int `json:"total_tokens"`
}

// ReadCodex reads a Codex rollout's first line (its session: id, folder);
// Import reads its items, a run at a time: messages, reasoning, calls of
// every kind with their outputs, the model of each turn (turn_context) and
// the usage Codex recorded (token_count). A line that cannot be read is a
// note naming it.
func ReadCodex(r io.ReadSeeker, name string) (*Transcript, error) {
	h := sha256.New()
	t := &Transcript{Source: "codex"}
	events := false // the person's messages are events of their own (user_message)
	err := eachLine(io.TeeReader(r, h), name, new([]string), func(n int, b []byte) {
		var l codexLine
		var it codexItem
		if json.Unmarshal(b, &l) != nil {
			return
		}
		switch {
		case n == 1 && l.Type == "" && l.Payload == nil:
			t.ID = l.ID // the older format's first line
		case l.Type == "session_meta" && json.Unmarshal(l.Payload, &it) == nil:
			t.ID, t.Cwd = cmpOr(t.ID, it.ID), cmpOr(t.Cwd, it.Cwd)
		case l.Type == "event_msg" && bytes.Contains(l.Payload, []byte(`"user_message"`)) && json.Unmarshal(l.Payload, &it) == nil:
			events = events || it.Type == "user_message"
		}
	})
	if err != nil {
		return nil, err
	}
	t.Fingerprint = hex.EncodeToString(h.Sum(nil))[:16]
	t.runs = func(ctx context.Context, emit func(*Run) error) error {
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return err
		}
		b := &codexBuilder{t: t, name: name, emit: emit, results: map[string]Result{}, events: events}
		err := eachLine(r, name, &t.Notes, func(n int, line []byte) {
			if b.err == nil && ctx.Err() == nil {
				b.line(n, line)
			}
		})
		if b.preamble > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: %d messages of Codex's instructions and environment (AGENTS.md, <environment_context>) are the agent's context, not the person's words; not imported as messages", name, b.preamble))
		}
		if err = firstErr(err, b.err, ctx.Err()); err != nil {
			return err
		}
		if err := b.flush(); err != nil {
			return err
		}
		return b.flushNext()
	}
	return t, nil
}

// flushNext gives the run of the person's last message, never answered,
// to emit.
func (b *codexBuilder) flushNext() error {
	b.run, b.next = b.next, nil
	return b.flush()
}

// codexBuilder makes runs of a rollout's items as they are read, and gives
// each to emit once the next begins.
type codexBuilder struct {
	t         *Transcript
	name      string
	emit      func(*Run) error
	run       *Run
	next      *Run // the person's last message, until the model answers it
	results   map[string]Result
	reasoning string
	model     string
	total     int // the last token_count's total: Codex repeats one now and then
	preamble  int
	unnamed   int // calls without an id of their own, so far
	// events says the person's messages are user_message events (Codex
	// writes them beside the response items since 2025): then they, not
	// the user items (which hold its instructions and context too), start
	// the runs.
	events bool
	err    error
}

// line takes one line of the rollout.
func (b *codexBuilder) line(n int, raw []byte) {
	var l codexLine
	var it codexItem
	if err := json.Unmarshal(raw, &l); err != nil {
		b.t.Notes = append(b.t.Notes, fmt.Sprintf("%s:%d: not read: not a JSON line: %v", b.name, n, err))
		return
	}
	payload := l.Payload
	if payload == nil {
		payload, l.Type = raw, "response_item" // the older format: the item itself
		if l.RecordType != "" || l.ID != "" && l.Timestamp != "" {
			return // its state records and its first line
		}
	}
	if err := json.Unmarshal(payload, &it); err != nil {
		b.t.Notes = append(b.t.Notes, fmt.Sprintf("%s:%d: not read: %v", b.name, n, err))
		return
	}
	at, _ := time.Parse(time.RFC3339Nano, l.Timestamp)
	switch l.Type {
	case "session_meta":
		b.t.ID, b.t.Cwd = cmpOr(b.t.ID, it.ID), cmpOr(it.Cwd, b.t.Cwd)
		b.model, b.t.Model = cmpOr(b.model, it.Model), cmpOr(b.t.Model, it.Model)
	case "turn_context":
		b.model, b.t.Cwd = cmpOr(it.Model, b.model), cmpOr(it.Cwd, b.t.Cwd)
		b.t.Model = cmpOr(b.t.Model, it.Model)
	case "event_msg":
		switch it.Type {
		case "token_count":
			b.usage(&it)
		case "user_message":
			var text string
			if json.Unmarshal(it.Message, &text) == nil && b.events {
				b.start(text, at)
			}
		}
	case "response_item":
		if err := b.item(&it, at); err != nil {
			b.t.Notes = append(b.t.Notes, fmt.Sprintf("%s:%d: %v", b.name, n, err))
		}
	}
}

// usage adds a token_count's last request to the decision it follows.
func (b *codexBuilder) usage(it *codexItem) {
	if it.Info == nil || it.Info.Total.Total == b.total || b.run == nil || len(b.run.Turns) == 0 {
		return
	}
	b.total = it.Info.Total.Total
	u := it.Info.Last
	if u == nil {
		return
	}
	turn := &b.run.Turns[len(b.run.Turns)-1]
	turn.Usage.Add(engine.Usage{PromptTokens: u.Input, CompletionTokens: u.Output, CachedTokens: u.Cached})
}

// item adds a response item: a person's message starts a run (Codex's own
// preambles are left), the assistant's text and calls make decisions,
// outputs are the calls' results.
func (b *codexBuilder) item(it *codexItem, at time.Time) error {
	switch it.Type {
	case "message":
		text := codexText(it.Content)
		if it.Role == "user" {
			b.prompt(text, at)
			return nil
		}
		if it.Role != "assistant" || text == "" {
			return nil
		}
		turn, err := b.turn(at, true)
		if err != nil {
			return err
		}
		turn.Text += text
	case "reasoning":
		b.reasoning += summaryText(it.Summary)
	case "function_call", "custom_tool_call", "local_shell_call", "web_search_call":
		turn, err := b.turn(at, false)
		if err != nil {
			return err
		}
		call := codexCall(it)
		if call.ID == "" { // a web search has no call id: its own, for its result
			b.unnamed++
			call.ID = fmt.Sprintf("%s_%d", it.Type, b.unnamed)
		}
		turn.Calls = append(turn.Calls, call)
		if it.Type == "web_search_call" { // Codex keeps no results of its searches
			b.results[call.ID] = Result{Text: "(Codex searched the web here; the rollout keeps no results of it)", At: at}
		}
	case "function_call_output", "custom_tool_call_output":
		b.results[it.CallID] = codexOutput(it.Output, at)
	}
	return nil
}

// prompt takes a user item: the person's words start a run (unless they
// come as events); Codex's instructions (AGENTS.md) and environment do not.
func (b *codexBuilder) prompt(text string, at time.Time) {
	trimmed := strings.TrimSpace(text)
	switch {
	case trimmed == "":
	case strings.HasPrefix(trimmed, "<"), strings.HasPrefix(trimmed, "# AGENTS.md instructions for "):
		b.preamble++
	case !b.events:
		b.start(text, at)
	}
}

// start gives the run held to emit and begins the next with task.
func (b *codexBuilder) start(task string, at time.Time) {
	if strings.TrimSpace(task) == "" {
		return
	}
	if b.next != nil { // a message with no answer: its run is the one held now
		if b.err = b.flush(); b.err != nil {
			return
		}
		b.run, b.next = b.next, nil
	}
	// The run held goes on until the model answers this message: an
	// output of its calls may come after the person spoke again.
	b.next = &Run{Task: task, At: at, Model: b.model}
}

// flush gives the run held, if any, to emit, with its calls' results.
func (b *codexBuilder) flush() error {
	if b.run == nil {
		return nil
	}
	run := b.run
	b.run = nil
	run.Results = map[string]Result{}
	for _, t := range run.Turns {
		for _, c := range t.Calls {
			if r, ok := b.results[c.ID]; ok {
				run.Results[c.ID] = r
			}
		}
	}
	clear(b.results) // nothing is held past its run
	b.reasoning = ""
	run.Model = cmpOr(b.model, run.Model)
	return b.emit(run)
}

// turn is the decision an item joins: the run's last, unless a result of
// it came since, or (for a message: text) it has text or calls already,
// then a new one: a response's message comes before its calls. The run the
// person's last message began takes over here (see start).
func (b *codexBuilder) turn(at time.Time, text bool) (*Turn, error) {
	if b.next != nil {
		if b.err = b.flush(); b.err != nil {
			return nil, b.err
		}
		b.run, b.next = b.next, nil
	}
	if b.run == nil {
		return nil, fmt.Errorf("the assistant's item before any message of the person; not imported")
	}
	run := b.run
	if n := len(run.Turns); n == 0 || b.answered(run.Turns[n-1]) || text && (run.Turns[n-1].Text != "" || len(run.Turns[n-1].Calls) > 0) {
		run.Turns = append(run.Turns, Turn{At: at})
	}
	turn := &run.Turns[len(run.Turns)-1]
	turn.Reasoning += b.reasoning // the reasoning that came before the item is its decision's
	b.reasoning = ""
	return turn, nil
}

// answered reports whether any of a turn's calls has its result.
func (b *codexBuilder) answered(turn Turn) bool {
	for _, c := range turn.Calls {
		if _, ok := b.results[c.ID]; ok {
			return true
		}
	}
	return false
}
