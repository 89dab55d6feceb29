package traces_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/engine/script"
	"github.com/agentty/agentty/tools"
	"github.com/agentty/agentty/traces"
)

// recorder is a sink into an in-memory span recorder.
func recorder(opt traces.Options) (*traces.Sink, *tracetest.SpanRecorder) {
	sr := tracetest.NewSpanRecorder()
	return traces.NewSink(opt, sr), sr
}

// journal keeps every event as the journal writes it.
type journal struct{ lines [][]byte }

func (j *journal) Emit(ev engine.Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	j.lines = append(j.lines, b)
	return nil
}

// replay sends a journal's events to a new sink, as sessions trace does.
func replay(t *testing.T, j *journal, opt traces.Options) []sdktrace.ReadOnlySpan {
	t.Helper()
	sink, sr := recorder(opt)
	for _, b := range j.lines {
		ev, err := engine.DecodeEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := sink.Emit(ev); err != nil {
			t.Fatal(err)
		}
	}
	sink.Close()
	return sr.Ended()
}

type run struct {
	spans   []sdktrace.ReadOnlySpan
	journal *journal
	res     engine.Result
}

func runTask(t *testing.T, ctx context.Context, cfg engine.Config, task string, opt traces.Options, more ...engine.Sink) run {
	t.Helper()
	sink, sr := recorder(opt)
	j := &journal{}
	e := engine.New(cfg)
	res := e.Run(ctx, engine.NewSession("s-1"), task, append(engine.Sinks{j, sink}, more...))
	sink.Close()
	return run{sr.Ended(), j, res}
}

func offlineConfig(t *testing.T) engine.Config {
	return engine.Config{Model: offline.Model{}, ModelName: "offline", Tools: enginetest.Registry(t, tools.Builtins()...)}
}

func scriptConfig(t *testing.T, js string, tl ...engine.Tool) engine.Config {
	m, err := script.Parse("test", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if len(tl) == 0 {
		tl = []engine.Tool{enginetest.EchoTool()}
	}
	return engine.Config{Model: m, ModelName: "script:test", Tools: enginetest.Registry(t, tl...),
		Retry: engine.Retry{Initial: time.Millisecond, Max: time.Millisecond}}
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func named(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	t.Helper()
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no span %q in %v", name, names(spans))
	}
	return out
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var n []string
	for _, s := range spans {
		n = append(n, s.Name())
	}
	return n
}

// want checks attributes one by one.
func want(t *testing.T, s sdktrace.ReadOnlySpan, kv ...attribute.KeyValue) {
	t.Helper()
	a := attrs(s)
	for _, w := range kv {
		got, ok := a[w.Key]
		if !ok {
			t.Errorf("%s: no %s (has %v)", s.Name(), w.Key, s.Attributes())
			continue
		}
		if got.Emit() != w.Value.Emit() {
			t.Errorf("%s: %s = %s, want %s", s.Name(), w.Key, got.Emit(), w.Value.Emit())
		}
	}
}

func absent(t *testing.T, s sdktrace.ReadOnlySpan, keys ...attribute.Key) {
	t.Helper()
	a := attrs(s)
	for _, k := range keys {
		if v, ok := a[k]; ok {
			t.Errorf("%s: %s = %s, want none", s.Name(), k, v.Emit())
		}
	}
}

func TestOfflineCalculatorRun(t *testing.T) {
	r := runTask(t, context.Background(), offlineConfig(t), "what is 17*23?", traces.Options{})
	if r.res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %s %v", r.res.StopReason, r.res.Err)
	}
	if got := names(r.spans); !slices.Equal(got, []string{"chat offline", "execute_tool calculator", "chat offline", "invoke_agent agentty"}) {
		t.Fatalf("spans (in the order they ended) = %q", got)
	}
	root := named(t, r.spans, "invoke_agent agentty")[0]
	want(t, root,
		traces.KeyOperationName.String("invoke_agent"),
		traces.KeyAgentName.String("agentty"),
		traces.KeyConversationID.String("s-1"),
		traces.KeyStopReason.String("answered"),
		traces.KeySteps.Int(2),
		traces.KeyRequestModel.String("offline"))
	if root.Parent().IsValid() || root.SpanKind() != trace.SpanKindInternal || root.Status().Code != codes.Unset {
		t.Errorf("root: parent %v, kind %v, status %v", root.Parent(), root.SpanKind(), root.Status())
	}
	if root.SpanContext().TraceID() != traces.TraceID("s-1", r.res.RunID) || root.SpanContext().SpanID() != traces.RunSpanID("s-1", r.res.RunID) {
		t.Errorf("root ids are not derived: %v", root.SpanContext())
	}
	chats := named(t, r.spans, "chat offline")
	for i, c := range chats {
		if c.SpanKind() != trace.SpanKindClient || c.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("chat %d: kind %v, parent %v", i, c.SpanKind(), c.Parent())
		}
		want(t, c,
			traces.KeyOperationName.String("chat"),
			traces.KeyProviderName.String("agentty"),
			traces.KeyRequestModel.String("offline"),
			traces.KeyAttempts.Int(1))
		if _, ok := attrs(c)[traces.KeyInputTokens]; !ok {
			t.Errorf("chat %d has no input tokens", i)
		}
		if _, ok := attrs(c)[traces.KeyOutputTokens]; !ok {
			t.Errorf("chat %d has no output tokens", i)
		}
		if c.EndTime().Before(c.StartTime()) || c.StartTime().Before(root.StartTime()) || c.EndTime().After(root.EndTime()) {
			t.Errorf("chat %d times %v..%v outside the run's %v..%v", i, c.StartTime(), c.EndTime(), root.StartTime(), root.EndTime())
		}
	}
	want(t, chats[0], traces.KeyFinishReasons.StringSlice([]string{"tool_calls"}))
	want(t, chats[1], traces.KeyFinishReasons.StringSlice([]string{"stop"}))
	tool := named(t, r.spans, "execute_tool calculator")[0]
	want(t, tool,
		traces.KeyOperationName.String("execute_tool"),
		traces.KeyToolName.String("calculator"),
		traces.KeyToolType.String("function"),
		traces.KeyToolStatus.String("ok"))
	if id, ok := attrs(tool)[traces.KeyToolCallID]; !ok || id.AsString() == "" {
		t.Errorf("tool has no call id")
	}
	if tool.Parent().SpanID() != root.SpanContext().SpanID() || tool.Status().Code != codes.Unset {
		t.Errorf("tool: parent %v, status %v", tool.Parent(), tool.Status())
	}
	if !tool.StartTime().After(chats[0].StartTime()) || tool.StartTime().Before(chats[0].EndTime()) {
		t.Errorf("tool starts at %v, the decision was %v..%v", tool.StartTime(), chats[0].StartTime(), chats[0].EndTime())
	}
	for _, s := range r.spans {
		absent(t, s, traces.KeyInputMessages, traces.KeyOutputMessages, traces.KeyToolArguments, traces.KeyToolResult)
		if s.SpanContext().TraceID() != root.SpanContext().TraceID() {
			t.Errorf("%s is in another trace", s.Name())
		}
	}
}

func TestContentOnlyWhenAsked(t *testing.T) {
	r := runTask(t, context.Background(), offlineConfig(t), "what is 17*23?", traces.Options{Content: true})
	root := named(t, r.spans, "invoke_agent agentty")[0]
	a := attrs(root)
	if v := a[traces.KeyInputMessages].AsString(); !json.Valid([]byte(v)) || !contains(v, "17*23") {
		t.Errorf("run input messages = %q", v)
	}
	if v := a[traces.KeyOutputMessages].AsString(); !contains(v, "391") {
		t.Errorf("run output messages = %q", v)
	}
	tool := attrs(named(t, r.spans, "execute_tool calculator")[0])
	if !contains(tool[traces.KeyToolArguments].AsString(), "17") || !contains(tool[traces.KeyToolResult].AsString(), "391") {
		t.Errorf("tool content: %v", tool)
	}
	chat := attrs(named(t, r.spans, "chat offline")[0])
	if !contains(chat[traces.KeyOutputMessages].AsString(), "tool_call") {
		t.Errorf("chat output messages = %q", chat[traces.KeyOutputMessages].AsString())
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestRetriedDecision(t *testing.T) {
	cfg := scriptConfig(t, `{"turns":[{"answer":"fine","error":"overloaded","retryable":true,"fail_attempts":2,"retry_after_ms":1}]}`)
	r := runTask(t, context.Background(), cfg, "hi", traces.Options{})
	if r.res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %s %v", r.res.StopReason, r.res.Err)
	}
	chat := named(t, r.spans, "chat script:test")[0]
	want(t, chat, traces.KeyAttempts.Int(3), traces.KeyFinishReasons.StringSlice([]string{"stop"}))
	if chat.Status().Code != codes.Unset {
		t.Errorf("status %v", chat.Status())
	}
	evs := chat.Events()
	if len(evs) != 2 {
		t.Fatalf("chat events = %v, want two retries", evs)
	}
	for i, e := range evs {
		if e.Name != "retry" {
			t.Errorf("event %d = %q", i, e.Name)
		}
		m := map[attribute.Key]attribute.Value{}
		for _, kv := range e.Attributes {
			m[kv.Key] = kv.Value
		}
		if m[traces.KeyRetryAttempt].AsInt64() != int64(i+2) || m[traces.KeyRetryCause].AsString() == "" || m[traces.KeyRetryOp].AsString() != "model" {
			t.Errorf("retry %d: %v", i, e.Attributes)
		}
		if _, ok := m[traces.KeyRetryDelayMS]; !ok {
			t.Errorf("retry %d has no delay", i)
		}
	}
}

func TestFailedDecision(t *testing.T) {
	cfg := scriptConfig(t, `{"turns":[{"error":"bad request"}]}`)
	r := runTask(t, context.Background(), cfg, "hi", traces.Options{})
	if r.res.StopReason != engine.StopError {
		t.Fatalf("run: %s %v", r.res.StopReason, r.res.Err)
	}
	chat := named(t, r.spans, "chat script:test")[0]
	root := named(t, r.spans, "invoke_agent agentty")[0]
	if chat.Status().Code != codes.Error || root.Status().Code != codes.Error {
		t.Errorf("status chat %v, run %v", chat.Status(), root.Status())
	}
	want(t, root, traces.KeyStopReason.String("error"))
	want(t, chat, traces.KeyErrorType.String("_OTHER"))
}

func TestFailedTool(t *testing.T) {
	r := runTask(t, context.Background(), offlineConfig(t), "what is 1/0", traces.Options{})
	tool := named(t, r.spans, "execute_tool calculator")[0]
	want(t, tool, traces.KeyToolStatus.String("error"), traces.KeyErrorType.String("tool_error"))
	if tool.Status().Code != codes.Error || !contains(tool.Status().Description, "division by zero") {
		t.Errorf("status %v", tool.Status())
	}
	root := named(t, r.spans, "invoke_agent agentty")[0]
	if root.Status().Code != codes.Unset {
		t.Errorf("a failed tool failed the run: %v", root.Status())
	}
}

func TestMCPToolIsAnExtension(t *testing.T) {
	if traces.ToolType("github__search") != "extension" || traces.ToolType("calculator") != "function" {
		t.Fatal("tool types")
	}
}

func TestCancelledRun(t *testing.T) {
	cfg := scriptConfig(t, `{"turns":[{"answer":"late","delay_ms":600000}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := engine.SinkFunc(func(ev engine.Event) error {
		if ev.Kind == engine.KindModelRequest {
			cancel()
		}
		return nil
	})
	r := runTask(t, ctx, cfg, "hi", traces.Options{}, stop)
	if r.res.StopReason != engine.StopCancelled {
		t.Fatalf("run: %s %v", r.res.StopReason, r.res.Err)
	}
	root := named(t, r.spans, "invoke_agent agentty")[0]
	want(t, root, traces.KeyStopReason.String("cancelled"), traces.KeySteps.Int(0))
	if root.Status().Code == codes.Error {
		t.Errorf("a cancelled run is not an error: %v", root.Status())
	}
	chat := named(t, r.spans, "chat script:test")[0]
	want(t, chat, traces.KeyErrorType.String("cancelled"))
	if chat.Status().Code != codes.Error {
		t.Errorf("the cut-off decision's status %v", chat.Status())
	}
	absent(t, chat, traces.KeyFinishReasons)
}

func TestMemoryAndGateAreSpanEvents(t *testing.T) {
	r := runTask(t, context.Background(), offlineConfig(t), "remember that my name is Ada", traces.Options{})
	root := named(t, r.spans, "invoke_agent agentty")[0]
	var got []string
	for _, e := range root.Events() {
		got = append(got, e.Name)
		if e.Name == "memory_changed" {
			for _, kv := range e.Attributes {
				if kv.Key == traces.KeyMemoryValue {
					t.Errorf("memory value without content: %v", kv.Value.Emit())
				}
			}
		}
	}
	if !slices.Contains(got, "memory_changed") {
		t.Errorf("run events = %v", got)
	}
}

// TestReplayGivesTheSameIDs: a run exported live and its journal exported
// afterwards are the same spans, ids, times and attributes.
func TestReplayGivesTheSameIDs(t *testing.T) {
	for _, task := range []string{"what is 17*23?", "what is 1/0", "remember that my name is Ada"} {
		r := runTask(t, context.Background(), offlineConfig(t), task, traces.Options{Content: true})
		again := replay(t, r.journal, traces.Options{Content: true})
		if len(again) != len(r.spans) {
			t.Fatalf("%s: %d spans live, %d replayed", task, len(r.spans), len(again))
		}
		for i := range again {
			a, b := r.spans[i], again[i]
			if a.Name() != b.Name() || !a.SpanContext().Equal(b.SpanContext()) || !a.Parent().Equal(b.Parent()) ||
				!a.StartTime().Equal(b.StartTime()) || !a.EndTime().Equal(b.EndTime()) || a.Status() != b.Status() {
				t.Errorf("%s: span %d live %s %v %v..%v, replayed %s %v %v..%v", task, i,
					a.Name(), a.SpanContext(), a.StartTime(), a.EndTime(), b.Name(), b.SpanContext(), b.StartTime(), b.EndTime())
			}
			if !slices.Equal(a.Attributes(), b.Attributes()) {
				t.Errorf("%s: span %s attributes differ:\n%v\n%v", task, a.Name(), a.Attributes(), b.Attributes())
			}
		}
	}
}

// TestInterruptedRun: a journal whose run never finished (the process died)
// is exported with the run's spans ended at its last event, marked.
func TestInterruptedRun(t *testing.T) {
	r := runTask(t, context.Background(), offlineConfig(t), "what is 17*23?", traces.Options{})
	cut := &journal{}
	for _, b := range r.journal.lines {
		ev, _ := engine.DecodeEvent(b)
		if ev.Kind == engine.KindToolFinished {
			break
		}
		cut.lines = append(cut.lines, b)
	}
	spans := replay(t, cut, traces.Options{})
	if got := names(spans); !slices.Equal(got, []string{"chat offline", "execute_tool calculator", "invoke_agent agentty"}) {
		t.Fatalf("spans = %q", got)
	}
	want(t, spans[2], traces.KeyInterrupted.Bool(true))
	want(t, spans[1], traces.KeyErrorType.String("interrupted"))
	if spans[2].SpanContext().SpanID() != r.spans[len(r.spans)-1].SpanContext().SpanID() {
		t.Error("the interrupted run's span is not the run's")
	}
}

func TestSampler(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if s, err := traces.SamplerFromEnv(env(nil)); s != nil || err != nil {
		t.Errorf("unset: %v %v", s, err)
	}
	off, err := traces.SamplerFromEnv(env(map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_always_off"}))
	if err != nil {
		t.Fatal(err)
	}
	r := runTask(t, context.Background(), offlineConfig(t), "what is 17*23?", traces.Options{Sampler: off})
	if len(r.spans) != 0 {
		t.Errorf("always_off sent %q", names(r.spans))
	}
	for _, bad := range []map[string]string{{"OTEL_TRACES_SAMPLER": "jaeger_remote"}, {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}} {
		if _, err := traces.SamplerFromEnv(env(bad)); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestStartPicksTheProtocol(t *testing.T) {
	for _, c := range []struct {
		env map[string]string
		ok  bool
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "localhost:4318"}, false},
	} {
		cfg := traces.Config{Getenv: func(k string) string { return c.env[k] }}
		if !cfg.Enabled() {
			t.Errorf("%v: not enabled", c.env)
		}
		tr, err := traces.Start(context.Background(), cfg)
		if (err == nil) != c.ok {
			t.Errorf("%v: %v", c.env, err)
		}
		if tr != nil {
			if err := tr.Close(); err != nil { // nothing to send: no connection made
				t.Errorf("%v: close: %v", c.env, err)
			}
		}
	}
	if (traces.Config{Getenv: func(string) string { return "" }}).Enabled() {
		t.Error("enabled with nothing set")
	}
}

// TestContinuedRunKeepsItsTrace: a run cut by a crash and continued (by
// another process, which is told of the run's run_started) gives its
// spans the same trace, the same run span and the run's own start.
func TestContinuedRunKeepsItsTrace(t *testing.T) {
	r := runTask(t, context.Background(), offlineConfig(t), "what is 17*23?", traces.Options{})
	var first, rest []engine.Event
	cut := false
	for _, b := range r.journal.lines {
		ev, _ := engine.DecodeEvent(b)
		if ev.Kind == engine.KindToolFinished {
			cut = true
		}
		if !cut {
			first = append(first, ev)
		} else {
			rest = append(rest, ev)
		}
	}
	sink, sr := recorder(traces.Options{})
	sink.Emit(first[0]) // run_started, from the journal
	for _, ev := range rest {
		sink.Emit(ev)
	}
	sink.Close()
	spans := sr.Ended()
	root := spans[len(spans)-1]
	live := r.spans[len(r.spans)-1]
	if root.Name() != "invoke_agent agentty" || !root.SpanContext().Equal(live.SpanContext()) || !root.StartTime().Equal(live.StartTime()) {
		t.Errorf("continued run span %s %v from %v; the run's was %v from %v", root.Name(), root.SpanContext(), root.StartTime(), live.SpanContext(), live.StartTime())
	}
	for _, s := range spans {
		if s.SpanContext().TraceID() != live.SpanContext().TraceID() {
			t.Errorf("%s left the trace", s.Name())
		}
	}
}

// TestSubRunsNestUnderTheirCall: a delegation's sub-run is an invoke_agent
// span named for its agent, in the top-level run's trace, under the
// execute_tool agent span of the call that started it; its own chat and
// tool spans are under it. A journal replayed gives the same tree.
func TestSubRunsNestUnderTheirCall(t *testing.T) {
	cfg := offlineConfig(t)
	var calc []engine.Tool
	for _, tl := range cfg.Tools.Tools() {
		if tl.Name == "calculator" {
			calc = append(calc, tl)
		}
	}
	cfg.Agents = []engine.Agent{{Name: "calc", Description: "does arithmetic", Tools: enginetest.Registry(t, calc...)}}
	r := runTask(t, context.Background(), cfg, "ask the calc agent to what is 17*23", traces.Options{})
	if r.res.StopReason != engine.StopAnswered || !strings.Contains(r.res.Answer, "391") {
		t.Fatalf("run: %+v", r.res)
	}
	for _, spans := range [][]sdktrace.ReadOnlySpan{r.spans, replay(t, r.journal, traces.Options{})} {
		top := named(t, spans, "invoke_agent agentty")[0]
		sub := named(t, spans, "invoke_agent calc")[0]
		call := named(t, spans, "execute_tool agent")[0]
		calcTool := named(t, spans, "execute_tool calculator")[0]
		if call.Parent().SpanID() != top.SpanContext().SpanID() {
			t.Errorf("the agent call is not under the run")
		}
		if sub.SpanContext().TraceID() != top.SpanContext().TraceID() || sub.Parent().SpanID() != call.SpanContext().SpanID() {
			t.Errorf("sub-run span %v under %v; want trace %v under the call %v", sub.SpanContext(), sub.Parent(), top.SpanContext().TraceID(), call.SpanContext())
		}
		if calcTool.Parent().SpanID() != sub.SpanContext().SpanID() || calcTool.SpanContext().TraceID() != top.SpanContext().TraceID() {
			t.Errorf("the sub-run's tool call is not under the sub-run")
		}
		want(t, sub, traces.KeyAgentName.String("calc"), traces.KeyParentRunID.String("run-1"))
	}
}

// hookOnce is hooks that deny every call, said by a hook named guard.
type hookOnce struct{}

func (hookOnce) RunHooks(_ context.Context, in *engine.HookInput) []engine.HookRun {
	if in.Event != engine.HookPreToolUse {
		return nil
	}
	return []engine.HookRun{{Event: in.Event, Command: "guard", Call: in.Call.ID, Tool: in.Call.Name, Exit: 2, Decision: engine.HookDeny, Reason: "no"}}
}

// TestHooksAreSpanEvents: each hook's run is an event of the run's span,
// with what it decided.
func TestHooksAreSpanEvents(t *testing.T) {
	cfg := offlineConfig(t)
	cfg.Hooks = hookOnce{}
	r := runTask(t, context.Background(), cfg, "what is 17*23?", traces.Options{})
	root := named(t, r.spans, "invoke_agent agentty")[0]
	for _, e := range root.Events() {
		if e.Name != traces.EventHook {
			continue
		}
		got := map[attribute.Key]string{}
		for _, kv := range e.Attributes {
			got[kv.Key] = kv.Value.Emit()
		}
		if got[traces.KeyHookEvent] != "PreToolUse" || got[traces.KeyHookDecision] != "deny" || got[traces.KeyHookExit] != "2" || got[traces.KeyToolName] != "calculator" {
			t.Errorf("hook event: %v", got)
		}
		return
	}
	t.Error("no hook event on the run's span")
}
