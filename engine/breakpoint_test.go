package engine_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// breakGate stops only where a breakpoint holds (Stop is false), answers
// each pause from verdicts (then Proceed) and records what it saw.
type breakGate struct {
	mu       sync.Mutex
	bs       engine.Breakpoints
	verdicts []func(engine.Pending) engine.Verdict
	seen     []engine.Pending
}

func (g *breakGate) Stop(engine.Pending) bool { return false }

func (g *breakGate) Breakpoints(string) *engine.Breakpoints { return &g.bs }

func (g *breakGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p.Request != nil { // the gate sees it only while the run waits
		r := *p.Request
		p.Request = &r
	}
	g.seen = append(g.seen, p)
	if len(g.verdicts) > 0 {
		v := g.verdicts[0]
		g.verdicts = g.verdicts[1:]
		return v(p), nil
	}
	return engine.Verdict{Action: engine.Proceed}, nil
}

func breaks(t *testing.T, conds ...string) engine.Breakpoints {
	t.Helper()
	var bs engine.Breakpoints
	for _, c := range conds {
		b, err := engine.ParseBreak(c)
		if err != nil {
			t.Fatal(err)
		}
		bs.List = append(bs.List, b)
	}
	return bs
}

func TestParseBreak(t *testing.T) {
	for _, ok := range []string{"tool=run_shell", "tool=fs__*", "agent=writer", "step=12", "error", "text=/password|TODO/", "text=secret", "tokens>50000", "tokens > 10", "workflow_step=build"} {
		if b, err := engine.ParseBreak(ok); err != nil || b.String() != strings.TrimSpace(ok) {
			t.Errorf("%q: %v %q", ok, err, b)
		}
	}
	for _, bad := range []string{"", "tool", "tool=", "tool=[", "step=x", "step=0", "tokens>many", "text=/(/", "colour=red", "errors"} {
		_, err := engine.ParseBreak(bad)
		if err == nil || !strings.Contains(err.Error(), "the conditions are") {
			t.Errorf("%q: want an error that lists the conditions, got %v", bad, err)
		}
	}
}

// A tool breakpoint stops a sub-run's call of that tool and nothing else,
// saying which condition hit; a text breakpoint stops the run at its next
// pause after a result that matches.
func TestBreakpointsInASubRun(t *testing.T) {
	top := turnModel(calls(delegation("c1", "researcher", "look it up")), answer(results))
	child := turnModel(calls(engine.ToolCall{ID: "e1", Name: "echo", Args: []byte(`{"text":"a TODO here"}`)}), answer(func(*engine.Request) string { return "done" }))
	g := &breakGate{bs: breaks(t, "tool=ec*", "text=/TODO/")}
	cfg := engine.Config{Model: top, Gate: g, Tools: enginetest.Registry(t, enginetest.EchoTool()), Agents: []engine.Agent{
		{Name: "researcher", Description: "finds facts", Model: child}}}
	rec, res, _ := runTree(t, cfg, "go")
	if res.StopReason != engine.StopAnswered {
		t.Fatalf("result: %+v", res)
	}
	if len(g.seen) != 2 {
		t.Fatalf("want two pauses (the echo call, the decision after its TODO), got %+v", g.seen)
	}
	if p := g.seen[0]; p.Break != "tool=ec*" || p.ToolCall == nil || p.ToolCall.Name != "echo" || p.Run != "run-1/1/c1" {
		t.Errorf("first pause: %+v", p)
	}
	if p := g.seen[1]; p.Break != "text=/TODO/" || p.At != engine.Decide || p.Run != "run-1/1/c1" {
		t.Errorf("second pause: %+v", p)
	}
	paused := rec.Of(engine.KindGatePaused)
	if len(paused) != 2 || paused[0].Data.(*engine.GatePaused).Reason != engine.ReasonBreak || paused[0].Data.(*engine.GatePaused).Break != "tool=ec*" {
		t.Errorf("gate_paused events: %+v", paused)
	}
}

// step=, agent=, tokens> and error each stop where they say.
func TestBreakpointConditions(t *testing.T) {
	fail := engine.Tool{Name: "flaky", Description: "fails", Schema: []byte(`{"type":"object"}`), Func: func(context.Context, *engine.Call) (string, error) {
		return "", errors.New("boom")
	}}
	m := turnModel(calls(engine.ToolCall{ID: "f1", Name: "flaky", Args: []byte(`{}`)}), calls(engine.ToolCall{ID: "e1", Name: "echo", Args: []byte(`{"text":"x"}`)}), answer(results))
	for _, tt := range []struct {
		cond string
		at   []string // phase:step of each pause
	}{
		{"step=2", []string{"decide:2"}},
		{"error", []string{"decide:2"}},
		{"tokens>0", []string{"decide:1", "decide:2", "decide:3"}},
		{"agent=boss", []string{"decide:1"}},
		{"agent=other", nil},
		{"tool=echo", []string{"act:2"}},
	} {
		t.Run(tt.cond, func(t *testing.T) {
			g := &breakGate{bs: breaks(t, tt.cond)}
			cfg := engine.Config{Model: m, Agent: "boss", Agents: []engine.Agent{{Name: "boss", Description: "leads", Model: m}}, Gate: g, Tools: enginetest.Registry(t, enginetest.EchoTool(), fail)}
			_, res, _ := runTree(t, cfg, "go")
			if res.StopReason != engine.StopAnswered {
				t.Fatalf("result: %+v", res)
			}
			var at []string
			for _, p := range g.seen {
				at = append(at, string(p.At)+":"+strconv.Itoa(p.Step))
				if p.Break != tt.cond {
					t.Errorf("pause says %q hit", p.Break)
				}
			}
			if strings.Join(at, " ") != strings.Join(tt.at, " ") {
				t.Errorf("paused at %v, want %v", at, tt.at)
			}
		})
	}
}

// An answer whose text meets a breakpoint pauses before it is given.
func TestBreakBeforeTheAnswer(t *testing.T) {
	m := turnModel(answer(func(*engine.Request) string { return "the password is hunter2" }))
	g := &breakGate{bs: breaks(t, "text=/password/"), verdicts: []func(engine.Pending) engine.Verdict{
		func(engine.Pending) engine.Verdict { return engine.Verdict{Action: engine.Abort} }}}
	_, res, _ := runTree(t, engine.Config{Model: m, Gate: g}, "go")
	if len(g.seen) != 1 || g.seen[0].At != engine.Observe || g.seen[0].Answer != "the password is hunter2" {
		t.Fatalf("pauses: %+v", g.seen)
	}
	if res.StopReason != engine.StopCancelled {
		t.Fatalf("aborted before the answer, the run ended %+v", res)
	}
}

// Respond answers for the tool: it does not run, the model sees the
// person's result, and the journal says who gave it.
func TestRespondForTheTool(t *testing.T) {
	ran := false
	tool := engine.Tool{Name: "weather", Description: "weather", Schema: []byte(`{"type":"object"}`), Func: func(context.Context, *engine.Call) (string, error) {
		ran = true
		return "sunny", nil
	}}
	m := turnModel(calls(engine.ToolCall{ID: "w1", Name: "weather", Args: []byte(`{}`)}), answer(results))
	g := &breakGate{bs: breaks(t, "tool=weather"), verdicts: []func(engine.Pending) engine.Verdict{
		func(engine.Pending) engine.Verdict {
			return engine.Verdict{Action: engine.Respond, Result: "a hurricane"}
		}}}
	rec, res, _ := runTree(t, engine.Config{Model: m, Gate: g, Tools: enginetest.Registry(t, tool)}, "go")
	if ran || res.Answer != "a hurricane" {
		t.Fatalf("ran=%v answer=%q", ran, res.Answer)
	}
	fin := rec.Finished()
	if len(fin) != 1 || fin[0].By != "person" || fin[0].Status != engine.ToolOK {
		t.Errorf("tool_finished: %+v", fin)
	}
	resumed := rec.Of(engine.KindGateResumed)
	if len(resumed) != 1 || resumed[0].Data.(*engine.GateResumed).Result != "a hurricane" {
		t.Errorf("gate_resumed: %+v", resumed)
	}
}

// An edit of the request at a decide pause changes what this decision
// sends, is journaled, and leaves the history as it was; an edit that does
// not fit is told and the request goes unedited.
func TestEditTheRequest(t *testing.T) {
	var got []*engine.Request
	m := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		r := *req
		got = append(got, &r)
		return engine.Decision{Text: "ok"}, nil
	})
	sys := "You are terse."
	g := &breakGate{bs: breaks(t, "step=1"), verdicts: []func(engine.Pending) engine.Verdict{
		func(p engine.Pending) engine.Verdict {
			if p.Request == nil || len(p.Request.Messages) != 1 {
				t.Errorf("the pause does not show the request: %+v", p.Request)
			}
			return engine.Verdict{Edit: &engine.RequestEdit{System: &sys, Note: "answer in French"}}
		}}}
	rec, res, s := runTree(t, engine.Config{Model: m, Gate: g}, "hello")
	if res.StopReason != engine.StopAnswered || len(got) != 1 {
		t.Fatalf("result %+v, %d requests", res, len(got))
	}
	if got[0].System != sys || len(got[0].Messages) != 2 || !strings.Contains(got[0].Messages[1].Content, "answer in French") {
		t.Errorf("the model was sent %+v", got[0])
	}
	ed := rec.Of(engine.KindRequestEdited)
	if len(ed) != 1 || ed[0].Data.(*engine.RequestEdited).Note != "answer in French" || ed[0].Data.(*engine.RequestEdited).Tokens == 0 {
		t.Fatalf("request_edited: %+v", ed)
	}
	// The model said no usage: the estimate is the size of what was sent.
	if u := rec.Of(engine.KindUsage); len(u) != 1 || u[0].Data.(*engine.UsageRecorded).PromptTokens != ed[0].Data.(*engine.RequestEdited).Tokens {
		t.Errorf("usage %+v, want the edited request's %d prompt tokens", u[0].Data, ed[0].Data.(*engine.RequestEdited).Tokens)
	}
	if h := s.History; len(h) != 2 || strings.Contains(h[0].Content, "French") {
		t.Errorf("the history changed: %+v", h)
	}
	bad := &breakGate{bs: breaks(t, "step=1"), verdicts: []func(engine.Pending) engine.Verdict{
		func(engine.Pending) engine.Verdict {
			return engine.Verdict{Edit: &engine.RequestEdit{Messages: []engine.MessageEdit{{Index: 7, Drop: true}}}}
		}}}
	rec, res, _ = runTree(t, engine.Config{Model: m, Gate: bad}, "hello")
	notes := rec.Of(engine.KindNotice)
	if res.StopReason != engine.StopAnswered || len(notes) != 1 || !strings.Contains(notes[0].Data.(*engine.Notice).Message, "message 7") {
		t.Errorf("a bad edit: %+v, notices %+v", res, notes)
	}
}
