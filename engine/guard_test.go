package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// judged is an agent whose every text is judged by the agent judge.
func judged(name, judge string) engine.Agent {
	return engine.Agent{Name: name, Description: name, System: "You are " + name + ".",
		Guardrails: engine.Guardrails{Input: []engine.Guardrail{{Name: "by-" + judge, Agent: judge}}}}
}

// outputJudged is an agent whose every answer is judged by the agent judge.
func outputJudged(name, judge string) engine.Agent {
	return engine.Agent{Name: name, Description: name, System: "You are " + name + ".",
		Guardrails: engine.Guardrails{Output: []engine.Guardrail{{Name: "by-" + judge, Agent: judge}}}}
}

// Guardrail judges that lead back to their agent are refused when the
// engine is made: asked at run time, alpha's judge beta would ask alpha
// to judge beta's task, without end.
func TestGuardrailCycleRefused(t *testing.T) {
	m := enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
		return engine.Decision{Text: "pass"}, nil
	})
	for name, ags := range map[string][]engine.Agent{
		"two":    {judged("alpha", "beta"), judged("beta", "alpha")},
		"three":  {judged("alpha", "beta"), judged("beta", "gamma"), judged("gamma", "alpha")},
		"output": {outputJudged("alpha", "beta"), outputJudged("beta", "alpha")},
		"mixed":  {judged("alpha", "beta"), outputJudged("beta", "alpha")},
	} {
		e := engine.New(engine.Config{Model: m, Agent: "alpha", Agents: ags})
		if e.Err() == nil || !strings.Contains(e.Err().Error(), "guardrail judges form a cycle") {
			t.Errorf("%s: engine error %v, want a cycle", name, e.Err())
		}
	}
	// A chain that ends is fine, and runs.
	e := engine.New(engine.Config{Model: m, Agent: "alpha", Agents: []engine.Agent{judged("alpha", "beta"), {Name: "beta", Description: "beta"}}})
	if res := e.Run(context.Background(), engine.NewSession("s"), "what is 2+2", nil); res.StopReason != engine.StopAnswered {
		t.Errorf("a chain of judges: %+v", res)
	}
}

// A chain of judges deeper than one below the depth limit stops with the
// guardrail failing, saying why, instead of going on.
func TestGuardrailJudgeDepth(t *testing.T) {
	asked := map[string]int{}
	m := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		asked[req.System]++
		return engine.Decision{Text: "pass"}, nil
	})
	e := engine.New(engine.Config{Model: m, Agent: "a", MaxDepth: 1, Agents: []engine.Agent{
		judged("a", "b"), judged("b", "c"), judged("c", "d"), {Name: "d", Description: "d", System: "You are d."}}})
	res := e.Run(context.Background(), engine.NewSession("s"), "hello", nil)
	if res.StopReason != engine.StopGuardrail || !strings.Contains(res.Err.Error(), "past the depth limit of 1") {
		t.Fatalf("result %+v", res)
	}
	if asked["You are d."] != 0 {
		t.Errorf("the judge past the limit was asked: %v", asked)
	}
}

// A judge is a sub-run: its events are the session's (journaled with
// parent_run and parent_call guard_in_0), what its model spends is the
// run's and counts against the run's budget, and its tool calls are
// journaled. It is offered its own tools, not agent or transfer_to.
func TestGuardrailJudgeIsASubRun(t *testing.T) {
	var judgeTools []string
	judgeCalls := 0
	m := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		u := engine.Usage{PromptTokens: 100, CompletionTokens: 10}
		if strings.Contains(req.System, "You judge.") {
			judgeCalls++
			if judgeCalls == 1 {
				for _, s := range req.Tools {
					judgeTools = append(judgeTools, s.Name)
				}
				return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c1", Name: "echo", Args: []byte(`{"text":"hm"}`)}}, Usage: u}, nil
			}
			return engine.Decision{Text: "pass", Usage: u}, nil
		}
		return engine.Decision{Text: "done", Usage: u}, nil
	})
	cfg := engine.Config{Model: m, Tools: enginetest.Registry(t, enginetest.EchoTool()), Agent: "worker", Agents: []engine.Agent{
		judged("worker", "judge"), {Name: "judge", Description: "judge", System: "You judge."}, {Name: "helper", Description: "helper"}}}
	rec := &enginetest.Recorder{}
	s := engine.NewSession("s")
	res := engine.New(cfg).Run(context.Background(), s, "hello", rec)
	if res.StopReason != engine.StopAnswered || res.Answer != "done" {
		t.Fatalf("result %+v", res)
	}
	var sub, subTools int
	for _, ev := range rec.Events() {
		if ev.ParentRun == "" {
			continue
		}
		sub++
		if ev.ParentCall != "guard_in_0" || ev.Agent != "judge" {
			t.Errorf("a judge's event %s: parent call %q, agent %q", ev.Kind, ev.ParentCall, ev.Agent)
		}
		if ev.Kind == engine.KindToolStarted || ev.Kind == engine.KindToolFinished {
			subTools++
		}
	}
	if sub == 0 || subTools != 2 {
		t.Errorf("the judge's events: %d, of its tool %d; want its run and its call journaled", sub, subTools)
	}
	if strings.Join(judgeTools, ",") != "echo" {
		t.Errorf("the judge was offered %v, want its tools only (no agent, no transfer_to)", judgeTools)
	}
	if got := s.Usage.PromptTokens; got != 300 {
		t.Errorf("the session's prompt tokens %d, want 300 (the judge's two calls and the worker's)", got)
	}
	// The judge's spending counts against the run's budget: with 250
	// tokens, the worker's own request would pass it.
	cfg.MaxTokens = 250
	judgeCalls = 0
	res = engine.New(cfg).Run(context.Background(), engine.NewSession("s2"), "hello", nil)
	if res.StopReason != engine.StopBudget {
		t.Errorf("with a budget the judge spends: %+v", res)
	}
}
