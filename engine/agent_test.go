package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// turnModel decides by how many decisions the run has made (the messages
// after its task): plan[i] is the i-th decision; the last one repeats.
func turnModel(plan ...func(req *engine.Request) engine.Decision) engine.Model {
	return enginetest.ModelFunc(func(ctx context.Context, req *engine.Request) (engine.Decision, error) {
		n := 0
		for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != engine.RoleUser; i-- {
			if req.Messages[i].Role == engine.RoleAssistant {
				n++
			}
		}
		return plan[min(n, len(plan)-1)](req), nil
	})
}

func calls(cs ...engine.ToolCall) func(*engine.Request) engine.Decision {
	return func(*engine.Request) engine.Decision { return engine.Decision{ToolCalls: cs} }
}

func answer(f func(req *engine.Request) string) func(*engine.Request) engine.Decision {
	return func(req *engine.Request) engine.Decision { return engine.Decision{Text: f(req)} }
}

func delegation(id, agent, task string) engine.ToolCall {
	args, _ := json.Marshal(map[string]string{"agent": agent, "task": task})
	return engine.ToolCall{ID: id, Name: engine.AgentTool, Args: args}
}

// results joins the tool results the request ends with.
func results(req *engine.Request) string {
	var out []string
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == engine.RoleTool; i-- {
		out = append([]string{req.Messages[i].Content}, out...)
	}
	return strings.Join(out, " | ")
}

func lastTask(req *engine.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == engine.RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

// slowAnswer answers "done: TASK" after d, or fails when ctx ends first.
func slowAnswer(d time.Duration) engine.Model {
	return enginetest.ModelFunc(func(ctx context.Context, req *engine.Request) (engine.Decision, error) {
		select {
		case <-time.After(d):
			return engine.Decision{Text: "done: " + lastTask(req)}, nil
		case <-ctx.Done():
			return engine.Decision{}, ctx.Err()
		}
	})
}

// runTree runs task on a new session and returns the recorder and result.
func runTree(t *testing.T, cfg engine.Config, task string) (*enginetest.Recorder, engine.Result, *engine.Session) {
	t.Helper()
	eng := engine.New(cfg)
	if err := eng.Err(); err != nil {
		t.Fatal(err)
	}
	rec := &enginetest.Recorder{}
	s := engine.NewSession("s1")
	res := eng.Run(context.Background(), s, task, rec)
	return rec, res, s
}

// span returns the time of a run's run_started and run_finished.
func span(t *testing.T, evs []engine.Event, run string) (start, end time.Time) {
	t.Helper()
	for _, ev := range evs {
		if ev.Run != run {
			continue
		}
		switch ev.Kind {
		case engine.KindRunStarted:
			start = ev.Time
		case engine.KindRunFinished:
			end = ev.Time
		}
	}
	if start.IsZero() || end.IsZero() {
		t.Fatalf("run %s has no start or end in the events", run)
	}
	return start, end
}

func TestDelegationRunsInParallelWithNestedEvents(t *testing.T) {
	top := turnModel(
		calls(delegation("c1", "researcher", "find the moons of Mars"), delegation("c2", "writer", "draft a haiku")),
		answer(results),
	)
	cfg := engine.Config{Model: top, Tools: enginetest.Registry(t, enginetest.EchoTool()), Agents: []engine.Agent{
		{Name: "researcher", Description: "finds facts", System: "You research.", Model: slowAnswer(500 * time.Millisecond)},
		{Name: "writer", Description: "writes", Model: slowAnswer(500 * time.Millisecond)},
	}}
	rec, res, s := runTree(t, cfg, "moons and a haiku")
	if res.StopReason != engine.StopAnswered || res.Answer != "done: find the moons of Mars | done: draft a haiku" {
		t.Fatalf("result: %+v", res)
	}
	evs := rec.Events()
	a0, a1 := span(t, evs, "run-1/1/c1")
	b0, b1 := span(t, evs, "run-1/1/c2")
	if !a0.Before(b1) || !b0.Before(a1) {
		t.Fatalf("the sub-runs did not overlap: researcher %v–%v, writer %v–%v", a0, a1, b0, b1)
	}
	steps := map[int]string{}
	for _, ev := range evs {
		switch ev.Run {
		case "run-1":
			if ev.Agent != "" || ev.ParentRun != "" || ev.ParentCall != "" {
				t.Errorf("top-level event with sub-run fields: %+v", ev)
			}
		case "run-1/1/c1", "run-1/1/c2":
			want := map[string]string{"run-1/1/c1": "researcher", "run-1/1/c2": "writer"}[ev.Run]
			if ev.Agent != want || ev.ParentRun != "run-1" || ev.ParentCall != ev.Run[len("run-1/1/"):] {
				t.Errorf("sub-run event without its envelope: %+v", ev)
			}
		default:
			t.Errorf("event of an unknown run: %+v", ev)
		}
		if ev.Kind == engine.KindStepStarted {
			if other, dup := steps[ev.Step]; dup {
				t.Errorf("step %d started twice (%s, %s)", ev.Step, other, ev.Run)
			}
			steps[ev.Step] = ev.Run
		}
	}
	// The parent reports each call after its sub-run ended.
	for _, id := range []string{"c1", "c2"} {
		var end, fin int
		for i, ev := range evs {
			if ev.Kind == engine.KindRunFinished && ev.Run == "run-1/1/"+id {
				end = i
			}
			if f, ok := ev.Data.(*engine.ToolFinished); ok && ev.Run == "run-1" && f.ID == id {
				fin = i
				if f.Status != engine.ToolOK {
					t.Errorf("call %s: %+v", id, f)
				}
			}
		}
		if end == 0 || fin < end {
			t.Errorf("call %s: tool_finished at %d, its sub-run's run_finished at %d", id, fin, end)
		}
	}
	// The session's history is the top-level run's; the sub-runs keep theirs.
	if n := len(s.History); n != 5 {
		t.Errorf("top-level history has %d messages, want 5 (task, calls, 2 results, answer)", n)
	}
	sub, ok := s.SubRun("run-1/1/c1")
	if !ok || len(sub.History) != 2 || sub.History[0].Content != "find the moons of Mars" || !sub.LastRun().Finished {
		t.Errorf("sub-run state: %+v", sub)
	}
	// Replaying the events rebuilds the same state.
	replay := engine.NewSession("s1")
	for _, ev := range evs {
		if err := replay.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	rsub, _ := replay.SubRun("run-1/1/c1")
	if !reflect.DeepEqual(replay.History, s.History) || !reflect.DeepEqual(rsub.History, sub.History) || replay.Usage != s.Usage || replay.Steps != s.Steps {
		t.Errorf("replay differs")
	}
}

func TestDelegationErrorsAreResults(t *testing.T) {
	var echoes atomic.Int32
	echo := enginetest.EchoTool()
	inner := echo.Func
	echo.Func = func(ctx context.Context, c *engine.Call) (string, error) { echoes.Add(1); return inner(ctx, c) }
	calc := engine.Tool{Name: "calculator", Func: func(context.Context, *engine.Call) (string, error) { return "4", nil }}
	top := turnModel(
		calls(delegation("c1", "calc", "use echo"), delegation("c2", "nobody", "x"), delegation("c3", "deep", "go deeper"), delegation("c4", "limited", "loop")),
		answer(results),
	)
	useEcho := turnModel(calls(engine.ToolCall{ID: "e", Name: "echo", Args: json.RawMessage(`{"text":"hi"}`)}), answer(results))
	loop := turnModel(calls(engine.ToolCall{ID: "e", Name: "calculator", Args: json.RawMessage(`{}`)}))
	tools := enginetest.Registry(t, echo, calc)
	only := enginetest.Registry(t, calc)
	cfg := engine.Config{Model: top, Tools: tools, MaxDepth: 1, Agents: []engine.Agent{
		{Name: "calc", Description: "arithmetic", Model: useEcho, Tools: only},
		{Name: "deep", Description: "delegates", Model: turnModel(calls(delegation("d", "calc", "x")), answer(results))},
		{Name: "limited", Description: "never answers", Model: loop, MaxSteps: 2},
	}}
	rec, res, _ := runTree(t, cfg, "try everything")
	if res.StopReason != engine.StopAnswered {
		t.Fatalf("result: %+v", res)
	}
	got := map[string]string{}
	for _, ev := range rec.Of(engine.KindToolFinished) {
		f := ev.Data.(*engine.ToolFinished)
		got[ev.Run+" "+f.ID] = string(f.Status) + " " + f.Result
	}
	want := map[string]string{
		"run-1/1/c1 e": `error error: unknown tool "echo"; the tools are: calculator`,
		"run-1 c1":     "ok error: unknown tool \"echo\"; the tools are: calculator",
		"run-1/1/c3 d": "error error: this agent may not delegate: the depth limit of 1 is reached",
		"run-1 c4":     "error error: agent limited stopped at its step limit without an answer",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
	if r := got["run-1 c2"]; !strings.HasPrefix(r, "error error: arguments do not match the schema") || !strings.Contains(r, "calc") {
		t.Errorf("unknown agent: %q", r)
	}
	if echoes.Load() != 0 {
		t.Errorf("echo ran %d times for an agent without it", echoes.Load())
	}
}

func TestCancellingTheParentCancelsItsChildren(t *testing.T) {
	started := make(chan struct{})
	var once sync.Once
	child := enginetest.ModelFunc(func(ctx context.Context, req *engine.Request) (engine.Decision, error) {
		once.Do(func() { close(started) })
		<-ctx.Done()
		return engine.Decision{}, ctx.Err()
	})
	top := turnModel(calls(delegation("c1", "waiter", "wait"), delegation("c2", "waiter", "wait too")), answer(results))
	eng := engine.New(engine.Config{Model: top, Agents: []engine.Agent{{Name: "waiter", Description: "waits", Model: child}}})
	ctx, cancel := context.WithCancel(context.Background())
	rec := &enginetest.Recorder{}
	done := make(chan engine.Result)
	go func() { done <- eng.Run(ctx, engine.NewSession("s"), "wait", rec) }()
	<-started
	cancel()
	res := <-done
	if res.StopReason != engine.StopCancelled {
		t.Fatalf("result: %+v", res)
	}
	evs := rec.Events()
	last := evs[len(evs)-1]
	if last.Run != "run-1" || last.Kind != engine.KindRunFinished {
		t.Fatalf("the last event is %+v, want the top-level run_finished", last)
	}
	for _, id := range []string{"run-1/1/c1", "run-1/1/c2"} {
		var fin *engine.RunFinished
		for _, ev := range evs {
			if ev.Run == id && ev.Kind == engine.KindRunFinished {
				fin = ev.Data.(*engine.RunFinished)
			}
		}
		if fin == nil || fin.StopReason != engine.StopCancelled {
			t.Errorf("%s: run_finished %+v, want cancelled", id, fin)
		}
	}
}

func TestHandoffAndBack(t *testing.T) {
	transfer := func(to string) func(*engine.Request) engine.Decision {
		return calls(engine.ToolCall{ID: "t", Name: engine.TransferPrefix + to, Args: json.RawMessage(`{}`)})
	}
	var seen sync.Map // agent → tools offered at its first decision
	offered := func(name string, next func(*engine.Request) engine.Decision) func(*engine.Request) engine.Decision {
		return func(req *engine.Request) engine.Decision {
			var names []string
			for _, t := range req.Tools {
				names = append(names, t.Name)
			}
			seen.LoadOrStore(name, strings.Join(names, ","))
			return next(req)
		}
	}
	triage := enginetest.ModelFunc(func(ctx context.Context, req *engine.Request) (engine.Decision, error) {
		// First turn: hand off; back again: answer.
		for _, m := range req.Messages {
			if m.Role == engine.RoleTool && strings.Contains(m.Content, "triage") {
				return engine.Decision{Text: "triage again: " + req.System}, nil
			}
		}
		return offered("triage", transfer("billing"))(req), nil
	})
	billing := turnModel(offered("billing", transfer("triage")))
	cfg := engine.Config{Model: triage, Agent: "triage", Tools: enginetest.Registry(t, enginetest.EchoTool()), Agents: []engine.Agent{
		{Name: "triage", Description: "routes", System: "I am triage.", Handoff: true},
		{Name: "billing", Description: "money", System: "I am billing.", Model: billing, Handoff: true},
	}}
	rec, res, s := runTree(t, cfg, "refund please")
	if res.StopReason != engine.StopAnswered || res.Answer != "triage again: I am triage." {
		t.Fatalf("result: %+v", res)
	}
	var hs []string
	for _, ev := range rec.Of(engine.KindHandoff) {
		h := ev.Data.(*engine.Handoff)
		hs = append(hs, ev.Agent+">"+h.From+">"+h.To)
	}
	if fmt.Sprint(hs) != "[triage>triage>billing billing>billing>triage]" {
		t.Errorf("handoffs: %v", hs)
	}
	if s.Agent != "triage" {
		t.Errorf("session agent %q", s.Agent)
	}
	if v, _ := seen.Load("triage"); v != "echo,transfer_to_billing" {
		t.Errorf("triage was offered %v", v)
	}
	if v, _ := seen.Load("billing"); v != "echo,transfer_to_triage" {
		t.Errorf("billing was offered %v", v)
	}
	for _, ev := range rec.Of(engine.KindDecision) {
		if ev.Agent == "" {
			t.Errorf("decision without an agent: %+v", ev)
		}
	}
}

func TestSubAgentsShareMemoryAndSignTheirFacts(t *testing.T) {
	remember := engine.Tool{Name: "remember", Func: func(_ context.Context, c *engine.Call) (string, error) {
		var a struct{ Key, Value string }
		if err := c.Bind(&a); err != nil {
			return "", err
		}
		c.Memory.Set(a.Key, a.Value)
		return "ok", nil
	}}
	writer := func(key string) engine.Model {
		return turnModel(func(req *engine.Request) engine.Decision {
			args, _ := json.Marshal(map[string]string{"key": key, "value": lastTask(req)})
			return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "m", Name: "remember", Args: args}}}
		}, answer(func(req *engine.Request) string { return fmt.Sprint(len(req.Memory), " facts") }))
	}
	// a, then b in a later decision: b sees a's fact (and its own), and
	// the parent sees both.
	var parentSaw int
	top := turnModel(calls(delegation("c1", "a", "alpha")), calls(delegation("c2", "b", "beta")), answer(func(req *engine.Request) string {
		parentSaw = len(req.Memory)
		return results(req)
	}))
	_, res, s := runTree(t, engine.Config{Model: top, Tools: enginetest.Registry(t, remember), Agents: []engine.Agent{
		{Name: "a", Description: "a", Model: writer("x")},
		{Name: "b", Description: "b", Model: writer("y")},
	}}, "remember")
	if res.StopReason != engine.StopAnswered {
		t.Fatalf("%+v", res)
	}
	if res.Answer != "2 facts" || parentSaw != 2 { // the answer is b's, the last result
		t.Errorf("b answered %q, the parent saw %d facts; want b seeing a's fact and its own, the parent both", res.Answer, parentSaw)
	}
	facts := map[string]string{}
	for _, f := range s.Memory() {
		facts[f.Key] = f.Value + "/" + f.Agent
	}
	if facts["x"] != "alpha/a" || facts["y"] != "beta/b" {
		t.Errorf("memory: %v", facts)
	}
}

// TestContinueInTheMiddleOfASubRun cuts a journal in the middle of a
// sub-run, after one of its tool calls finished and while another ran, and
// continues it: the finished call does not run again, the one that ran is
// re-run (a nil gate approves), and the sub-run and its parent finish.
func TestContinueInTheMiddleOfASubRun(t *testing.T) {
	var runs sync.Map
	count := func(name string) engine.Tool { return countedTool(&runs, name) }
	worker := turnModel(
		calls(engine.ToolCall{ID: "w1", Name: "first", Args: json.RawMessage(`{}`)}),
		calls(engine.ToolCall{ID: "w2", Name: "second", Args: json.RawMessage(`{}`)}),
		answer(results),
	)
	top := turnModel(calls(delegation("c1", "worker", "work")), answer(results))
	cfg := engine.Config{Model: top, Tools: enginetest.Registry(t, count("first"), count("second")), Agents: []engine.Agent{
		{Name: "worker", Description: "works", Model: worker},
	}}
	rec, res, _ := runTree(t, cfg, "go")
	if res.StopReason != engine.StopAnswered || res.Answer != "second done" {
		t.Fatalf("%+v", res)
	}
	// The journal as a kill left it: up to the sub-run's second tool_started.
	cut := upTo(rec.Events(), startedTool("second"))
	runs.Clear()
	s := replayed(t, cut)
	if !s.Interrupted() {
		t.Fatal("the cut journal is not interrupted")
	}
	rec2 := &enginetest.Recorder{}
	res = engine.New(cfg).Continue(context.Background(), s, rec2)
	if res.StopReason != engine.StopAnswered || res.Answer != "second done" {
		t.Fatalf("continued: %+v", res)
	}
	if _, ran := runs.Load("first"); ran {
		t.Error("the finished tool call ran again")
	}
	if n, _ := runs.Load("second"); n == nil || n.(*atomic.Int32).Load() != 1 {
		t.Error("the interrupted tool call did not run once")
	}
	for _, ev := range rec2.Of(engine.KindRunStarted) {
		t.Errorf("a run started again: %+v", ev)
	}
	sub, _ := s.SubRun("run-1/1/c1")
	if !sub.LastRun().Finished || sub.LastRun().Answer != "second done" {
		t.Errorf("sub-run: %+v", sub.LastRun())
	}
}

func TestAgentConfigErrors(t *testing.T) {
	echo := enginetest.EchoTool()
	clash := echo
	clash.Name = "agent"
	for name, cfg := range map[string]engine.Config{
		"twice":             {Agents: []engine.Agent{{Name: "a"}, {Name: "a"}}},
		"unknown":           {Agent: "ghost", Agents: []engine.Agent{{Name: "a"}}},
		"no agents, a name": {Agent: "ghost"},
		"bad name":          {Agents: []engine.Agent{{Name: "a b"}}},
		"clash":             {Agents: []engine.Agent{{Name: "a"}}, Tools: enginetest.Registry(t, clash)},
	} {
		eng := engine.New(cfg)
		if eng.Err() == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		res := eng.Run(context.Background(), engine.NewSession("s"), "x", nil)
		if !errors.Is(res.Err, eng.Err()) && res.Err != eng.Err() {
			t.Errorf("%s: run error %v", name, res.Err)
		}
	}
}

// countedTool is a tool named name that answers "NAME done" and counts
// its calls in runs.
func countedTool(runs *sync.Map, name string) engine.Tool {
	return engine.Tool{Name: name, Func: func(context.Context, *engine.Call) (string, error) {
		n, _ := runs.LoadOrStore(name, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		return name + " done", nil
	}}
}

// upTo is events up to and including the first that stop holds for: the
// journal as a kill left it.
func upTo(events []engine.Event, stop func(engine.Event) bool) []engine.Event {
	for i, ev := range events {
		if stop(ev) {
			return events[:i+1]
		}
	}
	return events
}

// startedTool holds for the tool_started of the tool called name.
func startedTool(name string) func(engine.Event) bool {
	return func(ev engine.Event) bool {
		d, ok := ev.Data.(*engine.ToolStarted)
		return ok && d.Name == name
	}
}

// replayed is a new session that the events rebuild.
func replayed(t *testing.T, events []engine.Event) *engine.Session {
	t.Helper()
	s := engine.NewSession("s1")
	for _, ev := range events {
		if err := s.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	return s
}
