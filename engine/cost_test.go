package engine_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// usageModel calls echo until told to stop (never, here), each decision
// reporting usage of 1000 prompt tokens (400 cached) and 100 completion.
func usageModel() engine.Model {
	return enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
		return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "e", Name: "echo", Args: []byte(`{"text":"x"}`)}},
			Usage: engine.Usage{PromptTokens: 1000, CachedTokens: 400, CompletionTokens: 100}}, nil
	})
}

func TestCostAndBudgets(t *testing.T) {
	price := engine.Price{Input: 2, CachedInput: 1, Output: 10}
	prices := func(m string) (engine.Price, bool) { return price, m == "priced" }
	// (600*2 + 400*1 + 100*10) / 1e6
	const perCall = 0.0026
	for _, tt := range []struct {
		name      string
		cfg       engine.Config
		stop      engine.StopReason
		calls     int
		errSays   string
		costKnown bool
	}{
		// The server counts 1,000 prompt tokens a request: the third
		// would pass the budget, and is not sent.
		{"tokens", engine.Config{MaxTokens: 2500, ModelName: "priced"}, engine.StopBudget, 2, "token budget of 2500 would be passed by the next request: 2200 tokens used, and its prompt is about 10", true},
		{"cost", engine.Config{MaxCost: 0.006, ModelName: "priced"}, engine.StopBudget, 2, "cost budget of $0.006 would be passed by the next request: $0.0052 spent", true},
		// A budget the calls' answers pass: the check after each call.
		{"answers", engine.Config{MaxTokens: 3250, ModelName: "priced"}, engine.StopBudget, 3, "token budget of 3250 is spent: 3300 tokens", true},
		{"unpriced", engine.Config{MaxCost: 1, ModelName: "mystery"}, engine.StopBudget, 1, `the cost of model "mystery" is not known`, false},
		{"none", engine.Config{MaxSteps: 4, ModelName: "priced"}, engine.StopStepLimit, 4, "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Model, cfg.Prices, cfg.Tools = usageModel(), prices, enginetest.Registry(t, enginetest.EchoTool())
			rec, res, s := runTree(t, cfg, "go")
			if res.StopReason != tt.stop || tt.errSays != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), tt.errSays)) {
				t.Fatalf("stop %s, err %v; want %s saying %q", res.StopReason, res.Err, tt.stop, tt.errSays)
			}
			usage := rec.Of(engine.KindUsage)
			if len(usage) != tt.calls || s.Usage.Calls != tt.calls {
				t.Fatalf("%d usage events, %d calls summed; want %d", len(usage), s.Usage.Calls, tt.calls)
			}
			u := usage[0].Data.(*engine.UsageRecorded)
			if tt.costKnown != (u.Priced == 1) || tt.costKnown && math.Abs(u.Cost-perCall) > 1e-12 {
				t.Errorf("a call's usage: %+v", u.Usage)
			}
			if want := engine.FormatCost(perCall*float64(tt.calls), tt.calls, tt.calls); tt.costKnown && s.Usage.CostString() != want {
				t.Errorf("the session's cost: %s, want %s", s.Usage.CostString(), want)
			}
			if !tt.costKnown && s.Usage.CostString() != "cost unknown" {
				t.Errorf("an unpriced model's cost: %q", s.Usage.CostString())
			}
		})
	}
}

func TestFormatCost(t *testing.T) {
	for _, tt := range []struct {
		cost          float64
		priced, calls int
		want          string
	}{
		{0, 1, 1, "$0.00"},
		{0.0026, 1, 1, "$0.0026"},
		{0.00012345, 2, 2, "$0.000123"},
		{1.5, 2, 3, "$1.50 + unknown"},
		{0, 0, 3, "cost unknown"},
		{12.345, 1, 1, "$12.35"},
	} {
		if got := engine.FormatCost(tt.cost, tt.priced, tt.calls); got != tt.want {
			t.Errorf("FormatCost(%v, %d, %d) = %q, want %q", tt.cost, tt.priced, tt.calls, got, tt.want)
		}
	}
}

// An agent's own budget stops its runs (a sub-run here), and the run that
// delegated goes on with the sub-run's error as the call's result.
func TestAgentBudget(t *testing.T) {
	top := turnModel(calls(delegation("c1", "spender", "spend")), answer(results))
	cfg := engine.Config{Model: top, ModelName: "priced", Prices: func(string) (engine.Price, bool) { return engine.Price{Input: 1, Output: 1}, true },
		Tools:  enginetest.Registry(t, enginetest.EchoTool()),
		Agents: []engine.Agent{{Name: "spender", Description: "spends", Model: usageModel(), ModelName: "priced", MaxTokens: 2500}}}
	rec, res, _ := runTree(t, cfg, "go")
	if res.StopReason != engine.StopAnswered || !strings.Contains(res.Answer, "agent spender's token budget of 2500 a run would be passed by the next request: 2200 tokens used") {
		t.Fatalf("result: %+v", res)
	}
	var subStop engine.StopReason
	for _, ev := range rec.Of(engine.KindRunFinished) {
		if ev.ParentRun != "" {
			subStop = ev.Data.(*engine.RunFinished).StopReason
		}
	}
	if subStop != engine.StopBudget {
		t.Errorf("the sub-run ended %q", subStop)
	}
}

// TestBudgetCountsAcrossAContinue: a run that dies after spending part of
// its budget is continued with what it spent counted: the budget is the
// run's, not the continuing process's. The session's earlier runs do not
// count.
func TestBudgetCountsAcrossAContinue(t *testing.T) {
	cfg := engine.Config{MaxTokens: 2500, Model: usageModel(), ModelName: "priced",
		Tools: enginetest.Registry(t, enginetest.EchoTool()), MaxSteps: 2}
	// An earlier run of the session spends 2,200 tokens; they are not
	// this run's.
	rec := &enginetest.Recorder{}
	if res := engine.New(cfg).Run(context.Background(), engine.NewSession("s"), "before", rec); res.StopReason != engine.StopStepLimit {
		t.Fatalf("the earlier run: %s %v", res.StopReason, res.Err)
	}
	// This run makes two decisions (2,200 tokens), and the process dies
	// with the second step's call started.
	rec2 := &enginetest.Recorder{}
	s := engine.NewSession("s")
	for _, ev := range rec.Events() {
		if err := s.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	cfg.MaxSteps = 0
	var cut []engine.Event
	calls := 0
	engine.New(cfg).Run(context.Background(), s, "go", engine.SinkFunc(func(ev engine.Event) error {
		if calls < 2 {
			cut = append(cut, ev)
		}
		if ev.Kind == engine.KindToolStarted {
			calls++
		}
		return rec2.Emit(ev)
	}))
	s = engine.NewSession("s")
	for _, ev := range append(rec.Events(), cut...) {
		if err := s.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Interrupted() {
		t.Fatal("the cut session is not interrupted")
	}
	// Continued: one more decision (3,300 tokens in this run) and the
	// budget of 2,500 is spent.
	rec3 := &enginetest.Recorder{}
	res := engine.New(cfg).Continue(context.Background(), s, rec3)
	if res.StopReason != engine.StopBudget || res.Err == nil || !strings.Contains(res.Err.Error(), "spent: 3300 tokens") {
		t.Fatalf("continued: %s %v; want the budget spent at 3300 tokens", res.StopReason, res.Err)
	}
	if n := len(rec3.Of(engine.KindUsage)); n != 1 {
		t.Errorf("the continued run made %d model calls, want 1", n)
	}
}

// TestAgentBudgetCountsAcrossAContinue: a sub-run that dies after two of
// its decisions is continued with what it spent counted against its
// agent's budget, so it stops after one more, as it would have.
func TestAgentBudgetCountsAcrossAContinue(t *testing.T) {
	top := turnModel(calls(delegation("c1", "spender", "spend")), answer(results))
	cfg := engine.Config{Model: top, Tools: enginetest.Registry(t, enginetest.EchoTool()),
		Agents: []engine.Agent{{Name: "spender", Description: "spends", Model: usageModel(), MaxTokens: 2500}}}
	rec, res, _ := runTree(t, cfg, "go")
	if res.StopReason != engine.StopAnswered {
		t.Fatalf("result: %+v", res)
	}
	// The journal as a kill left it: at the sub-run's second call.
	n := 0
	cut := upTo(rec.Events(), func(ev engine.Event) bool {
		if ev.Kind == engine.KindToolStarted && ev.ParentRun != "" {
			n++
		}
		return n == 2
	})
	s := replayed(t, cut)
	rec2 := &enginetest.Recorder{}
	res = engine.New(cfg).Continue(context.Background(), s, rec2)
	if res.StopReason != engine.StopAnswered || !strings.Contains(res.Answer, "agent spender's token budget of 2500 a run is spent: 3300 tokens") {
		t.Fatalf("continued: %+v", res)
	}
	if calls := len(rec2.Of(engine.KindUsage)); calls != 2 { // the sub-run's third, and the top run's answer
		t.Errorf("the continued runs made %d model calls, want 2", calls)
	}
}

// TestTopLevelAgentBudgetCountsAcrossAContinue: a run as an agent with a
// budget of its own (--agent) counts, once continued after a crash, what
// its decisions spent before it.
func TestTopLevelAgentBudgetCountsAcrossAContinue(t *testing.T) {
	cfg := engine.Config{Agent: "spender", Tools: enginetest.Registry(t, enginetest.EchoTool()),
		Agents: []engine.Agent{{Name: "spender", Description: "spends", Model: usageModel(), MaxTokens: 2500}}}
	rec := &enginetest.Recorder{}
	if res := engine.New(cfg).Run(context.Background(), engine.NewSession("s1"), "go", rec); res.StopReason != engine.StopBudget {
		t.Fatalf("the whole run: %s %v", res.StopReason, res.Err)
	}
	n := 0
	cut := upTo(rec.Events(), func(ev engine.Event) bool {
		if ev.Kind == engine.KindToolStarted {
			n++
		}
		return n == 2
	})
	s := replayed(t, cut)
	rec2 := &enginetest.Recorder{}
	res := engine.New(cfg).Continue(context.Background(), s, rec2)
	if res.StopReason != engine.StopBudget || res.Err == nil || !strings.Contains(res.Err.Error(), "spent: 3300 tokens") {
		t.Fatalf("continued: %s %v; want the agent's budget spent at 3300 tokens", res.StopReason, res.Err)
	}
	if calls := len(rec2.Of(engine.KindUsage)); calls != 1 {
		t.Errorf("the continued run made %d model calls, want 1", calls)
	}
}

// TestBudgetStopsBeforeARequestThatWouldPassIt: a request's prompt is
// known before the call, so a budget it alone would pass stops the run
// before the model is asked: tokens, and cost at the model's price; a
// budget that the prompt fits goes on.
func TestBudgetStopsBeforeARequestThatWouldPassIt(t *testing.T) {
	price := func(string) (engine.Price, bool) { return engine.Price{Input: 1e6, Output: 1e6}, true } // $1 a token
	task := strings.Repeat("a long task ", 40)
	for _, tt := range []struct {
		name  string
		cfg   engine.Config
		calls int
		says  string
	}{
		{"tokens", engine.Config{MaxTokens: 20}, 0, "the run's token budget of 20 would be passed by the next request: 0 tokens used, and its prompt is about"},
		{"cost", engine.Config{MaxCost: 20, Prices: price, ModelName: "priced"}, 0, "the run's cost budget of $20.00 would be passed by the next request: $0.00 spent"},
		{"agent tokens", engine.Config{Agent: "a", Agents: []engine.Agent{{Name: "a", Description: "a", MaxTokens: 20}}}, 0, "agent a's token budget of 20 a run would be passed"},
		// 1,100 tokens a call as the model reports them: the third call's
		// prompt (about 150 tokens) would pass 2,300.
		{"after two calls", engine.Config{MaxTokens: 2300}, 2, "token budget of 2300 would be passed by the next request: 2200 tokens used"},
		{"fits", engine.Config{MaxTokens: 1_000_000, MaxSteps: 2}, 2, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Model, cfg.Tools = usageModel(), enginetest.Registry(t, enginetest.EchoTool())
			for i := range cfg.Agents {
				cfg.Agents[i].Model = usageModel()
			}
			rec := &enginetest.Recorder{}
			res := engine.New(cfg).Run(context.Background(), engine.NewSession("s"), task, rec)
			if n := len(rec.Of(engine.KindUsage)); n != tt.calls {
				t.Errorf("%d model calls, want %d", n, tt.calls)
			}
			if tt.says == "" {
				if res.StopReason != engine.StopStepLimit {
					t.Errorf("stop %s (%v), want the step limit", res.StopReason, res.Err)
				}
				return
			}
			if res.StopReason != engine.StopBudget || res.Err == nil || !strings.Contains(res.Err.Error(), tt.says) {
				t.Errorf("stop %s, err %v; want budget saying %q", res.StopReason, res.Err, tt.says)
			}
		})
	}
}
