package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// countingTool is a tool that counts its calls; inline runs it on the
// run's goroutine.
func countingTool(name string, inline bool, ran *atomic.Int32) engine.Tool {
	return engine.Tool{Name: name, Inline: inline, Func: func(context.Context, *engine.Call) (string, error) {
		ran.Add(1)
		return name + " ran", nil
	}}
}

// TestAbortRunsNothing aborts at call k of a decision and checks that no
// call runs, not even those approved before k, and the exact events: no
// tool_started, one tool_finished (skipped) per call, the approved ones
// first, in call order, then k, then those after k; the run ends cancelled.
func TestAbortRunsNothing(t *testing.T) {
	const (
		aborted = "skipped: the run was aborted"
		before  = "skipped: the run was aborted before this call"
	)
	proceed := engine.Verdict{Action: engine.Proceed}
	abort := engine.Verdict{Action: engine.Abort}
	type fin struct {
		ID, Status, Result string
	}
	tests := []struct {
		name     string
		calls    []string // tool names, called a, b, c, … in order
		verdicts []engine.Verdict
		want     []fin
	}{
		{"abort at the first", []string{"iso", "iso", "iso"}, []engine.Verdict{proceed, abort},
			[]fin{{"a", "skipped", aborted}, {"b", "skipped", before}, {"c", "skipped", before}}},
		{"abort at the second", []string{"iso", "iso", "iso"}, []engine.Verdict{proceed, proceed, abort},
			[]fin{{"a", "skipped", before}, {"b", "skipped", aborted}, {"c", "skipped", before}}},
		{"abort at the last", []string{"iso", "iso", "iso"}, []engine.Verdict{proceed, proceed, proceed, abort},
			[]fin{{"a", "skipped", before}, {"b", "skipped", before}, {"c", "skipped", aborted}}},
		{"inline and isolated approved before", []string{"inl", "iso", "inl"}, []engine.Verdict{proceed, proceed, proceed, abort},
			[]fin{{"a", "skipped", before}, {"b", "skipped", before}, {"c", "skipped", aborted}}},
		{"a refusal before keeps its place", []string{"iso", "denied", "iso", "iso"}, []engine.Verdict{proceed, proceed, proceed, abort},
			[]fin{{"b", "denied", "error: tool \"denied\" is denied by policy"}, {"a", "skipped", before}, {"c", "skipped", before}, {"d", "skipped", aborted}}},
		// a is approved with edited arguments, b skipped by the person (its
		// result at once), c aborted: a is reported at the abort, before c.
		{"skipped and edited before", []string{"iso", "iso", "iso"}, []engine.Verdict{proceed, {Action: engine.Proceed, Args: json.RawMessage(`{}`)}, {Action: engine.Skip}, abort},
			[]fin{{"b", "skipped", "skipped: the person chose not to run"}, {"a", "skipped", before}, {"c", "skipped", aborted}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran atomic.Int32
			tools := enginetest.Registry(t, countingTool("iso", false, &ran), countingTool("inl", true, &ran),
				engine.Tool{Name: "denied", Policy: engine.PolicyDeny, Func: func(context.Context, *engine.Call) (string, error) { ran.Add(1); return "", nil }})
			var calls []engine.ToolCall
			for i, name := range tt.calls {
				calls = append(calls, engine.ToolCall{ID: string(rune('a' + i)), Name: name, Args: json.RawMessage(`{}`)})
			}
			m := enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
				return engine.Decision{ToolCalls: calls}, nil
			})
			g := &stepGate{verdicts: tt.verdicts}
			e := engine.New(engine.Config{Model: m, Tools: tools, Gate: g})
			rec := &enginetest.Recorder{}
			s := engine.NewSession("s")
			res := e.Run(context.Background(), s, "go", rec)
			if res.StopReason != engine.StopCancelled {
				t.Fatalf("stop = %s (%v), want cancelled", res.StopReason, res.Err)
			}
			if n := ran.Load(); n != 0 {
				t.Errorf("%d tool calls ran after an abort, want none", n)
			}
			if n := len(rec.Of(engine.KindToolStarted)); n != 0 {
				t.Errorf("%d tool_started events, want none", n)
			}
			var got []fin
			for _, f := range rec.Finished() {
				got = append(got, fin{f.ID, string(f.Status), f.Result})
			}
			if len(got) != len(tt.want) {
				t.Fatalf("tool_finished = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i].ID != tt.want[i].ID || got[i].Status != tt.want[i].Status || !strings.HasPrefix(got[i].Result, tt.want[i].Result) ||
					(tt.want[i].Result == aborted) != (got[i].Result == aborted) {
					t.Errorf("tool_finished %d = %v, want %v", i, got[i], tt.want[i])
				}
			}
			var tail []engine.Kind
			for _, ev := range rec.Events() {
				if ev.Kind == engine.KindGateResumed {
					tail = tail[:0]
					continue
				}
				tail = append(tail, ev.Kind)
			}
			// After the last gate_resumed: a tool_finished for each call
			// without a result yet, then run_finished, and nothing else.
			unanswered := 0
			for _, f := range tt.want {
				if strings.HasPrefix(f.Result, aborted) {
					unanswered++
				}
			}
			wantTail := strings.Repeat(string(engine.KindToolFinished)+" ", unanswered) + string(engine.KindRunFinished)
			if got := strings.Trim(fmt.Sprint(tail), "[]"); got != wantTail {
				t.Errorf("events after the abort = %s, want %s", got, wantTail)
			}
			// Every call has its result, in call order, in the history.
			var results []string
			for _, msg := range s.History {
				if msg.Role == engine.RoleTool {
					results = append(results, msg.ToolCallID)
				}
			}
			if want := strings.Join(strings.Split("abcd"[:len(calls)], ""), " "); strings.Join(results, " ") != want {
				t.Errorf("history's tool results = %v, want %s", results, want)
			}
		})
	}
}

// pairing checks the event contract on a run's events: every tool_started
// has exactly one tool_finished after it for the same call, no call is
// finished twice, and run_finished comes last.
func pairing(t *testing.T, events []engine.Event) {
	t.Helper()
	started := map[string]bool{}
	finished := map[string]int{}
	for _, ev := range events {
		switch d := ev.Data.(type) {
		case *engine.ToolStarted:
			if started[d.ID] {
				t.Errorf("call %s started twice", d.ID)
			}
			started[d.ID] = true
		case *engine.ToolFinished:
			finished[d.ID]++
		}
	}
	for id := range started {
		if finished[id] != 1 {
			t.Errorf("call %s: tool_started, then %d tool_finished; want exactly 1", id, finished[id])
		}
	}
	for id, n := range finished {
		if n > 1 {
			t.Errorf("call %s finished %d times", id, n)
		}
	}
	if len(events) == 0 || events[len(events)-1].Kind != engine.KindRunFinished {
		t.Errorf("the run did not end with run_finished")
	}
	s := engine.NewSession("s")
	for _, ev := range events {
		if err := s.Apply(ev); err != nil {
			t.Errorf("replaying %s: %v", ev.Kind, err)
		}
	}
}

// offered is a Sink that keeps every event offered to it, and may refuse
// one, as a journal whose disk fills up would.
type offered struct {
	mu     sync.Mutex
	events []engine.Event
	refuse func(engine.Event) bool
	onEmit func(engine.Event)
}

func (o *offered) Emit(ev engine.Event) error {
	o.mu.Lock()
	o.events = append(o.events, ev)
	refuse := o.refuse != nil && o.refuse(ev)
	o.mu.Unlock()
	if o.onEmit != nil {
		o.onEmit(ev)
	}
	if refuse {
		return errors.New("disk full")
	}
	return nil
}

// TestEveryStartedToolFinishes runs decisions mixing inline and isolated
// tools and ends their act phase in each way it can end, early or not; in
// each, every tool_started gets exactly one tool_finished.
func TestEveryStartedToolFinishes(t *testing.T) {
	block := engine.Tool{Name: "block", Func: func(ctx context.Context, _ *engine.Call) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}}
	ignore := engine.Tool{Name: "ignore", Func: func(context.Context, *engine.Call) (string, error) {
		select {} // ignores its context on purpose
	}}
	// retryLater fails transiently, asking for a retry in ten minutes:
	// the run waits in the inline tool's retry delay.
	retryLater := engine.Tool{Name: "retry_later", Inline: true, Retryable: true, Func: func(context.Context, *engine.Call) (string, error) {
		return "", engine.Transient(errors.New("busy"), 10*time.Minute)
	}}
	failsInline := engine.Tool{Name: "fails_inline", Inline: true, Func: func(context.Context, *engine.Call) (string, error) {
		return "", errors.New("bad input")
	}}
	panicsInline := engine.Tool{Name: "panics_inline", Inline: true, Func: func(context.Context, *engine.Call) (string, error) { panic("inline boom") }}
	panics := engine.Tool{Name: "panics", Func: func(context.Context, *engine.Call) (string, error) { panic("boom") }}
	okInline := engine.Tool{Name: "ok_inline", Inline: true, Func: func(context.Context, *engine.Call) (string, error) { return "fine", nil }}
	tools := []engine.Tool{enginetest.EchoTool(), block, ignore, retryLater, failsInline, panicsInline, panics, okInline}

	type scenario struct {
		name  string
		calls string // the first decision's tool calls
		// cancelAt cancels the run when the sink is offered an event for
		// which it holds; refuse makes the sink fail on one.
		cancelAt func(engine.Event) bool
		refuse   func(engine.Event) bool
		wantStop engine.StopReason
	}
	isKind := func(k engine.Kind, name string) func(engine.Event) bool {
		return func(ev engine.Event) bool {
			if ev.Kind != k {
				return false
			}
			switch d := ev.Data.(type) {
			case *engine.ToolStarted:
				return d.Name == name
			case *engine.ToolFinished:
				return d.Name == name
			case *engine.RetryScheduled:
				return d.Op == "tool:"+name
			}
			return false
		}
	}
	tests := []scenario{
		{name: "inline fails early, isolated run on",
			calls:    `{"name":"block","id":"a"},{"name":"fails_inline","id":"b"},{"name":"echo","id":"c","arguments":{"text":"x"}}`,
			cancelAt: isKind(engine.KindToolFinished, "echo"), wantStop: engine.StopCancelled},
		{name: "inline cancelled in its retry delay while isolated run",
			calls:    `{"name":"block","id":"a"},{"name":"ignore","id":"b"},{"name":"retry_later","id":"c"},{"name":"echo","id":"d","arguments":{"text":"x"}}`,
			cancelAt: isKind(engine.KindRetry, "retry_later"), wantStop: engine.StopCancelled},
		{name: "sink fails on an inline tool's result while isolated run",
			calls:  `{"name":"block","id":"a"},{"name":"ok_inline","id":"b"},{"name":"block","id":"c"}`,
			refuse: isKind(engine.KindToolFinished, "ok_inline"), wantStop: engine.StopError},
		{name: "sink fails on a later tool_started",
			calls:  `{"name":"block","id":"a"},{"name":"ignore","id":"b"},{"name":"echo","id":"c","arguments":{"text":"x"}}`,
			refuse: isKind(engine.KindToolStarted, "ignore"), wantStop: engine.StopError},
		{name: "tools panic, inline and isolated",
			calls:    `{"name":"panics","id":"a"},{"name":"panics_inline","id":"b"},{"name":"echo","id":"c","arguments":{"text":"x"}}`,
			wantStop: engine.StopAnswered},
		{name: "cancelled while isolated run",
			calls:    `{"name":"block","id":"a"},{"name":"ignore","id":"b"},{"name":"ok_inline","id":"c"}`,
			cancelAt: isKind(engine.KindToolFinished, "ok_inline"), wantStop: engine.StopCancelled},
		{name: "all finish",
			calls:    `{"name":"echo","id":"a","arguments":{"text":"x"}},{"name":"ok_inline","id":"b"},{"name":"fails_inline","id":"c"}`,
			wantStop: engine.StopAnswered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustScript(t, `{"turns":[{"tool_calls":[`+tt.calls+`]},{"answer":"done"}]}`)
			e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, tools...), Retry: engine.Retry{Attempts: 3}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sink := &offered{refuse: tt.refuse}
			if tt.cancelAt != nil {
				sink.onEmit = func(ev engine.Event) {
					if tt.cancelAt(ev) {
						cancel()
					}
				}
			}
			res := e.Run(ctx, engine.NewSession("s"), "go", sink)
			if res.StopReason != tt.wantStop {
				t.Errorf("stop = %s (%v), want %s", res.StopReason, res.Err, tt.wantStop)
			}
			pairing(t, sink.events)
		})
	}
}

// TestLateAnswerAfterStep: an isolated tool that ignores its context times
// out in step 1 and answers during step 2; step 2's call of another tool
// gets its own result, not the late one (the run keeps its answer channel
// only while no attempt is outstanding).
func TestLateAnswerAfterStep(t *testing.T) {
	release, returned := make(chan struct{}), make(chan struct{})
	stubborn := engine.Tool{Name: "stubborn", Timeout: 10 * time.Millisecond, Func: func(context.Context, *engine.Call) (string, error) {
		<-release
		close(returned)
		return "late", nil
	}}
	other := engine.Tool{Name: "other", Func: func(context.Context, *engine.Call) (string, error) {
		return "other ran", nil
	}}
	model := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		switch req.Turn {
		case 0:
			return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "a", Name: "stubborn"}}}, nil
		case 1:
			close(release)
			<-returned
			return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "b", Name: "other"}}}, nil
		}
		return engine.Decision{Text: "done"}, nil
	})
	e := engine.New(engine.Config{Model: model, Tools: enginetest.Registry(t, stubborn, other)})
	rec := &enginetest.Recorder{}
	if res := e.Run(context.Background(), engine.NewSession("s"), "go", rec); res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %s %v", res.StopReason, res.Err)
	}
	fins := rec.Finished()
	if len(fins) != 2 || fins[0].Status != engine.ToolError || !strings.Contains(fins[0].Result, "timed out") ||
		fins[1].Status != engine.ToolOK || fins[1].Result != "other ran" {
		for _, f := range fins {
			t.Logf("%+v", *f)
		}
		t.Fatal("step 2's call did not get its own result")
	}
}

// TestCallsPerDecisionCapped: of a decision of 70 calls, the first 64 run
// and the rest are answered with an error the model reads; the model's
// next decision runs as usual.
func TestCallsPerDecisionCapped(t *testing.T) {
	var ran atomic.Int32
	calls := make([]engine.ToolCall, 70)
	for i := range calls {
		calls[i] = engine.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "count", Args: json.RawMessage(`{}`)}
	}
	turn := 0
	model := enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
		turn++
		switch turn {
		case 1:
			return engine.Decision{ToolCalls: calls}, nil
		case 2:
			return engine.Decision{ToolCalls: calls[:1]}, nil
		}
		return engine.Decision{Text: "done"}, nil
	})
	rec := &enginetest.Recorder{}
	e := engine.New(engine.Config{Model: model, Tools: enginetest.Registry(t, countingTool("count", false, &ran))})
	res := e.Run(context.Background(), engine.NewSession("s"), "go", rec)
	if res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %+v", res)
	}
	if ran.Load() != 65 {
		t.Errorf("%d calls ran, want 64 of the first decision and 1 of the second", ran.Load())
	}
	refused := 0
	for _, f := range rec.Finished() {
		if strings.Contains(f.Result, "more than 64 tool calls") {
			refused++
		}
	}
	if refused != 6 {
		t.Errorf("%d calls refused, want 6", refused)
	}
}

// slowJournal is a sink whose flush after a tool_started takes wait, as a
// journal syncing to a server that restarts does.
type slowJournal struct {
	enginetest.Recorder
	wait    time.Duration
	pending bool
}

func (s *slowJournal) Emit(ev engine.Event) error {
	s.pending = s.pending || ev.Kind == engine.KindToolStarted
	return s.Recorder.Emit(ev)
}

func (s *slowJournal) Flush() error {
	if s.pending {
		s.pending = false
		time.Sleep(s.wait)
	}
	return nil
}

// TestToolDurationIsTheTools: a tool's reported duration is the tool's, not
// the journal's: an instant tool behind a flush of two seconds is not
// reported as a two-second call (the engine waits for tool_started to be
// written before it runs the tool, and times the tool after that).
func TestToolDurationIsTheTools(t *testing.T) {
	for _, inline := range []bool{false, true} {
		var ran atomic.Int32
		sc := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
			if len(req.Messages) > 1 {
				return engine.Decision{Text: "done"}, nil
			}
			return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c1", Name: "count", Args: json.RawMessage(`{}`)}}}, nil
		})
		sink := &slowJournal{wait: 2 * time.Second}
		e := engine.New(engine.Config{Model: sc, Tools: enginetest.Registry(t, countingTool("count", inline, &ran))})
		if res := e.Run(context.Background(), engine.NewSession("s"), "go", sink); res.StopReason != engine.StopAnswered {
			t.Fatal(res.Err)
		}
		fin := sink.Finished()
		if len(fin) != 1 || fin[0].DurationMS >= 2000 {
			t.Errorf("inline %v: the call's duration is %+v; the journal's wait was counted", inline, fin)
		}
	}
}
