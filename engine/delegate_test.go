package engine_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// toolNames are the names of the tools a request offers, and the agents
// its tool agent offers.
func toolNames(req *engine.Request) (names, agents []string) {
	for _, tl := range req.Tools {
		names = append(names, tl.Name)
		if tl.Name == engine.AgentTool {
			var s struct {
				Properties struct {
					Agent struct {
						Enum []string `json:"enum"`
					} `json:"agent"`
				} `json:"properties"`
			}
			json.Unmarshal(tl.Parameters, &s)
			agents = s.Properties.Agent.Enum
		}
	}
	return names, agents
}

// An agent is never offered itself to delegate to, and a call that names
// it anyway runs no sub-run; an agent whose list leaves the tool agent out
// (NoDelegation) is not offered it at all.
func TestDelegationIsAskedFor(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][2][]string{}
	record := func(who string, next engine.Model) engine.Model {
		return enginetest.ModelFunc(func(ctx context.Context, req *engine.Request) (engine.Decision, error) {
			n, a := toolNames(req)
			mu.Lock()
			if _, ok := seen[who]; !ok {
				seen[who] = [2][]string{n, a}
			}
			mu.Unlock()
			return next.Decide(ctx, req)
		})
	}
	lead := record("lead", turnModel(calls(delegation("self", "lead", "again"), delegation("h", "helper", "look")), answer(results)))
	helper := record("helper", turnModel(calls(engine.ToolCall{ID: "e", Name: engine.AgentTool, Args: json.RawMessage(`{"agent":"lead","task":"up"}`)}), answer(results)))
	cfg := engine.Config{Model: lead, Agent: "lead", Tools: enginetest.Registry(t, enginetest.EchoTool()), MaxDepth: 3, Agents: []engine.Agent{
		{Name: "lead", Description: "leads", Model: lead},
		{Name: "helper", Description: "reads", Model: helper, NoDelegation: true},
	}}
	rec, res, _ := runTree(t, cfg, "go")
	if res.StopReason != engine.StopAnswered {
		t.Fatalf("%+v", res)
	}
	if got := seen["lead"][1]; !slices.Equal(got, []string{"helper"}) {
		t.Errorf("lead is offered to delegate to %q; want helper alone", got)
	}
	if got := seen["helper"][0]; slices.Contains(got, engine.AgentTool) {
		t.Errorf("helper, whose list leaves agent out, is offered %q", got)
	}
	runs := map[string]bool{}
	for _, ev := range rec.Events() {
		runs[ev.Run] = true
	}
	for r := range runs {
		if strings.Count(r, "/") > 2 || strings.HasSuffix(r, "/self") {
			t.Errorf("a sub-run that should not be: %s", r)
		}
	}
	if !strings.Contains(res.Answer, "arguments do not match the schema") {
		t.Errorf("the self-call's result: %q", res.Answer)
	}
}
