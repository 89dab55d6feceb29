// Package traces turns agentty's event stream into OpenTelemetry spans
// following the GenAI semantic conventions (semconv.go): a run is an
// invoke_agent span, each decision a chat span (CLIENT), each tool call an
// execute_tool span. The spans take their times from the events and their
// ids from the events' ids, so a journal exported after the fact gives the
// same trace as the run exported live.
//
// The Sink is an engine.Sink like the journal and the console: nothing in
// the engine calls tracing. It never fails a run.
package traces

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentty/agentty/engine"
)

// Options shape the spans.
type Options struct {
	// Content adds what was said and done: the task and the answer, tool
	// arguments and results, the decisions' text and tool calls, memory
	// values, edited arguments. Off by default. Keys are never in events,
	// so never in spans.
	Content bool
	// Agent names the agent (gen_ai.agent.name); "agentty" when empty.
	Agent string
	// Provider is gen_ai.provider.name; when empty, ProviderOf the model
	// named in run_started.
	Provider string
	// Model is the model when a run's events do not name it (a run
	// continued without its run_started).
	Model string
}

// ProviderOf names the provider of a model as agentty picks it: the
// built-in models are agentty's, any other name is spoken to as OpenAI's API.
func ProviderOf(model string) string {
	if model == "offline" || strings.HasPrefix(model, "script:") {
		return "agentty"
	}
	return "openai"
}

// Sink makes spans of the events it is given. One Sink may serve many runs
// and sessions at once. Emit never returns an error.
type Sink struct {
	tracer trace.Tracer
	opt    Options
	mu     sync.Mutex
	runs   map[runKey]*runState
}

var _ engine.Sink = (*Sink)(nil)

type runKey struct{ session, run string }

type runState struct {
	key   runKey
	trace trace.TraceID
	ctx   context.Context // holds the run's span
	span  trace.Span
	model string

	chat      trace.Span // the decision of the current step, if open
	chatStep  int
	decidedAt time.Time // when the decision came, if the chat span waits for its usage
	decided   bool
	tools     []toolSpan // the current step's open tool calls
	last      time.Time  // of the run's latest event
}

type toolSpan struct {
	index int
	name  string
	span  trace.Span
}

// NewSink returns a Sink starting spans with tracer, which must come from a
// TracerProvider using IDGenerator (NewProvider) for the ids to be derived.
func NewSink(tracer trace.Tracer, opt Options) *Sink {
	if opt.Agent == "" {
		opt.Agent = defaultAgentName
	}
	return &Sink{tracer: tracer, opt: opt, runs: map[runKey]*runState{}}
}

// Emit implements engine.Sink.
func (s *Sink) Emit(ev engine.Event) error {
	if ev.Run == "" || ev.Kind == engine.KindNotice {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := runKey{ev.Session, ev.Run}
	r := s.runs[k]
	if r == nil {
		r = s.startRun(k, ev)
		s.runs[k] = r
	}
	r.last = ev.Time
	if r.decided && ev.Kind != engine.KindUsage {
		r.endChat(r.decidedAt)
	}
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		// the run's span was started above with its attributes
	case *engine.ModelRequest:
		s.startChat(r, ev)
	case *engine.Decided:
		s.decided(r, ev, d)
	case *engine.UsageRecorded:
		if r.chat != nil {
			r.chat.SetAttributes(KeyInputTokens.Int(d.PromptTokens), KeyOutputTokens.Int(d.CompletionTokens))
			if d.Estimated {
				r.chat.SetAttributes(KeyUsageEstimated.Bool(true))
			}
			r.endChat(r.decidedAt)
		}
	case *engine.RetryScheduled:
		s.retry(r, ev, d)
	case *engine.ToolStarted:
		s.toolStarted(r, ev, d)
	case *engine.ToolFinished:
		s.toolFinished(r, ev, d)
	case *engine.GatePaused:
		attrs := []attribute.KeyValue{KeyGateAt.String(string(d.At)), KeyGateReason.String(string(d.Reason))}
		if d.ToolCall != nil {
			attrs = append(attrs, KeyToolName.String(d.ToolCall.Name), KeyToolCallID.String(d.ToolCall.ID))
			if s.opt.Content {
				attrs = append(attrs, KeyToolArguments.String(string(d.ToolCall.Args)))
			}
		}
		r.span.AddEvent(EventGatePaused, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
	case *engine.GateResumed:
		attrs := []attribute.KeyValue{KeyGateAction.String(string(d.Action))}
		if s.opt.Content && len(d.Args) > 0 {
			attrs = append(attrs, KeyToolArguments.String(string(d.Args)))
		}
		r.span.AddEvent(EventGateResumed, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
	case *engine.MemoryChanged:
		attrs := []attribute.KeyValue{KeyMemoryOp.String(string(d.Op)), KeyMemoryKey.String(d.Key), KeyMemorySource.String(d.Source)}
		if s.opt.Content && d.Op == engine.MemorySet {
			attrs = append(attrs, KeyMemoryValue.String(d.Value))
		}
		r.span.AddEvent(EventMemoryChanged, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
	case *engine.ContextTrimmed:
		r.span.AddEvent(EventContextTrimmed, trace.WithTimestamp(ev.Time), trace.WithAttributes(
			KeyTrimmedMessages.Int(d.Dropped), KeyTrimmedTokens.Int(d.DroppedTokens)))
	case *engine.StepFinished:
		r.endTools(ev.Time, "", "")
	case *engine.RunFinished:
		s.finishRun(r, ev, d)
		delete(s.runs, k)
	}
	return nil
}

// Close ends the spans of runs that have not finished (a journal of a run
// interrupted by a crash, a console closed mid-run) at their latest event,
// marked interrupted, so that they are exported.
func (s *Sink) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, r := range s.runs {
		if r.decided {
			r.endChat(r.decidedAt)
		}
		r.endChat(r.last)
		r.endTools(r.last, "interrupted", "the run was interrupted")
		r.span.SetAttributes(KeyInterrupted.Bool(true))
		r.span.End(trace.WithTimestamp(r.last))
		delete(s.runs, k)
	}
}

func (s *Sink) startRun(k runKey, ev engine.Event) *runState {
	r := &runState{key: k, trace: TraceID(k.session, k.run), model: s.opt.Model}
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs,
		KeyOperationName.String(OpInvokeAgent),
		KeyAgentName.String(s.opt.Agent),
		KeyConversationID.String(k.session),
		KeyRunID.String(k.run))
	if d, ok := ev.Data.(*engine.RunStarted); ok {
		if d.Model != "" {
			r.model = d.Model
		}
		if s.opt.Content {
			attrs = append(attrs, KeyInputMessages.String(messages("user", d.Task)))
		}
	}
	if r.model != "" {
		attrs = append(attrs, KeyRequestModel.String(r.model))
	}
	ctx := withIDs(context.Background(), r.trace, RunSpanID(k.session, k.run))
	r.ctx, r.span = s.tracer.Start(ctx, OpInvokeAgent+" "+s.opt.Agent,
		trace.WithTimestamp(ev.Time), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return r
}

func (s *Sink) provider(r *runState) string {
	if s.opt.Provider != "" {
		return s.opt.Provider
	}
	return ProviderOf(r.model)
}

func (s *Sink) startChat(r *runState, ev engine.Event) {
	if r.chat != nil {
		r.endChat(ev.Time)
	}
	name := OpChat
	if r.model != "" {
		name += " " + r.model
	}
	ctx := withIDs(r.ctx, r.trace, ChatSpanID(r.key.session, r.key.run, ev.Step))
	_, r.chat = s.tracer.Start(ctx, name, trace.WithTimestamp(ev.Time), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			KeyOperationName.String(OpChat),
			KeyProviderName.String(s.provider(r)),
			KeyRequestModel.String(r.model),
			KeyConversationID.String(r.key.session),
			KeyStep.Int(ev.Step)))
	r.chatStep = ev.Step
}

func (s *Sink) decided(r *runState, ev engine.Event, d *engine.Decided) {
	if r.chat == nil || r.chatStep != ev.Step {
		s.startChat(r, ev)
	}
	reason := FinishStop
	if len(d.ToolCalls) > 0 {
		reason = FinishToolCalls
	}
	r.chat.SetAttributes(KeyFinishReasons.StringSlice([]string{reason}), KeyAttempts.Int(d.Attempts))
	if s.opt.Content {
		r.chat.SetAttributes(KeyOutputMessages.String(decisionMessages(d, reason)))
	}
	r.decided, r.decidedAt = true, ev.Time
}

func (r *runState) endChat(t time.Time) {
	if r.chat != nil {
		r.chat.End(trace.WithTimestamp(t))
	}
	r.chat, r.decided = nil, false
}

func (s *Sink) retry(r *runState, ev engine.Event, d *engine.RetryScheduled) {
	attrs := []attribute.KeyValue{KeyRetryOp.String(d.Op), KeyRetryAttempt.Int(d.Attempt),
		KeyRetryDelayMS.Int64(d.DelayMS), KeyRetryCause.String(d.Cause)}
	if d.Status != 0 {
		attrs = append(attrs, KeyRetryStatus.Int(d.Status))
	}
	span := r.span
	if d.Op == "model" && r.chat != nil {
		span = r.chat
	} else if name, ok := strings.CutPrefix(d.Op, "tool:"); ok {
		for _, t := range r.tools {
			if t.name == name {
				span = t.span
				break
			}
		}
	}
	span.AddEvent(EventRetry, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
}

// ToolType is gen_ai.tool.type: "extension" for an MCP tool (server__tool),
// "function" for the rest.
func ToolType(name string) string {
	if strings.Contains(name, "__") {
		return ToolTypeExtension
	}
	return ToolTypeFunction
}

func (s *Sink) startTool(r *runState, step, index int, id, name string, args json.RawMessage, t time.Time) trace.Span {
	attrs := []attribute.KeyValue{
		KeyOperationName.String(OpExecuteTool),
		KeyToolName.String(name),
		KeyToolCallID.String(id),
		KeyToolType.String(ToolType(name)),
		KeyStep.Int(step),
	}
	if s.opt.Content && len(args) > 0 {
		attrs = append(attrs, KeyToolArguments.String(string(args)))
	}
	ctx := withIDs(r.ctx, r.trace, ToolSpanID(r.key.session, r.key.run, step, index, id))
	_, span := s.tracer.Start(ctx, OpExecuteTool+" "+name, trace.WithTimestamp(t),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return span
}

func (s *Sink) toolStarted(r *runState, ev engine.Event, d *engine.ToolStarted) {
	span := s.startTool(r, ev.Step, d.Index, d.ID, d.Name, d.Args, ev.Time)
	r.tools = append(r.tools, toolSpan{index: d.Index, name: d.Name, span: span})
}

func (s *Sink) toolFinished(r *runState, ev engine.Event, d *engine.ToolFinished) {
	var span trace.Span
	for i, t := range r.tools {
		if t.index == d.Index {
			span = t.span
			r.tools = append(r.tools[:i], r.tools[i+1:]...)
			break
		}
	}
	if span == nil { // refused or skipped: it never started
		span = s.startTool(r, ev.Step, d.Index, d.ID, d.Name, nil, ev.Time.Add(-time.Duration(d.DurationMS)*time.Millisecond))
	}
	span.SetAttributes(KeyToolStatus.String(string(d.Status)), KeyToolDurationMS.Int64(d.DurationMS), KeyAttempts.Int(d.Attempts))
	if d.Truncated {
		span.SetAttributes(KeyToolTruncated.Bool(true))
	}
	if s.opt.Content {
		span.SetAttributes(KeyToolResult.String(d.Result))
	}
	switch d.Status {
	case engine.ToolError:
		kind := "tool_error"
		if strings.Contains(d.Error, "timed out") || strings.Contains(d.Error, "deadline exceeded") {
			kind = "timeout"
		} else if strings.Contains(d.Error, "cancel") {
			kind = "cancelled"
		}
		span.SetAttributes(KeyErrorType.String(kind))
		span.SetStatus(codes.Error, d.Error)
	case engine.ToolDenied:
		span.SetAttributes(KeyErrorType.String("denied"))
		span.SetStatus(codes.Error, "denied")
	}
	span.End(trace.WithTimestamp(ev.Time))
}

// endTools ends the calls still open (the run ended under them).
func (r *runState) endTools(t time.Time, kind, why string) {
	for _, ts := range r.tools {
		if kind != "" {
			ts.span.SetAttributes(KeyErrorType.String(kind))
			ts.span.SetStatus(codes.Error, why)
		}
		ts.span.End(trace.WithTimestamp(t))
	}
	r.tools = r.tools[:0]
}

func (s *Sink) finishRun(r *runState, ev engine.Event, d *engine.RunFinished) {
	kind, why := "", ""
	switch d.StopReason {
	case engine.StopError:
		kind, why = ErrorTypeOther, d.Error
	case engine.StopCancelled:
		kind, why = "cancelled", "cancelled"
	}
	if r.chat != nil && kind != "" { // the decision did not come
		r.chat.SetAttributes(KeyErrorType.String(kind))
		r.chat.SetStatus(codes.Error, why)
	}
	r.endChat(ev.Time)
	r.endTools(ev.Time, kind, why)
	r.span.SetAttributes(KeyStopReason.String(string(d.StopReason)), KeySteps.Int(d.Steps))
	if s.opt.Content {
		answer := d.Answer
		if answer == "" {
			answer = d.Partial
		}
		if answer != "" {
			r.span.SetAttributes(KeyOutputMessages.String(messages("assistant", answer)))
		}
	}
	if d.StopReason == engine.StopError {
		r.span.SetAttributes(KeyErrorType.String(ErrorTypeOther))
		r.span.SetStatus(codes.Error, d.Error)
	}
	r.span.End(trace.WithTimestamp(ev.Time))
}

// The conventions' message shape (gen_ai.input.messages and
// gen_ai.output.messages), as JSON.
type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

func messages(role, text string) string {
	b, _ := json.Marshal([]message{{Role: role, Parts: []part{{Type: "text", Content: text}}}})
	return string(b)
}

func decisionMessages(d *engine.Decided, reason string) string {
	m := message{Role: "assistant", FinishReason: reason}
	if d.Text != "" {
		m.Parts = append(m.Parts, part{Type: "text", Content: d.Text})
	}
	for _, c := range d.ToolCalls {
		args := c.Args
		if !json.Valid(args) {
			args, _ = json.Marshal(string(args))
		}
		m.Parts = append(m.Parts, part{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: args})
	}
	b, _ := json.Marshal([]message{m})
	return string(b)
}
