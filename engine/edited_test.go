package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// A call whose arguments the person edits at its pause is, in the next
// request, the call as it ran (the edited arguments), its result noting
// the edit; a session folded again from the journal says the same.
func TestEditedCallIsWhatTheModelSeesNext(t *testing.T) {
	var second *engine.Request
	model := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		if req.Turn == 0 {
			return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c1", Name: "echo", Args: json.RawMessage(`{"text":"as sent"}`)}}}, nil
		}
		cp := *req
		cp.Messages = append([]engine.Message(nil), req.Messages...)
		second = &cp
		return engine.Decision{Text: "done"}, nil
	})
	gate := gateFunc(func(p engine.Pending) engine.Verdict {
		if p.ToolCall != nil {
			return engine.Verdict{Action: engine.Proceed, Args: json.RawMessage(`{"text":"as edited"}`)}
		}
		return engine.Verdict{Action: engine.Proceed}
	})
	e := engine.New(engine.Config{Model: model, Gate: gate, Tools: enginetest.Registry(t, enginetest.EchoTool())})
	rec := &enginetest.Recorder{}
	s := engine.NewSession("s")
	if res := e.Run(context.Background(), s, "go", rec); res.StopReason != engine.StopAnswered {
		t.Fatalf("%+v", res)
	}
	check := func(what string, msgs []engine.Message) {
		var call, result string
		for _, m := range msgs {
			for _, c := range m.ToolCalls {
				call = string(c.Args)
			}
			if m.Role == engine.RoleTool {
				result = m.Content
			}
		}
		if call != `{"text":"as edited"}` || !strings.Contains(result, "as edited") || !strings.HasSuffix(result, engine.EditedNote) {
			t.Errorf("%s: the call %s, its result %q", what, call, result)
		}
	}
	check("the next request", second.Messages)
	folded := engine.NewSession("s")
	for _, ev := range rec.Events() {
		if err := folded.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	check("the session folded from the journal", folded.History)
	for _, ev := range rec.Of(engine.KindDecision) {
		if c := ev.Data.(*engine.Decided).ToolCalls; len(c) > 0 && string(c[0].Args) != `{"text":"as sent"}` {
			t.Errorf("the decision's event was changed: %s", c[0].Args)
		}
	}
}
