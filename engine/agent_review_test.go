package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// Regression tests for what a review of the agents change found.

type abortSubGate struct{}

func (abortSubGate) Stop(p engine.Pending) bool { return p.ParentRun != "" }
func (abortSubGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	return engine.Verdict{Action: engine.Abort}, nil
}

// An abort at a sub-run's pause ends the whole run, not only the sub-run.
func TestAbortInASubRunEndsTheRun(t *testing.T) {
	var topDecisions atomic.Int32
	top := enginetest.ModelFunc(func(ctx context.Context, req *engine.Request) (engine.Decision, error) {
		if topDecisions.Add(1) == 1 {
			return engine.Decision{ToolCalls: []engine.ToolCall{delegation("c1", "w", "x")}}, nil
		}
		return engine.Decision{Text: "parent went on: " + results(req)}, nil
	})
	eng := engine.New(engine.Config{Model: top, Gate: abortSubGate{}, Agents: []engine.Agent{{Name: "w", Description: "w", Model: slowAnswer(0)}}})
	res := eng.Run(context.Background(), engine.NewSession("s"), "go", &enginetest.Recorder{})
	if res.StopReason != engine.StopCancelled || res.Err != nil || topDecisions.Load() != 1 {
		t.Errorf("abort at a sub-run's pause did not abort the run: %+v, %d top-level decisions", res, topDecisions.Load())
	}
}

// A crash after a transfer_to call finished, before its step ended:
// Continue runs the step's other calls as the agent that decided them (a's
// tools: secret is unknown to it), then hands off.
func TestContinueAfterATransferKeepsTheDecidingAgent(t *testing.T) {
	var secretRuns atomic.Int32
	secret := engine.Tool{Name: "secret", Func: func(context.Context, *engine.Call) (string, error) { secretRuns.Add(1); return "secret!", nil }}
	echo := enginetest.EchoTool()
	slow := engine.Tool{Name: "slow", Func: func(context.Context, *engine.Call) (string, error) {
		time.Sleep(20 * time.Millisecond)
		return "slow done", nil
	}}
	all := enginetest.Registry(t, echo, secret, slow)
	a := turnModel(calls(engine.ToolCall{ID: "t", Name: engine.TransferPrefix + "b", Args: json.RawMessage(`{}`)},
		engine.ToolCall{ID: "s", Name: "secret", Args: json.RawMessage(`{}`)},
		engine.ToolCall{ID: "w", Name: "slow", Args: json.RawMessage(`{}`)}), answer(results))
	b := turnModel(answer(func(*engine.Request) string { return "b answers" }))
	cfg := engine.Config{Model: a, Tools: all, Agent: "a", Agents: []engine.Agent{
		{Name: "a", Description: "a", Tools: enginetest.Registry(t, echo, slow), Handoff: true},
		{Name: "b", Description: "b", Tools: enginetest.Registry(t, secret), Model: b, Handoff: true},
	}}
	rec, res, _ := runTree(t, cfg, "go")
	if res.Answer != "b answers" || secretRuns.Load() != 0 {
		t.Fatalf("live: %+v; secret ran %d", res, secretRuns.Load())
	}
	// Killed while slow ran, after the transfer's result.
	cut := upTo(rec.Events(), startedTool("slow"))
	s := replayed(t, cut)
	if s.Agent != "a" {
		t.Fatalf("the cut journal's agent is %q", s.Agent)
	}
	rec2 := &enginetest.Recorder{}
	res = engine.New(cfg).Continue(context.Background(), s, rec2)
	if res.Answer != "b answers" || secretRuns.Load() != 0 || s.Agent != "b" || len(rec2.Of(engine.KindHandoff)) != 1 {
		t.Errorf("continued: %+v; secret ran %d; agent %q; %d handoffs", res, secretRuns.Load(), s.Agent, len(rec2.Of(engine.KindHandoff)))
	}
}

// An agent handed to counts its step limit from the handoff.
func TestHandoffStepLimitCountsFromTheHandoff(t *testing.T) {
	echoCall := engine.ToolCall{ID: "e", Name: "echo", Args: json.RawMessage(`{"text":"x"}`)}
	a := turnModel(calls(echoCall), calls(echoCall), calls(engine.ToolCall{ID: "t", Name: engine.TransferPrefix + "b", Args: json.RawMessage(`{}`)}))
	b := turnModel(answer(func(*engine.Request) string { return "b answers" }))
	cfg := engine.Config{Model: a, Tools: enginetest.Registry(t, enginetest.EchoTool()), Agent: "a", Agents: []engine.Agent{
		{Name: "a", Description: "a", Handoff: true},
		{Name: "b", Description: "b", Model: b, MaxSteps: 2, Handoff: true},
	}}
	_, res, _ := runTree(t, cfg, "go")
	if res.StopReason != engine.StopAnswered {
		t.Errorf("b (max_steps 2) never decided after the handoff: %s %v", res.StopReason, res.Err)
	}
}

// A session that ran as one agent runs as another once the person picks
// it (SwitchAgent, as --agent does), journaled as a handoff; an agent
// that is not defined any more is told of and the run uses the defaults.
func TestSwitchAgent(t *testing.T) {
	m := turnModel(answer(func(req *engine.Request) string { return req.System }))
	agents := []engine.Agent{{Name: "x", Description: "x", System: "I am x"}, {Name: "y", Description: "y", System: "I am y"}}
	s := engine.NewSession("s")
	engine.New(engine.Config{Model: m, Agent: "x", Agents: agents}).Run(context.Background(), s, "one", nil)
	rec := &enginetest.Recorder{}
	if _, err := s.SwitchAgent("y", rec); err != nil {
		t.Fatal(err)
	}
	res := engine.New(engine.Config{Model: m, Agent: "y", Agents: agents}).Run(context.Background(), s, "two", rec)
	if res.Answer != "I am y" || len(rec.Of(engine.KindHandoff)) != 1 {
		t.Errorf("asked for agent y, ran as: %q", res.Answer)
	}
	res = engine.New(engine.Config{Model: m, System: "default", Agents: agents[:1]}).Run(context.Background(), s, "three", rec)
	if n := rec.Of(engine.KindNotice); res.Answer != "default" || len(n) != 1 || !strings.Contains(n[0].Data.(*engine.Notice).Message, `"y"`) {
		t.Errorf("with y gone: %q, notices %v", res.Answer, n)
	}
}

// failOnce fails the first event matching.
type failOnce struct {
	enginetest.Recorder
	match func(engine.Event) bool
	done  atomic.Bool
}

func (f *failOnce) Emit(ev engine.Event) error {
	if f.match(ev) && f.done.CompareAndSwap(false, true) {
		return errors.New("disk full")
	}
	return f.Recorder.Emit(ev)
}

// A sink error inside a sub-run ends the whole run, and what the sink took
// replays.
func TestSinkErrorInASubRunEndsTheRun(t *testing.T) {
	top := turnModel(calls(delegation("c1", "w", "x")), answer(results))
	eng := engine.New(engine.Config{Model: top, Agents: []engine.Agent{{Name: "w", Description: "w", Model: slowAnswer(0)}}})
	sink := &failOnce{match: func(ev engine.Event) bool { return ev.ParentRun != "" && ev.Kind == engine.KindRunStarted }}
	res := eng.Run(context.Background(), engine.NewSession("s"), "go", sink)
	replay := engine.NewSession("s")
	var rerr error
	for _, ev := range sink.Events() {
		if err := replay.Apply(ev); err != nil && rerr == nil {
			rerr = err
		}
	}
	if res.StopReason != engine.StopError || rerr != nil {
		t.Errorf("a sink error in a sub-run did not end the run (%s); replaying what the sink got: %v", res.StopReason, rerr)
	}
}

// Replaying (through JSON) a run with parallel sub-runs, memory writes, a
// handoff in a sub-run and a nested sub-run rebuilds the live state,
// sub-runs included.
func TestReplayOfSubRunsIsExact(t *testing.T) {
	remember := engine.Tool{Name: "remember", Func: func(_ context.Context, c *engine.Call) (string, error) {
		var a struct{ Key, Value string }
		c.Bind(&a)
		c.Memory.Set(a.Key, a.Value)
		return "ok", nil
	}}
	writer := func(key string, handoff bool) engine.Model {
		args, _ := json.Marshal(map[string]string{"key": key, "value": key})
		first := []engine.ToolCall{{ID: "m", Name: "remember", Args: args}}
		if handoff {
			first = append(first, engine.ToolCall{ID: "t", Name: engine.TransferPrefix + "h", Args: json.RawMessage(`{}`)})
		}
		return turnModel(calls(first...), answer(func(req *engine.Request) string { return key + " done" }))
	}
	top := turnModel(calls(delegation("c1", "a", "alpha"), delegation("c2", "b", "beta"), delegation("c3", "d", "deep")), answer(results))
	deep := turnModel(calls(delegation("x1", "a", "nested")), answer(results))
	cfg := engine.Config{Model: top, Tools: enginetest.Registry(t, remember), Agents: []engine.Agent{
		{Name: "a", Description: "a", Model: writer("x", false)},
		{Name: "b", Description: "b", Model: writer("y", true)},
		{Name: "d", Description: "d", Model: deep},
		{Name: "h", Description: "h", Model: turnModel(answer(func(*engine.Request) string { return "h here" })), Handoff: true},
	}}
	for range 5 {
		rec, res, s := runTree(t, cfg, "go")
		if res.StopReason != engine.StopAnswered {
			t.Fatalf("%+v", res)
		}
		evs := rec.Events()
		// through JSON, as a journal would
		replay := engine.NewSession("s1")
		for _, ev := range evs {
			b, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			var back engine.Event
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if err := replay.Apply(back); err != nil {
				t.Fatal(err)
			}
		}
		check := func(name string, a, b *engine.Session) {
			if !reflect.DeepEqual(a.History, b.History) || !reflect.DeepEqual(a.Memory(), b.Memory()) || a.Usage != b.Usage || a.Steps != b.Steps || a.Agent != b.Agent || a.LastRun() != b.LastRun() || a.Runs != b.Runs {
				t.Errorf("%s: replay differs:\nlive   %+v %+v %v %d %q\nreplay %+v %+v %v %d %q", name, a.LastRun(), a.Memory(), a.Usage, a.Steps, a.Agent, b.LastRun(), b.Memory(), b.Usage, b.Steps, b.Agent)
			}
		}
		check("top", s, replay)
		for _, id := range []string{"run-1/1/c1", "run-1/1/c2", "run-1/1/c3"} {
			ls, ok1 := s.SubRun(id)
			rs, ok2 := replay.SubRun(id)
			if !ok1 || !ok2 {
				t.Fatalf("%s: %v %v", id, ok1, ok2)
			}
			check(id, ls, rs)
		}
	}
}

// Continue at depth 2: a journal cut inside a grandchild's tool call.
func TestContinueAtDepthTwo(t *testing.T) {
	var runs sync.Map
	count := func(name string) engine.Tool { return countedTool(&runs, name) }
	worker := turnModel(
		calls(engine.ToolCall{ID: "w1", Name: "first", Args: json.RawMessage(`{}`)}),
		calls(engine.ToolCall{ID: "w2", Name: "second", Args: json.RawMessage(`{}`)}),
		answer(results),
	)
	mid := turnModel(calls(delegation("m1", "worker", "work")), answer(results))
	top := turnModel(calls(delegation("c1", "mid", "manage")), answer(results))
	cfg := engine.Config{Model: top, Tools: enginetest.Registry(t, count("first"), count("second")), Agents: []engine.Agent{
		{Name: "worker", Description: "works", Model: worker},
		{Name: "mid", Description: "manages", Model: mid},
	}}
	rec, res, _ := runTree(t, cfg, "go")
	if res.StopReason != engine.StopAnswered || res.Answer != "second done" {
		t.Fatalf("%+v", res)
	}
	cut := upTo(rec.Events(), startedTool("second"))
	runs.Clear()
	s := replayed(t, cut)
	rec2 := &enginetest.Recorder{}
	res = engine.New(cfg).Continue(context.Background(), s, rec2)
	if res.StopReason != engine.StopAnswered || res.Answer != "second done" {
		t.Fatalf("continued: %+v", res)
	}
	if _, ran := runs.Load("first"); ran {
		t.Error("first ran again")
	}
	for _, ev := range rec2.Of(engine.KindRunStarted) {
		t.Errorf("a run started again: %s", ev.Run)
	}
}
