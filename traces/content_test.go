package traces_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/traces"
)

// TestChatSpansCarryWhatTheyWereAsked: with content on, each chat span
// has the run's messages so far (the task, the earlier decisions and tool
// results) and the system prompt as the conventions' attributes; with it
// off, neither. The second decision's input holds the first's call and
// its result, and an answer rejected by the output schema is a message
// too, and an event of the run.
func TestChatSpansCarryWhatTheyWereAsked(t *testing.T) {
	cfg := scriptConfig(t, `{"turns":[
		{"tool_calls":[{"name":"echo","arguments":{"text":"order A-1002"}}]},
		{"answer":"not json"},
		{"answer":"{\"category\":\"shipping\"}"}]}`)
	cfg.System = "You triage support messages."
	cfg.OutputSchema = json.RawMessage(`{"type":"object","required":["category"]}`)
	r := runTask(t, context.Background(), cfg, "Where is order A-1002?", traces.Options{Content: true})
	chats := named(t, r.spans, "chat script:test")
	if len(chats) != 3 {
		t.Fatalf("%d chat spans", len(chats))
	}
	for i, c := range chats {
		in := attrs(c)[traces.KeyInputMessages].AsString()
		var msgs []struct {
			Role  string `json:"role"`
			Parts []struct {
				Type, Content, Response string
			} `json:"parts"`
		}
		if err := json.Unmarshal([]byte(in), &msgs); err != nil {
			t.Fatalf("chat %d: input messages %q: %v", i, in, err)
		}
		if wantN := []int{1, 3, 5}[i]; len(msgs) != wantN || msgs[0].Role != "user" || msgs[0].Parts[0].Content != "Where is order A-1002?" {
			t.Errorf("chat %d: %d messages, want %d: %s", i, len(msgs), wantN, in)
		}
		if i == 1 && (msgs[1].Role != "assistant" || msgs[2].Role != "tool" || msgs[2].Parts[0].Response != "echo: order A-1002") {
			t.Errorf("chat 1: the call and its result are not there: %s", in)
		}
		if i == 2 && (msgs[4].Role != "user" || !strings.Contains(msgs[4].Parts[0].Content, "category")) {
			t.Errorf("chat 2: the rejection is not there: %s", in)
		}
		if sys := attrs(c)[traces.KeySystemInstruct].AsString(); !strings.Contains(sys, "You triage support messages.") || !json.Valid([]byte(sys)) {
			t.Errorf("chat %d: system instructions %q", i, sys)
		}
	}
	root := named(t, r.spans, "invoke_agent agentty")[0]
	if ev := root.Events(); !hasEvent(ev, traces.EventAnswerRejected) {
		t.Errorf("no answer_rejected event on the run: %v", ev)
	}
	off := runTask(t, context.Background(), cfg, "Where is order A-1002?", traces.Options{})
	absent(t, named(t, off.spans, "chat script:test")[0], traces.KeyInputMessages, traces.KeySystemInstruct)
}

func hasEvent(evs []sdktrace.Event, name string) bool {
	for _, e := range evs {
		if e.Name == name {
			return true
		}
	}
	return false
}

// TestGuardrailStopIsAnError: a run a guardrail stopped ends its span with
// error status, error.type guardrail and an event naming the guardrail; a
// run that answered stays unset.
func TestGuardrailStopIsAnError(t *testing.T) {
	cfg := scriptConfig(t, `{"turns":[{"answer":"We will refund you in full."}]}`)
	cfg.Agent = "triage"
	cfg.Agents = []engine.Agent{{Name: "triage", Description: "triage", Guardrails: engine.Guardrails{
		Output: []engine.Guardrail{{Name: "no-refund-promise", Pattern: regexp.MustCompile(`(?i)refund`)}}}}}
	r := runTask(t, context.Background(), cfg, "my order is late", traces.Options{})
	if r.res.StopReason != engine.StopGuardrail {
		t.Fatalf("the run: %+v", r.res)
	}
	root := named(t, r.spans, "invoke_agent triage")[0]
	if st := root.Status(); st.Code != codes.Error || st.Description != "guardrail no-refund-promise stopped the run" {
		t.Errorf("status %+v: without content, the guardrail's name and not the text it quotes", st)
	}
	with := runTask(t, context.Background(), cfg, "my order is late", traces.Options{Content: true})
	if st := named(t, with.spans, "invoke_agent triage")[0].Status(); !strings.Contains(st.Description, "the text matches") {
		t.Errorf("status with content %+v: the guardrail's reason", st)
	}
	want(t, root, traces.KeyErrorType.String("guardrail"), traces.KeyStopReason.String("guardrail"))
	found := false
	for _, e := range root.Events() {
		for _, kv := range e.Attributes {
			found = found || (e.Name == traces.EventGuardrail && kv.Key == traces.KeyGuardrailName && kv.Value.AsString() == "no-refund-promise")
		}
	}
	if !found {
		t.Errorf("no guardrail event naming no-refund-promise: %v", root.Events())
	}
	ok := runTask(t, context.Background(), scriptConfig(t, `{"turns":[{"answer":"fine"}]}`), "hi", traces.Options{})
	if st := named(t, ok.spans, "invoke_agent agentty")[0].Status(); st.Code != codes.Unset {
		t.Errorf("an answered run: %+v", st)
	}
}

// TestWorkflowSpansAreNamed: a workflow's run is an invoke_workflow span
// named by the workflow, each step's call is named by its step, and the
// step's sub-run carries the workflow and the step.
func TestWorkflowSpansAreNamed(t *testing.T) {
	sink, sr := recorder(traces.Options{})
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	emit := func(ev engine.Event) {
		ev.Session, ev.Workflow, at = "s-1", "triage-all", at.Add(time.Millisecond)
		ev.Time = at
		if ev.Run == "" {
			ev.Run = "run-1"
		}
		sink.Emit(ev)
	}
	emit(engine.Event{Kind: engine.KindRunStarted, Data: &engine.RunStarted{Task: "triage"}})
	emit(engine.Event{Kind: engine.KindWorkflowStarted, Data: &engine.WorkflowStarted{Name: "triage-all", Steps: []string{"classify"}}})
	emit(engine.Event{Kind: engine.KindToolStarted, Step: 1, WorkflowStep: "classify", Data: &engine.ToolStarted{ID: "wf-classify-1-0", Name: "agent"}})
	emit(engine.Event{Kind: engine.KindRunStarted, Run: "run-1/1/wf-classify-1-0", ParentRun: "run-1", ParentCall: "wf-classify-1-0", WorkflowStep: "classify", Data: &engine.RunStarted{Task: "one"}})
	emit(engine.Event{Kind: engine.KindRunFinished, Run: "run-1/1/wf-classify-1-0", ParentRun: "run-1", WorkflowStep: "classify", Data: &engine.RunFinished{StopReason: engine.StopAnswered}})
	emit(engine.Event{Kind: engine.KindToolFinished, Step: 1, WorkflowStep: "classify", Data: &engine.ToolFinished{ID: "wf-classify-1-0", Name: "agent", Status: engine.ToolOK}})
	emit(engine.Event{Kind: engine.KindRunFinished, Data: &engine.RunFinished{StopReason: engine.StopAnswered}})
	sink.Close()
	spans := sr.Ended()
	want(t, named(t, spans, "invoke_workflow triage-all")[0], traces.KeyOperationName.String("invoke_workflow"), traces.KeyAgentName.String("triage-all"))
	want(t, named(t, spans, "execute_tool agent [classify]")[0], traces.KeyWorkflowStep.String("classify"))
	want(t, named(t, spans, "invoke_agent agentty")[0], traces.KeyWorkflowName.String("triage-all"), traces.KeyWorkflowStep.String("classify"))
}

// TestInputMessagesAreBounded: a task of 200 KiB and a hundred tool results
// of 2 KiB give input messages of at most 64 KiB, valid JSON, the oldest
// left out and counted, the task clipped.
func TestInputMessagesAreBounded(t *testing.T) {
	sink, sr := recorder(traces.Options{Content: true})
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	emit := func(step int, kind engine.Kind, data any) {
		at = at.Add(time.Millisecond)
		sink.Emit(engine.Event{Session: "s-1", Run: "run-1", Step: step, Kind: kind, Time: at, Data: data})
	}
	emit(0, engine.KindRunStarted, &engine.RunStarted{Task: strings.Repeat("t", 200<<10)})
	for step := 1; step <= 101; step++ {
		emit(step, engine.KindModelRequest, &engine.ModelRequest{})
		if step == 101 {
			emit(step, engine.KindDecision, &engine.Decided{Text: "done"})
			break
		}
		emit(step, engine.KindDecision, &engine.Decided{ToolCalls: []engine.ToolCall{{ID: "c", Name: "echo", Args: json.RawMessage(`{}`)}}})
		emit(step, engine.KindToolFinished, &engine.ToolFinished{ID: "c", Name: "echo", Status: engine.ToolOK, Result: strings.Repeat("r", 2<<10)})
		emit(step, engine.KindStepFinished, &engine.StepFinished{ToolCalls: 1})
	}
	emit(101, engine.KindRunFinished, &engine.RunFinished{StopReason: engine.StopAnswered, Answer: "done"})
	sink.Close()
	chats := named(t, sr.Ended(), "chat")
	first, last := attrs(chats[0]), attrs(chats[len(chats)-1])
	if in := first[traces.KeyInputMessages].AsString(); len(in) > 64<<10 || !json.Valid([]byte(in)) || !strings.Contains(in, "ttt") {
		t.Errorf("the first request's messages: %d bytes, valid %v", len(in), json.Valid([]byte(in)))
	}
	in := last[traces.KeyInputMessages].AsString()
	if len(in) > 64<<10 || !json.Valid([]byte(in)) || last[traces.KeyDroppedMessages].AsInt64() == 0 {
		t.Errorf("the last request's messages: %d bytes, valid %v, %d left out", len(in), json.Valid([]byte(in)), last[traces.KeyDroppedMessages].AsInt64())
	}
}

// TestResponseModel: a decision that says which model answered gives its
// chat span gen_ai.response.model; one that does not, none.
func TestResponseModel(t *testing.T) {
	sink, sr := recorder(traces.Options{})
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	emit := func(step int, kind engine.Kind, data any) {
		at = at.Add(time.Millisecond)
		sink.Emit(engine.Event{Session: "s-1", Run: "run-1", Step: step, Kind: kind, Time: at, Data: data})
	}
	emit(0, engine.KindRunStarted, &engine.RunStarted{Task: "hi", Model: "gpt-4o"})
	emit(1, engine.KindModelRequest, &engine.ModelRequest{})
	emit(1, engine.KindDecision, &engine.Decided{Text: "hello", Model: "gpt-4o-2024-08-06"})
	emit(1, engine.KindRunFinished, &engine.RunFinished{StopReason: engine.StopAnswered, Answer: "hello"})
	sink.Close()
	want(t, named(t, sr.Ended(), "chat gpt-4o")[0], traces.KeyRequestModel.String("gpt-4o"), traces.KeyResponseModel.String("gpt-4o-2024-08-06"))
	off := runTask(t, context.Background(), scriptConfig(t, `{"turns":[{"answer":"fine"}]}`), "hi", traces.Options{})
	absent(t, named(t, off.spans, "chat script:test")[0], traces.KeyResponseModel)
}
