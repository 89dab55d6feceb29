package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// SchemaVersion is the version of the event format. It is written into every
// event so that a journal written by a newer agentty can be recognised.
const SchemaVersion = 1

// Phase is the part of the loop an event belongs to.
type Phase string

// The four phases of the loop. Events outside any phase (run started and
// finished) leave Phase empty.
const (
	Perceive Phase = "perceive"
	Decide   Phase = "decide"
	Act      Phase = "act"
	Observe  Phase = "observe"
)

// Kind names what an event reports. The names are stable: the journal, the
// --json output and the tests rely on them.
type Kind string

// Event kinds.
const (
	KindRunStarted     Kind = "run_started"
	KindStepStarted    Kind = "step_started"
	KindModelRequest   Kind = "model_request"
	KindTextDelta      Kind = "text_delta"
	KindDecision       Kind = "decision"
	KindToolStarted    Kind = "tool_started"
	KindToolFinished   Kind = "tool_finished"
	KindRetry          Kind = "retry"
	KindMemoryChanged  Kind = "memory_changed"
	KindContextTrimmed Kind = "context_trimmed"
	KindGatePaused     Kind = "gate_paused"
	KindGateResumed    Kind = "gate_resumed"
	KindUsage          Kind = "usage"
	KindStepFinished   Kind = "step_finished"
	KindRunFinished    Kind = "run_finished"
	// KindNotice is not part of a run: the program tells of a problem
	// around it (an MCP server that did not start).
	KindNotice Kind = "notice"
)

// StopReason says why a run ended.
type StopReason string

// Stop reasons of run_finished.
const (
	StopAnswered  StopReason = "answered"
	StopStepLimit StopReason = "step_limit"
	StopCancelled StopReason = "cancelled"
	StopError     StopReason = "error"
)

// Event is one observable thing the engine did. Data holds the payload whose
// type is fixed by Kind (RunStarted for run_started, and so on); an event of a
// kind this version does not know keeps its payload as json.RawMessage.
type Event struct {
	V       int       `json:"v"`
	Session string    `json:"session"`
	Run     string    `json:"run"`
	Step    int       `json:"step"`
	Phase   Phase     `json:"phase,omitempty"`
	Kind    Kind      `json:"kind"`
	Time    time.Time `json:"time"`
	Data    any       `json:"data,omitempty"`
}

// RunStarted is the payload of run_started.
type RunStarted struct {
	Task     string `json:"task"`
	Model    string `json:"model,omitempty"`
	MaxSteps int    `json:"max_steps"`
}

// StepStarted is the payload of step_started. Turn counts the decisions of
// this run from 0.
type StepStarted struct {
	Turn int `json:"turn"`
}

// ModelRequest is the payload of model_request: a summary of what the model
// is about to be asked, not the whole request.
type ModelRequest struct {
	Messages     int `json:"messages"`
	MemoryFacts  int `json:"memory_facts"`
	Tools        int `json:"tools"`
	Tokens       int `json:"tokens"`
	SystemTokens int `json:"system_tokens"`
	MemoryTokens int `json:"memory_tokens"`
	ToolTokens   int `json:"tool_tokens"`
	Budget       int `json:"budget"`
}

// TextDelta is the payload of text_delta: a piece of streamed model output.
// A retry discards the deltas of the attempt before it.
type TextDelta struct {
	Text      string `json:"text"`
	Reasoning bool   `json:"reasoning,omitempty"`
	Attempt   int    `json:"attempt"`
}

// DecisionData is the payload of decision: what the model decided.
type DecisionData struct {
	Text      string     `json:"text,omitempty"`
	Reasoning string     `json:"reasoning,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Attempts  int        `json:"attempts"`
}

// ToolStarted is the payload of tool_started. Args are written as a
// ToolCall's are.
type ToolStarted struct {
	Index int             `json:"index"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Args  json.RawMessage `json:"args,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *ToolStarted) UnmarshalJSON(b []byte) error {
	var j struct {
		Index int `json:"index"`
		toolCallJSON
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = ToolStarted{Index: j.Index, ID: j.ID, Name: j.Name, Args: joinArgs(j.Args, j.ArgsText)}
	return nil
}

// Tool call statuses in ToolFinished.
const (
	ToolOK      = "ok"
	ToolError   = "error"
	ToolSkipped = "skipped"
	ToolDenied  = "denied"
)

// ToolFinished is the payload of tool_finished. Result is what the model
// sees.
//
// Every tool_started is followed by exactly one tool_finished for the same
// call, whatever happens: a call that ran, failed, panicked or timed out,
// and one still running when the run is cancelled or ends in error (status
// error, result "error: cancelled"). A call refused or skipped (by policy,
// by the person, by an abort at the gate) gets one with no tool_started
// before it. Only a call that had not started when its run ended (cancelled
// while the gate waited, or before its turn came) gets none; the session's
// history gives it InterruptedResult.
type ToolFinished struct {
	Index      int    `json:"index"`
	ID         string `json:"id"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	Result     string `json:"result"`
	Error      string `json:"error,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Attempts   int    `json:"attempts"`
}

// RetryData is the payload of retry.
type RetryData struct {
	Op      string `json:"op"`
	Attempt int    `json:"attempt"`
	DelayMS int64  `json:"delay_ms"`
	Cause   string `json:"cause"`
	Status  int    `json:"status,omitempty"`
}

// Memory change operations.
const (
	MemorySet    = "set"
	MemoryDelete = "delete"
)

// MemoryChanged is the payload of memory_changed.
type MemoryChanged struct {
	Op     string `json:"op"`
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Source string `json:"source"`
}

// ContextTrimmed is the payload of context_trimmed: the oldest messages of
// the history no longer fit the budget and are left out of the request.
type ContextTrimmed struct {
	Dropped       int `json:"dropped"`
	DroppedTokens int `json:"dropped_tokens"`
	Kept          int `json:"kept"`
	KeptTokens    int `json:"kept_tokens"`
	Budget        int `json:"budget"`
}

// GatePaused is the payload of gate_paused.
type GatePaused struct {
	At       Phase     `json:"at"`
	Reason   string    `json:"reason"`
	ToolCall *ToolCall `json:"tool_call,omitempty"`
}

// GateResumed is the payload of gate_resumed. Args are the edited
// arguments, if any, written as a ToolCall's are (as text when they are not
// JSON).
type GateResumed struct {
	Action Action          `json:"action"`
	Args   json.RawMessage `json:"args,omitempty"`
}

type gateResumedJSON struct {
	Action   Action          `json:"action"`
	Args     json.RawMessage `json:"args,omitempty"`
	ArgsText *string         `json:"args_text,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (g GateResumed) MarshalJSON() ([]byte, error) {
	j := gateResumedJSON{Action: g.Action}
	j.Args, j.ArgsText = splitArgs(g.Args)
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler.
func (g *GateResumed) UnmarshalJSON(b []byte) error {
	var j gateResumedJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*g = GateResumed{Action: j.Action, Args: joinArgs(j.Args, j.ArgsText)}
	return nil
}

// UsageData is the payload of usage: the tokens of one decision and the
// session's totals.
type UsageData struct {
	Usage
	SessionPrompt     int `json:"session_prompt_tokens"`
	SessionCompletion int `json:"session_completion_tokens"`
}

// StepFinished is the payload of step_finished, the end of a step's observe
// phase: every tool result of the step is in the history.
type StepFinished struct {
	ToolCalls int `json:"tool_calls"`
}

// RunFinished is the payload of run_finished.
type RunFinished struct {
	StopReason StopReason `json:"stop_reason"`
	Answer     string     `json:"answer,omitempty"`
	Error      string     `json:"error,omitempty"`
	Steps      int        `json:"steps"`
}

// Notice is the payload of notice.
type Notice struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

func newPayload(k Kind) any {
	switch k {
	case KindRunStarted:
		return &RunStarted{}
	case KindStepStarted:
		return &StepStarted{}
	case KindModelRequest:
		return &ModelRequest{}
	case KindTextDelta:
		return &TextDelta{}
	case KindDecision:
		return &DecisionData{}
	case KindToolStarted:
		return &ToolStarted{}
	case KindToolFinished:
		return &ToolFinished{}
	case KindRetry:
		return &RetryData{}
	case KindMemoryChanged:
		return &MemoryChanged{}
	case KindContextTrimmed:
		return &ContextTrimmed{}
	case KindGatePaused:
		return &GatePaused{}
	case KindGateResumed:
		return &GateResumed{}
	case KindUsage:
		return &UsageData{}
	case KindStepFinished:
		return &StepFinished{}
	case KindRunFinished:
		return &RunFinished{}
	case KindNotice:
		return &Notice{}
	}
	return nil
}

// UnmarshalJSON decodes an event and its payload into the payload type of its
// kind (always a pointer, as *RunStarted). The payload of an unknown kind is
// kept as json.RawMessage.
func (e *Event) UnmarshalJSON(b []byte) error {
	ev, err := DecodeEvent(b)
	if err != nil {
		return err
	}
	*e = ev
	return nil
}

// DecodeEvent decodes one JSON-encoded event, as UnmarshalJSON does, in one
// pass when it can: the kind is read first, so that the payload is decoded
// straight into its type.
func DecodeEvent(b []byte) (Event, error) {
	type plain Event // no UnmarshalJSON method
	if k, ok := peekKind(b); ok {
		if p := newPayload(k); p != nil {
			ev := plain{Data: p}
			if err := json.Unmarshal(b, &ev); err == nil && ev.Kind == k {
				if ev.Data != p || !bytes.Contains(b, []byte(`"data":`)) { // "data": null, or no data
					ev.Data = nil
				}
				return Event(ev), nil
			}
		}
	}
	// The general way: the envelope, then the payload.
	var raw struct {
		plain
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Event{}, err
	}
	ev := Event(raw.plain)
	ev.Data = nil
	if len(raw.Data) == 0 || string(raw.Data) == "null" {
		return ev, nil
	}
	p := newPayload(ev.Kind)
	if p == nil {
		ev.Data = raw.Data
		return ev, nil
	}
	if err := json.Unmarshal(raw.Data, p); err != nil {
		return Event{}, fmt.Errorf("%s payload: %w", ev.Kind, err)
	}
	ev.Data = p
	return ev, nil
}

var kindKey = []byte(`"kind":"`)

// peekKind finds the value of the first "kind" key, which agentty writes
// before "data". A wrong guess is caught by DecodeEvent.
func peekKind(b []byte) (Kind, bool) {
	i := bytes.Index(b, kindKey)
	if i < 0 {
		return "", false
	}
	rest := b[i+len(kindKey):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return "", false
	}
	return Kind(rest[:j]), true
}

// Known reports whether this version of agentty knows the event's kind.
func (e *Event) Known() bool { return newPayload(e.Kind) != nil }

// Sink receives the events of a run, one at a time, in order, from the run's
// goroutine. An error from Emit ends the run with stop reason error: a journal
// that cannot be written must not be run past.
type Sink interface {
	Emit(Event) error
}

// Flusher is a Sink that may hold events back to write several at once. The
// engine calls Flush whenever it is about to wait — before the model is
// asked, before tools run, before the gate waits, before a retry delay —
// and at the end of each step and of the run, so nothing is held while the
// run waits.
type Flusher interface {
	Sink
	Flush() error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event) error

// Emit calls f.
func (f SinkFunc) Emit(ev Event) error { return f(ev) }

// Sinks sends every event to each sink in order, stopping at the first
// error. The first sink comes first in every sense: put the journal there.
// When it holds events back (a Releaser, such as the journal), the others
// are told of them only when it has written them, at Flush, so that nobody
// learns of an event the journal has not written.
type Sinks []Sink

// Releaser is a Flusher that holds events back until Flush, and then hands
// them on, written, to the sinks after it.
type Releaser interface {
	Flusher
	Release() ([]Event, error)
}

// holds reports whether a sink holds events back until a flush.
func holds(k Sink) bool {
	switch k := k.(type) {
	case Sinks:
		return len(k) > 0 && holds(k[0])
	case Releaser:
		return true
	}
	return false
}

// Emit implements Sink.
func (s Sinks) Emit(ev Event) error {
	if len(s) > 0 && holds(s[0]) {
		return s[0].Emit(ev) // the others hear of it at Flush
	}
	for _, k := range s {
		if k == nil {
			continue
		}
		if err := k.Emit(ev); err != nil {
			return err
		}
	}
	return nil
}

// Flush implements Flusher.
func (s Sinks) Flush() error {
	_, err := s.Release()
	return err
}

// Release implements Releaser: the first sink writes what it held, the
// others are told of it, and the events are handed on.
func (s Sinks) Release() ([]Event, error) {
	if len(s) == 0 || !holds(s[0]) {
		return nil, flushAll(s)
	}
	released, err := s[0].(Releaser).Release()
	if err != nil {
		return nil, err
	}
	for _, ev := range released {
		for _, k := range s[1:] {
			if k == nil {
				continue
			}
			if err := k.Emit(ev); err != nil {
				return nil, err
			}
		}
	}
	return released, flushAll(s[1:])
}

func flushAll(s []Sink) error {
	for _, k := range s {
		if f, ok := k.(Flusher); ok {
			if err := f.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// AppendJSON appends the event as JSON, as MarshalJSON writes it, without
// reflection on the envelope: the journal encodes every event.
func (e Event) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(e.V), 10)
	b = append(b, `,"session":`...)
	b = appendString(b, e.Session)
	b = append(b, `,"run":`...)
	b = appendString(b, e.Run)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(e.Step), 10)
	if e.Phase != "" {
		b = append(b, `,"phase":`...)
		b = appendString(b, string(e.Phase))
	}
	b = append(b, `,"kind":`...)
	b = appendString(b, string(e.Kind))
	b = append(b, `,"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if pa, ok := e.Data.(payloadAppender); ok {
		b = append(b, `,"data":`...)
		return append(pa.appendJSON(b), '}'), nil
	}
	if e.Data != nil {
		data, err := json.Marshal(e.Data)
		if err != nil {
			return b, err
		}
		if string(data) != "null" {
			b = append(b, `,"data":`...)
			b = append(b, data...)
		}
	}
	return append(b, '}'), nil
}

// MarshalJSON writes the event with its payload under "data".
func (e Event) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil) }
