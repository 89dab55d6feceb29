package workflow_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/traces"
	"github.com/agentty/agentty/workflow"
)

// The planner is not a model: a workflow's top-level decisions have no
// usage, cost nothing and make no chat span; what the session spent is
// what its steps' models reported, and the trace has their two calls.
func TestThePlannerCostsNothing(t *testing.T) {
	w := parse(t, `
name: two
steps:
  - id: a
    agent: helper
    task: "one"
  - id: b
    agent: helper
    task: "two: {{ .steps.a.output }}"
`)
	helper := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		return engine.Decision{Text: "done", Usage: engine.Usage{PromptTokens: 100, CompletionTokens: 10}}, nil
	})
	in, _ := w.CheckInputs(nil)
	e := engine.New(engine.Config{Model: workflow.Planner{W: w, Inputs: in}, ModelName: "gpt-4o",
		Agents: []engine.Agent{{Name: "helper", Description: "h", Model: helper, ModelName: "gpt-4o"}}, Tools: enginetest.Registry(t, enginetest.EchoTool())})
	rec := &enginetest.Recorder{}
	sr := tracetest.NewSpanRecorder()
	spans := traces.NewSink(traces.Options{Model: "gpt-4o"}, sr)
	s := engine.NewSession("s")
	res := e.Run(context.Background(), s, "workflow two", engine.Sinks{&workflow.Sink{W: w, Inputs: in, Next: rec}, spans})
	spans.Close()
	if res.StopReason != engine.StopAnswered {
		t.Fatalf("%+v", res)
	}
	for _, ev := range rec.Of(engine.KindUsage) {
		if ev.ParentRun == "" {
			t.Errorf("the planner's decision has a usage: %+v", ev.Data)
		}
	}
	if u := s.Usage; u.Calls != 2 || u.PromptTokens != 200 || u.CompletionTokens != 20 {
		t.Errorf("the session spent %+v; want the steps' two calls", u)
	}
	chats := 0
	for _, sp := range sr.Ended() {
		if strings.HasPrefix(sp.Name(), "chat") {
			chats++
		}
	}
	if chats != 2 {
		t.Errorf("%d chat spans; want the steps' two", chats)
	}
}
