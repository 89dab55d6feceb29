// Package traces turns agentty's event stream into OpenTelemetry spans
// following the GenAI semantic conventions (semconv.go): a run is an
// invoke_agent span, each decision a chat span (CLIENT), each tool call an
// execute_tool span. The spans take their times from the events and their
// ids from the events' ids, so a journal exported after the fact gives the
// same trace as the run exported live.
//
// The Sink is an engine.Sink like the journal and the console: nothing in
// the engine calls tracing. It never fails or holds up a run: it notes what
// the events say, and hands each span, once complete, to the SDK's span
// processors as a finished span (the batching processor queues it, bounded,
// dropping it when the queue is full).
package traces

import (
	"cmp"
	"context"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
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
	// Resource is the spans' resource (service name and the like).
	Resource *resource.Resource
	// Metrics, when set, records the GenAI client metrics of the runs
	// (live runs only).
	Metrics *Metrics
	// Replay says the events come from a journal (sessions trace): no
	// metrics are recorded, the runs having been counted when they ran.
	Replay bool
	// Sampler decides, once per run, whether the run's trace is sent
	// (SamplerFromEnv); nil sends every run.
	Sampler sdktrace.Sampler
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
// and sessions at once. Emit never returns an error. Close it to have every
// span handed to the SDK.
type Sink struct {
	procs []sdktrace.SpanProcessor
	opt   Options

	mu        sync.Mutex
	runs      map[runKey]*runState
	ended     map[runKey]bool        // runs whose span was sent (the latest maxEnded)
	toolNames map[string]string      // tool → "execute_tool tool"
	systems   map[engine.Hash]string // prompt hash → gen_ai.system_instructions (Content)
	sent      int64                  // spans handed to the processors
	priming   bool                   // Prime is feeding the journal: spans that end are not sent
}

var _ engine.Sink = (*Sink)(nil)

type runKey struct{ session, run string }

type runState struct {
	key      runKey
	run      *span
	model    string
	chatName string
	chat     *span   // the decision of the current step, if open
	tools    []*span // the current step's open tool calls
	last     time.Time
	dropped  bool         // not sampled
	local    bool         // the latest request went to no model (a workflow's planner)
	conv     conversation // the run's messages (Options.Content)
}

// NewSink returns a Sink handing its spans to procs: a batching processor
// with an exporter, or the SDK's in-memory recorder in tests.
func NewSink(opt Options, procs ...sdktrace.SpanProcessor) *Sink {
	if opt.Agent == "" {
		opt.Agent = defaultAgentName
	}
	if opt.Resource == nil {
		opt.Resource = resource.Empty()
	}
	return &Sink{procs: procs, opt: opt, runs: map[runKey]*runState{}, ended: map[runKey]bool{}, toolNames: map[string]string{}, systems: map[engine.Hash]string{}}
}

// maxEnded bounds the runs a Sink remembers as ended.
const maxEnded = 4096

// Emit implements engine.Sink.
func (s *Sink) Emit(ev engine.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emit(ev)
	return nil
}

// emit makes the spans of ev; s.mu is held.
func (s *Sink) emit(ev engine.Event) {
	if ev.Run == "" || ev.Kind == engine.KindNotice {
		return
	}
	k := runKey{ev.Session, ev.Run}
	r := s.run(k, ev)
	if r == nil {
		return
	}
	r.last = ev.Time
	if r.chat != nil && r.chat.finished && ev.Kind != engine.KindUsage {
		s.endChat(r, r.chat.end)
	}
	s.converse(r, ev)
	switch d := ev.Data.(type) {
	case *engine.ModelRequest:
		if r.local = d.Local; !r.local { // a workflow's planner calls no model: no chat span
			s.startChat(r, ev)
			s.asked(r, d)
		}
	case *engine.Decided:
		if !r.local {
			s.decided(r, ev, d)
		}
	case *engine.UsageRecorded:
		if s.opt.Metrics != nil && !s.priming { // the journal primed: its process counted them
			s.opt.Metrics.usage(s.provider(r), r.model, d.Usage)
		}
		if c := r.chat; c != nil {
			c.attrs = append(c.attrs, KeyInputTokens.Int(d.PromptTokens), KeyOutputTokens.Int(d.CompletionTokens))
			if d.Estimated {
				c.attrs = append(c.attrs, KeyUsageEstimated.Bool(true))
			}
			if d.Priced > 0 {
				c.attrs = append(c.attrs, KeyCost.Float64(d.Cost))
			}
			if c.finished {
				s.endChat(r, c.end)
			}
		}
	case *engine.RetryScheduled:
		s.retry(r, ev, d)
	case *engine.ToolStarted:
		sp := s.startTool(r, ev.Step, d.Index, d.ID, d.Name, d.Args, ev.Time)
		if ev.WorkflowStep != "" && ev.ParentRun == "" { // a workflow's step
			sp.name += " [" + ev.WorkflowStep + "]"
			sp.attrs = append(sp.attrs, KeyWorkflowStep.String(ev.WorkflowStep))
		}
		r.tools = append(r.tools, sp)
	case *engine.ToolFinished:
		s.toolFinished(r, ev, d)
	case *engine.StepFinished:
		s.endTools(r, ev.Time, "", "")
	case *engine.RunFinished:
		s.finishRun(r, ev, d)
		delete(s.runs, k)
		if len(s.ended) >= maxEnded { // a long-lived sink: what follows an end comes at once
			clear(s.ended)
		}
		s.ended[k] = true
	default:
		s.runEvent(r, ev)
	}
}

// runEvent makes the span events of the run's span; s.mu is held.
func (s *Sink) runEvent(r *runState, ev engine.Event) {
	switch d := ev.Data.(type) {
	case *engine.WorkflowStarted:
		r.workflow(d)
	case *engine.AnswerRejected:
		attrs := []attribute.KeyValue{KeyAttempts.Int(d.Attempt)}
		if s.opt.Content { // the reason may quote the answer
			attrs = append(attrs, KeyRejectReason.String(d.Reason))
		}
		r.run.event(EventAnswerRejected, ev.Time, attrs)
	case *engine.GatePaused:
		attrs := []attribute.KeyValue{KeyGateAt.String(string(d.At)), KeyGateReason.String(string(d.Reason))}
		if d.ToolCall != nil {
			attrs = append(attrs, KeyToolName.String(d.ToolCall.Name), KeyToolCallID.String(d.ToolCall.ID))
			if s.opt.Content {
				attrs = append(attrs, KeyToolArguments.String(string(d.ToolCall.Args)))
			}
		}
		r.run.event(EventGatePaused, ev.Time, attrs)
	case *engine.GateResumed:
		attrs := []attribute.KeyValue{KeyGateAction.String(string(d.Action))}
		if s.opt.Content && len(d.Args) > 0 {
			attrs = append(attrs, KeyToolArguments.String(string(d.Args)))
		}
		r.run.event(EventGateResumed, ev.Time, attrs)
	case *engine.MemoryChanged:
		attrs := []attribute.KeyValue{KeyMemoryOp.String(string(d.Op)), KeyMemoryKey.String(d.Key), KeyMemorySource.String(d.Source)}
		if s.opt.Content && d.Op == engine.MemorySet {
			attrs = append(attrs, KeyMemoryValue.String(d.Value))
		}
		r.run.event(EventMemoryChanged, ev.Time, attrs)
	case *engine.ContextTrimmed:
		r.run.event(EventContextTrimmed, ev.Time, []attribute.KeyValue{
			KeyTrimmedMessages.Int(d.Dropped), KeyTrimmedTokens.Int(d.DroppedTokens)})
	case *engine.HookRun:
		attrs := []attribute.KeyValue{KeyHookEvent.String(string(d.Event)), KeyHookCommand.String(d.Command),
			KeyHookExit.Int(d.Exit), KeyHookDurationMS.Int64(d.DurationMS)}
		if d.Decision != "" {
			attrs = append(attrs, KeyHookDecision.String(d.Decision))
		}
		if d.Tool != "" {
			attrs = append(attrs, KeyToolName.String(d.Tool), KeyToolCallID.String(d.Call))
		}
		r.run.event(EventHook, ev.Time, attrs)
	}
}

// run is the state of ev's run, begun by ev when it is the run's first;
// nil for an event after its run_finished (a workflow's framing ends it):
// the run's span is sent, and another would be a second root. s.mu is held.
func (s *Sink) run(k runKey, ev engine.Event) *runState {
	r := s.runs[k]
	if r == nil && !s.ended[k] {
		r = s.startRun(k, ev)
		s.runs[k] = r
	}
	return r
}

func (s *Sink) send(r *runState, sp *span) {
	if r.dropped || s.priming {
		return
	}
	s.sent++
	for _, p := range s.procs {
		p.OnEnd(sp)
	}
}

// Close ends the spans of runs that have not finished (a journal of a run
// interrupted by a crash, a console closed mid-run) at their latest event,
// marked interrupted.
func (s *Sink) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, r := range s.runs {
		if r.chat != nil {
			end := r.last
			if r.chat.finished {
				end = r.chat.end
			}
			s.endChat(r, end)
		}
		s.endTools(r, r.last, "interrupted", "the run was interrupted")
		r.run.attrs = append(r.run.attrs, KeyInterrupted.Bool(true))
		r.run.end = r.last
		s.send(r, r.run)
		delete(s.runs, k)
	}
}

func (s *Sink) startRun(k runKey, ev engine.Event) *runState {
	r := &runState{key: k, model: s.opt.Model}
	agent := cmp.Or(ev.Agent, s.opt.Agent)
	attrs := make([]attribute.KeyValue, 0, 12)
	attrs = append(attrs,
		KeyOperationName.String(OpInvokeAgent),
		KeyAgentName.String(agent),
		KeyConversationID.String(k.session),
		KeyRunID.String(k.run))
	var parent trace.SpanContext
	if ev.ParentRun != "" {
		// A sub-run: under the call that delegated to it, or, when that
		// call's start was not seen (a continued run), under its run.
		attrs = append(attrs, KeyParentRunID.String(ev.ParentRun), KeyToolCallID.String(ev.ParentCall))
		parent = spanContext(TraceID(k.session, ev.ParentRun), RunSpanID(k.session, ev.ParentRun))
		if p := s.runs[runKey{k.session, ev.ParentRun}]; p != nil {
			for _, t := range p.tools {
				if t.call == ev.ParentCall {
					parent = t.sc
				}
			}
		}
	}
	if ev.WorkflowStep != "" { // a sub-run carrying out a workflow's step
		attrs = append(attrs, KeyWorkflowName.String(ev.Workflow), KeyWorkflowStep.String(ev.WorkflowStep))
	}
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
	r.chatName = OpChat
	if r.model != "" {
		r.chatName += " " + r.model
	}
	r.run = &span{name: OpInvokeAgent + " " + agent, kind: trace.SpanKindInternal, parent: parent,
		sc: spanContext(TraceID(k.session, k.run), RunSpanID(k.session, k.run)), start: ev.Time, attrs: attrs, res: s.opt.Resource}
	if s.opt.Sampler != nil {
		res := s.opt.Sampler.ShouldSample(sdktrace.SamplingParameters{ParentContext: context.Background(),
			TraceID: r.run.sc.TraceID(), Name: r.run.name, Kind: r.run.kind})
		r.dropped = res.Decision != sdktrace.RecordAndSample
	}
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
		s.endChat(r, ev.Time)
	}
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs,
		KeyOperationName.String(OpChat),
		KeyProviderName.String(s.provider(r)),
		KeyRequestModel.String(r.model),
		KeyConversationID.String(r.key.session),
		KeyStep.Int(ev.Step))
	r.chat = &span{name: r.chatName, kind: trace.SpanKindClient, parent: r.run.sc, res: s.opt.Resource,
		sc: spanContext(r.run.sc.TraceID(), ChatSpanID(r.key.session, r.key.run, ev.Step)), start: ev.Time, attrs: attrs, step: ev.Step}
}

func (s *Sink) decided(r *runState, ev engine.Event, d *engine.Decided) {
	if r.chat == nil || r.chat.step != ev.Step {
		s.startChat(r, ev)
	}
	reason, reasons := FinishStop, finishStop
	if len(d.ToolCalls) > 0 {
		reason, reasons = FinishToolCalls, finishToolCalls
	}
	c := r.chat
	c.attrs = append(c.attrs, reasons, KeyAttempts.Int(d.Attempts))
	if d.Model != "" {
		c.attrs = append(c.attrs, KeyResponseModel.String(d.Model))
	}
	if s.opt.Content {
		c.attrs = append(c.attrs, KeyOutputMessages.String(decisionMessages(d, reason)))
	}
	c.finished, c.end = true, ev.Time
}

// The finish reasons, made once: a slice attribute is costly to make.
var (
	finishStop      = KeyFinishReasons.StringSlice([]string{FinishStop})
	finishToolCalls = KeyFinishReasons.StringSlice([]string{FinishToolCalls})
)

func (s *Sink) endChat(r *runState, t time.Time) {
	if c := r.chat; c != nil {
		c.end = t
		if s.opt.Metrics != nil && !s.priming { // the journal primed: its process counted them
			errType := ""
			if c.status.Code == codes.Error {
				errType = ErrorTypeOther
				for _, kv := range c.attrs {
					if kv.Key == KeyErrorType {
						errType = kv.Value.AsString()
					}
				}
			}
			s.opt.Metrics.decision(s.provider(r), r.model, c.end.Sub(c.start), errType)
		}
		s.send(r, c)
	}
	r.chat = nil
}

func (s *Sink) retry(r *runState, ev engine.Event, d *engine.RetryScheduled) {
	attrs := []attribute.KeyValue{KeyRetryOp.String(d.Op), KeyRetryAttempt.Int(d.Attempt),
		KeyRetryDelayMS.Int64(d.DelayMS), KeyRetryCause.String(d.Cause)}
	if d.Status != 0 {
		attrs = append(attrs, KeyRetryStatus.Int(d.Status))
	}
	sp := r.run
	if d.Op == "model" && r.chat != nil {
		sp = r.chat
	} else if name, ok := strings.CutPrefix(d.Op, "tool:"); ok {
		for _, t := range r.tools {
			if t.tool == name {
				sp = t
				break
			}
		}
	}
	sp.event(EventRetry, ev.Time, attrs)
}

func (s *Sink) finishRun(r *runState, ev engine.Event, d *engine.RunFinished) {
	kind, why := "", ""
	switch d.StopReason {
	case engine.StopError:
		kind, why = ErrorTypeOther, d.Error
	case engine.StopCancelled:
		kind, why = "cancelled", "cancelled"
	}
	if c := r.chat; c != nil && !c.finished && kind != "" { // the decision did not come
		c.attrs = append(c.attrs, KeyErrorType.String(kind))
		c.fail(why)
	}
	s.endChat(r, ev.Time)
	s.endTools(r, ev.Time, kind, why)
	run := r.run
	run.attrs = append(run.attrs, KeyStopReason.String(string(d.StopReason)), KeySteps.Int(d.Steps))
	if s.opt.Content {
		answer := d.Answer
		if answer == "" {
			answer = d.Partial
		}
		if answer != "" {
			run.attrs = append(run.attrs, KeyOutputMessages.String(messages("assistant", answer)))
		}
	}
	outcome(run, ev, d, s.opt.Content)
	run.end = ev.Time
	s.send(r, run)
}
