package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// TestPromptJournaledOncePerSession: a run that delegates twice to an
// agent journals each prompt once (its own and the agent's), not at every
// step of every sub-run; a second run of the session journals none again.
func TestPromptJournaledOncePerSession(t *testing.T) {
	m := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		if req.System == "You help." { // the agent: two steps, then an answer
			if req.Turn < 2 {
				return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "e", Name: "echo", Args: json.RawMessage(`{"text":"x"}`)}}}, nil
			}
			return engine.Decision{Text: "helped"}, nil
		}
		if req.Turn < 2 {
			return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "a", Name: engine.AgentTool, Args: json.RawMessage(`{"agent":"helper","task":"help"}`)}}}, nil
		}
		return engine.Decision{Text: "done"}, nil
	})
	e := engine.New(engine.Config{Model: m, System: "You lead.", Tools: enginetest.Registry(t, enginetest.EchoTool()),
		Agents: []engine.Agent{{Name: "helper", Description: "helps", System: "You help."}}})
	rec := &enginetest.Recorder{}
	s := engine.NewSession("s")
	for _, task := range []string{"go", "again"} {
		if res := e.Run(context.Background(), s, task, rec); res.StopReason != engine.StopAnswered {
			t.Fatalf("%s: %+v", task, res)
		}
	}
	seen := map[engine.Hash]int{}
	for _, ev := range rec.Of(engine.KindPrompt) {
		seen[ev.Data.(*engine.Prompt).Hash]++
	}
	if len(seen) != 2 {
		t.Errorf("%d prompts journaled, want 2 (the lead's and the helper's): %v", len(seen), seen)
	}
	for h, n := range seen {
		if n != 1 {
			t.Errorf("prompt %d journaled %d times", h, n)
		}
	}
}
