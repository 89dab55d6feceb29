package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/engine/script"
)

func mustScript(t testing.TB, js string) engine.Model {
	t.Helper()
	m, err := script.Parse("test", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var fastRetry = engine.Retry{Initial: time.Millisecond, Max: 5 * time.Millisecond, Attempts: 3}

// TestToolFailuresAreObservations runs one tool call that goes wrong in each
// way a tool can, and checks that the model sees an honest result and the
// run still answers.
func TestToolFailuresAreObservations(t *testing.T) {
	var attempts int
	var mu sync.Mutex
	tools := []engine.Tool{
		enginetest.EchoTool(),
		{Name: "fails", Func: func(context.Context, *engine.Call) (string, error) { return "", errors.New("disk on fire") }},
		{Name: "panics", Func: func(context.Context, *engine.Call) (string, error) { panic("boom") }},
		{Name: "hangs", Timeout: 20 * time.Millisecond, Func: func(ctx context.Context, _ *engine.Call) (string, error) {
			select {} // ignores its context on purpose
		}},
		{Name: "flaky", Retryable: true, Func: func(context.Context, *engine.Call) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			attempts++
			if attempts < 3 {
				return "", engine.Transient(errors.New("503 from upstream"), 0)
			}
			return "fine now", nil
		}},
		{Name: "denied", Policy: engine.PolicyDeny, Func: func(context.Context, *engine.Call) (string, error) { return "ran", nil }},
		{Name: "inline_panics", Inline: true, Func: func(context.Context, *engine.Call) (string, error) { panic("inline boom") }},
		{Name: "inline_slow", Inline: true, Timeout: time.Millisecond, Func: func(context.Context, *engine.Call) (string, error) {
			time.Sleep(5 * time.Millisecond)
			return "late", nil
		}},
	}
	tests := []struct {
		name       string
		call       string // tool_calls JSON of the first turn
		status     engine.ToolStatus
		wantResult string
	}{
		{"ok", `{"name":"echo","arguments":{"text":"hi"}}`, engine.ToolOK, "echo: hi"},
		{"unknown tool", `{"name":"nope","arguments":{}}`, engine.ToolError, `error: unknown tool "nope"; the tools are: echo, fails`},
		{"arguments fail the schema", `{"name":"echo","arguments":{"text":5}}`, engine.ToolError, "error: arguments do not match the schema"},
		{"missing required argument", `{"name":"echo","arguments":{}}`, engine.ToolError, "missing property 'text'"},
		{"arguments not JSON", `{"name":"echo","arguments":"{\"text\": \"hi"}`, engine.ToolError, "error: arguments are not valid JSON"},
		{"tool error", `{"name":"fails","arguments":{}}`, engine.ToolError, "error: disk on fire"},
		{"panic", `{"name":"panics","arguments":{}}`, engine.ToolError, "error: tool panicked: boom"},
		{"timeout", `{"name":"hangs","arguments":{}}`, engine.ToolError, "timed out after 20ms"},
		{"retry then success", `{"name":"flaky","arguments":{}}`, engine.ToolOK, "fine now"},
		{"denied by policy", `{"name":"denied","arguments":{}}`, engine.ToolDenied, `error: tool "denied" is denied by policy`},
		{"inline panic", `{"name":"inline_panics","arguments":{}}`, engine.ToolError, "error: tool panicked: inline boom"},
		{"inline overrun", `{"name":"inline_slow","arguments":{}}`, engine.ToolError, "timed out after 1ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen string
			m := enginetest.ModelFunc(func(ctx context.Context, req *engine.Request) (engine.Decision, error) {
				if req.Turn == 0 {
					return mustScript(t, `{"turns":[{"tool_calls":[`+tt.call+`]}]}`).Decide(ctx, req)
				}
				last := req.Messages[len(req.Messages)-1]
				seen = last.Content
				if last.Role != engine.RoleTool || last.ToolCallID == "" {
					t.Errorf("last message = %+v, want a tool result with its call id", last)
				}
				return engine.Decision{Text: "done"}, nil
			})
			e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, tools...), Retry: fastRetry})
			rec := &enginetest.Recorder{}
			res := e.Run(context.Background(), engine.NewSession("s"), "go", rec)
			if res.StopReason != engine.StopAnswered {
				t.Fatalf("stop = %s (%v), want answered", res.StopReason, res.Err)
			}
			fins := rec.Finished()
			if len(fins) != 1 {
				t.Fatalf("%d tool_finished events, want 1", len(fins))
			}
			if fins[0].Status != tt.status || !strings.Contains(fins[0].Result, tt.wantResult) {
				t.Errorf("tool_finished = %s %q, want %s containing %q", fins[0].Status, fins[0].Result, tt.status, tt.wantResult)
			}
			if seen != fins[0].Result {
				t.Errorf("model saw %q, event said %q", seen, fins[0].Result)
			}
		})
	}
	if attempts != 3 {
		t.Errorf("flaky tool ran %d times, want 3", attempts)
	}
}

func TestToolRetryEvents(t *testing.T) {
	calls := 0
	flaky := engine.Tool{Name: "flaky", Retryable: true, Func: func(context.Context, *engine.Call) (string, error) {
		calls++
		return "", engine.Transient(errors.New("still down"), 0)
	}}
	notRetryable := engine.Tool{Name: "strict", Func: func(context.Context, *engine.Call) (string, error) {
		calls++
		return "", engine.Transient(errors.New("down"), 0)
	}}
	for _, tc := range []struct {
		tool        engine.Tool
		wantCalls   int
		wantRetries int
	}{{flaky, 3, 2}, {notRetryable, 1, 0}} {
		calls = 0
		m := mustScript(t, `{"turns":[{"tool_calls":[{"name":"`+tc.tool.Name+`"}]},{"answer":"ok"}]}`)
		e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, tc.tool), Retry: fastRetry})
		rec := &enginetest.Recorder{}
		e.Run(context.Background(), engine.NewSession("s"), "go", rec)
		if calls != tc.wantCalls || len(rec.Of(engine.KindRetry)) != tc.wantRetries {
			t.Errorf("%s: %d calls, %d retry events; want %d, %d", tc.tool.Name, calls, len(rec.Of(engine.KindRetry)), tc.wantCalls, tc.wantRetries)
		}
		fin := rec.Finished()[0]
		if fin.Status != engine.ToolError || fin.Attempts != tc.wantCalls {
			t.Errorf("%s: finished %s after %d attempts", tc.tool.Name, fin.Status, fin.Attempts)
		}
	}
}

func TestModelRetries(t *testing.T) {
	tests := []struct {
		name        string
		turn        string
		wantStop    engine.StopReason
		wantRetries int
		wantErr     string
	}{
		{"retry then success", `{"error":"429 too many requests","retryable":true,"fail_attempts":2,"answer":"ok"}`, engine.StopAnswered, 2, ""},
		{"retry exhausted", `{"error":"503 unavailable","retryable":true}`, engine.StopError, 2, "503 unavailable (after 3 attempts)"},
		{"not retryable", `{"error":"401 bad key"}`, engine.StopError, 0, "model: 401 bad key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := engine.New(engine.Config{Model: mustScript(t, `{"turns":[`+tt.turn+`]}`), Retry: fastRetry})
			rec := &enginetest.Recorder{}
			res := e.Run(context.Background(), engine.NewSession("s"), "go", rec)
			if res.StopReason != tt.wantStop {
				t.Fatalf("stop = %s (%v), want %s", res.StopReason, res.Err, tt.wantStop)
			}
			retries := rec.Of(engine.KindRetry)
			if len(retries) != tt.wantRetries {
				t.Errorf("%d retry events, want %d", len(retries), tt.wantRetries)
			}
			for i, ev := range retries {
				d := ev.Data.(*engine.RetryScheduled)
				if d.Attempt != i+2 || d.Op != "model" || d.Cause == "" || d.DelayMS > 5 {
					t.Errorf("retry %d = %+v", i, d)
				}
			}
			if tt.wantErr != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want %q", res.Err, tt.wantErr)
			}
			evs := rec.Events()
			fin := evs[len(evs)-1]
			if fin.Kind != engine.KindRunFinished || fin.Data.(*engine.RunFinished).StopReason != tt.wantStop {
				t.Errorf("last event = %s %+v", fin.Kind, fin.Data)
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	e := engine.New(engine.Config{Retry: engine.Retry{Initial: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 2},
		Model: mustScript(t, `{"turns":[{"error":"slow down","retryable":true,"retry_after_ms":120,"fail_attempts":1,"answer":"ok"}]}`)})
	rec := &enginetest.Recorder{}
	start := time.Now()
	res := e.Run(context.Background(), engine.NewSession("s"), "go", rec)
	if res.StopReason != engine.StopAnswered {
		t.Fatal(res.Err)
	}
	if d := rec.Of(engine.KindRetry)[0].Data.(*engine.RetryScheduled).DelayMS; d != 120 {
		t.Errorf("retry delay = %d ms, want the server's 120", d)
	}
	if el := time.Since(start); el < 120*time.Millisecond {
		t.Errorf("run took %s, less than Retry-After", el)
	}
}

func TestBackoffBounds(t *testing.T) {
	r := engine.Retry{}
	for n, ceil := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second} {
		for range 200 {
			if d := r.Delay(n+1, 0); d < 0 || d > ceil {
				t.Fatalf("Delay(%d) = %s, want within [0, %s]", n+1, d, ceil)
			}
		}
	}
	for range 200 {
		if d := r.Delay(30, 0); d > 30*time.Second {
			t.Fatalf("Delay(30) = %s, over the 30 s cap", d)
		}
	}
	if d := r.Delay(1, 45*time.Second); d != 45*time.Second {
		t.Errorf("Delay with Retry-After 45s = %s", d)
	}
}

func TestStepLimit(t *testing.T) {
	m := enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
		return engine.Decision{ToolCalls: []engine.ToolCall{{Name: "echo", Args: json.RawMessage(`{"text":"again"}`)}}}, nil
	})
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, enginetest.EchoTool()), MaxSteps: 3})
	rec := &enginetest.Recorder{}
	res := e.Run(context.Background(), engine.NewSession("s"), "loop forever", rec)
	if res.StopReason != engine.StopStepLimit || res.Steps != 3 {
		t.Fatalf("stop = %s after %d steps, want step_limit after 3", res.StopReason, res.Steps)
	}
	if n := len(rec.Of(engine.KindDecision)); n != 3 {
		t.Errorf("%d decisions, want 3", n)
	}
	fin := rec.Of(engine.KindRunFinished)[0].Data.(*engine.RunFinished)
	if fin.StopReason != engine.StopStepLimit || !strings.Contains(fin.Error, "step limit of 3") {
		t.Errorf("run_finished = %+v", fin)
	}
}

// TestCancellation cancels a run in each place it can wait, and checks it
// stops within 100 ms with stop reason cancelled.
func TestCancellation(t *testing.T) {
	blockTool := engine.Tool{Name: "block", Func: func(context.Context, *engine.Call) (string, error) { select {} }}
	tests := []struct {
		name  string
		model engine.Model
		retry engine.Retry
	}{
		{"slow model", mustScript(t, `{"turns":[{"answer":"late","delay_ms":10000}]}`), fastRetry},
		{"tool ignoring its context", mustScript(t, `{"turns":[{"tool_calls":[{"name":"block"}]},{"answer":"x"}]}`), fastRetry},
		{"retry backoff", mustScript(t, `{"turns":[{"error":"down","retryable":true,"retry_after_ms":10000}]}`), engine.Retry{Attempts: 5}},
		{"gate wait", mustScript(t, `{"turns":[{"answer":"x"}]}`), fastRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := engine.Config{Model: tt.model, Tools: enginetest.Registry(t, blockTool), Retry: tt.retry}
			if tt.name == "gate wait" {
				cfg.Gate = &stepGate{}
			}
			e := engine.New(cfg)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			events := e.Start(ctx, engine.NewSession("s"), "go", nil)
			// Cancel once the run is waiting: after its first decision or
			// model request.
			cancelled := make(chan time.Time, 1)
			armed := false
			var last engine.Event
			for ev := range events {
				if !armed && (ev.Kind == engine.KindModelRequest && tt.name != "tool ignoring its context" || ev.Kind == engine.KindToolStarted) {
					armed = true
					time.AfterFunc(20*time.Millisecond, func() { cancelled <- time.Now(); cancel() })
				}
				last = ev
			}
			took := time.Since(<-cancelled)
			fin, ok := last.Data.(*engine.RunFinished)
			if !ok || fin.StopReason != engine.StopCancelled {
				t.Fatalf("last event %s %+v, want run_finished cancelled", last.Kind, last.Data)
			}
			if took > 100*time.Millisecond {
				t.Errorf("run stopped %s after cancel, want within 100ms", took)
			}
		})
	}
}

// stepGate pauses at every decide and act and answers from a queue of
// verdicts; with the queue empty it waits for the context.
type stepGate struct {
	mu       sync.Mutex
	verdicts []engine.Verdict
	seen     []engine.Pending
}

func (g *stepGate) Stop(engine.Pending) bool { return true }

func (g *stepGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	g.mu.Lock()
	g.seen = append(g.seen, p)
	if len(g.verdicts) > 0 {
		v := g.verdicts[0]
		g.verdicts = g.verdicts[1:]
		g.mu.Unlock()
		return v, nil
	}
	g.mu.Unlock()
	<-ctx.Done()
	return engine.Verdict{}, ctx.Err()
}

func TestGate(t *testing.T) {
	proceed := engine.Verdict{Action: engine.Proceed}
	tests := []struct {
		name       string
		verdicts   []engine.Verdict // decide, act, decide
		wantStop   engine.StopReason
		wantStatus engine.ToolStatus
		wantResult string
	}{
		{"continue", []engine.Verdict{proceed, proceed, proceed}, engine.StopAnswered, engine.ToolOK, "echo: original"},
		{"edit arguments", []engine.Verdict{proceed, {Action: engine.Proceed, Args: json.RawMessage(`{"text":"edited"}`)}, proceed}, engine.StopAnswered, engine.ToolOK, "echo: edited"},
		{"edit to invalid arguments", []engine.Verdict{proceed, {Action: engine.Proceed, Args: json.RawMessage(`{"text":1}`)}, proceed}, engine.StopAnswered, engine.ToolError, "arguments do not match the schema"},
		{"skip", []engine.Verdict{proceed, {Action: engine.Skip}, proceed}, engine.StopAnswered, engine.ToolSkipped, "skipped: the person chose not to run"},
		{"deny", []engine.Verdict{proceed, {Action: engine.Deny}, proceed}, engine.StopAnswered, engine.ToolDenied, "denied this tool call"},
		{"abort at act", []engine.Verdict{proceed, {Action: engine.Abort}}, engine.StopCancelled, engine.ToolSkipped, "skipped: the run was aborted"},
		{"abort at decide", []engine.Verdict{{Action: engine.Abort}}, engine.StopCancelled, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &stepGate{verdicts: tt.verdicts}
			m := mustScript(t, `{"turns":[{"tool_calls":[{"name":"echo","arguments":{"text":"original"}}]},{"answer":"done"}]}`)
			e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, enginetest.EchoTool()), Gate: g})
			rec := &enginetest.Recorder{}
			res := e.Run(context.Background(), engine.NewSession("s"), "go", rec)
			if res.StopReason != tt.wantStop {
				t.Fatalf("stop = %s (%v), want %s", res.StopReason, res.Err, tt.wantStop)
			}
			fins := rec.Finished()
			if tt.wantStatus == "" {
				if len(fins) != 0 {
					t.Errorf("tool ran after abort at decide")
				}
				return
			}
			if len(fins) != 1 || fins[0].Status != tt.wantStatus || !strings.Contains(fins[0].Result, tt.wantResult) {
				t.Fatalf("tool_finished = %+v, want %s %q", fins, tt.wantStatus, tt.wantResult)
			}
			if g.seen[1].At != engine.Act || g.seen[1].ToolCall == nil || g.seen[1].ToolCall.Name != "echo" {
				t.Errorf("second pause = %+v, want act on echo", g.seen[1])
			}
			if p, r := len(rec.Of(engine.KindGatePaused)), len(rec.Of(engine.KindGateResumed)); p != len(tt.verdicts) || r != p {
				t.Errorf("%d gate_paused, %d gate_resumed; want %d each", p, r, len(tt.verdicts))
			}
		})
	}
}

// approveGate never stops on its own; it answers approvals.
type approveGate struct{ answer engine.Action }

func (g approveGate) Stop(engine.Pending) bool { return false }
func (g approveGate) Wait(context.Context, engine.Pending) (engine.Verdict, error) {
	return engine.Verdict{Action: g.answer}, nil
}

func TestAskPolicyUsesTheGate(t *testing.T) {
	ask := enginetest.EchoTool()
	ask.Policy = engine.PolicyAsk
	for _, tc := range []struct {
		gate   engine.Gate
		status engine.ToolStatus
	}{{nil, engine.ToolOK}, {approveGate{engine.Proceed}, engine.ToolOK}, {approveGate{engine.Deny}, engine.ToolDenied}} {
		m := mustScript(t, `{"turns":[{"tool_calls":[{"name":"echo","arguments":{"text":"x"}}]},{"answer":"done"}]}`)
		e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, ask), Gate: tc.gate})
		rec := &enginetest.Recorder{}
		e.Run(context.Background(), engine.NewSession("s"), "go", rec)
		if got := rec.Finished()[0].Status; got != tc.status {
			t.Errorf("gate %v: status %s, want %s", tc.gate, got, tc.status)
		}
		if tc.gate != nil {
			p := rec.Of(engine.KindGatePaused)
			if len(p) != 1 || p[0].Data.(*engine.GatePaused).Reason != engine.ReasonApproval {
				t.Errorf("gate %v: gate_paused = %v, want one approval", tc.gate, p)
			}
		}
	}
}

// TestParallelCallsKeepOrder runs three calls at once that finish in
// reverse order (each waits until the engine has reported the one after it)
// and checks that each result is reported as it comes and the history
// keeps call order.
func TestParallelCallsKeepOrder(t *testing.T) {
	var mu sync.Mutex
	running, peak := 0, 0
	release := make(chan struct{})
	reported := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{}), "c": make(chan struct{})}
	ordered := engine.Tool{Name: "ordered", Func: func(ctx context.Context, c *engine.Call) (string, error) {
		var in struct{ After string }
		c.Bind(&in)
		mu.Lock()
		running++
		peak = max(peak, running)
		if running == 3 {
			close(release)
		}
		mu.Unlock()
		<-release
		if in.After != "" {
			select {
			case <-reported[in.After]:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		return "done " + c.ID, nil
	}}
	var seen []engine.Message
	m := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		if req.Turn == 0 {
			return engine.Decision{ToolCalls: []engine.ToolCall{
				{ID: "a", Name: "ordered", Args: json.RawMessage(`{"after":"b"}`)},
				{ID: "b", Name: "ordered", Args: json.RawMessage(`{"after":"c"}`)},
				{ID: "c", Name: "ordered", Args: json.RawMessage(`{}`)},
			}}, nil
		}
		seen = append([]engine.Message(nil), req.Messages...)
		return engine.Decision{Text: "done"}, nil
	})
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, ordered)})
	rec := &enginetest.Recorder{}
	sink := engine.SinkFunc(func(ev engine.Event) error {
		if f, ok := ev.Data.(*engine.ToolFinished); ok {
			close(reported[f.ID])
		}
		return rec.Emit(ev)
	})
	s := engine.NewSession("s")
	if res := e.Run(context.Background(), s, "go", sink); res.StopReason != engine.StopAnswered {
		t.Fatal(res.Err)
	}
	if peak != 3 {
		t.Errorf("at most %d calls ran at once, want 3", peak)
	}
	var order []string
	for _, f := range rec.Finished() {
		order = append(order, f.ID)
	}
	if fmt.Sprint(order) != "[c b a]" {
		t.Errorf("tool_finished order = %v, want each as it came: [c b a]", order)
	}
	var got []string
	for _, msg := range seen[1:] {
		got = append(got, string(msg.Role)+":"+msg.ToolCallID+":"+msg.Content)
	}
	want := []string{"assistant::", "tool:a:done a", "tool:b:done b", "tool:c:done c"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
}

// TestTrimmingKeepsToolPairs fills a small budget and checks what the model
// is sent: the newest messages, memory always, and never a tool result
// without its assistant message.
func TestTrimmingKeepsToolPairs(t *testing.T) {
	big := strings.Repeat("x", 400) // about 100 tokens
	tests := []struct {
		name   string
		budget int
	}{{"tight", 200}, {"medium", 450}, {"roomy", 5000}, {"nothing fits", 10}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reqs [][]engine.Message
			var mems [][]engine.Fact
			m := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
				reqs = append(reqs, req.Messages)
				mems = append(mems, req.Memory)
				if req.Turn < 6 {
					return engine.Decision{ToolCalls: []engine.ToolCall{
						{Name: "echo", Args: json.RawMessage(`{"text":"` + big + `"}`)},
						{Name: "echo", Args: json.RawMessage(`{"text":"short"}`)},
					}}, nil
				}
				return engine.Decision{Text: "done"}, nil
			})
			s := engine.NewSession("s")
			s.Apply(engine.Event{Kind: engine.KindMemoryChanged, Step: 0, Data: &engine.MemoryChanged{Op: engine.MemorySet, Key: "name", Value: "Ada"}})
			// Trimming alone: compaction (compact_test.go) is off.
			e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, enginetest.EchoTool()), Budget: tt.budget, System: "be brief", Compact: engine.Compaction{Off: true}})
			rec := &enginetest.Recorder{}
			if res := e.Run(context.Background(), s, "go", rec); res.StopReason != engine.StopAnswered {
				t.Fatal(res.Err)
			}
			for i, msgs := range reqs {
				if len(msgs) == 0 {
					t.Fatalf("request %d is empty", i)
				}
				if msgs[0].Role == engine.RoleTool {
					t.Errorf("request %d starts with a tool result, cut from its call", i)
				}
				for j, msg := range msgs {
					if msg.Role == engine.RoleTool {
						prev := msgs[j-1]
						if prev.Role != engine.RoleTool && len(prev.ToolCalls) == 0 {
							t.Errorf("request %d: tool result %d does not follow its call", i, j)
						}
					}
				}
				if len(mems[i]) != 1 {
					t.Errorf("request %d lost memory: %v", i, mems[i])
				}
			}
			trims := rec.Of(engine.KindContextTrimmed)
			if tt.budget >= 5000 && len(trims) != 0 {
				t.Errorf("budget %d: %d context_trimmed events, want none", tt.budget, len(trims))
			}
			if tt.budget < 5000 {
				if len(trims) == 0 {
					t.Fatalf("budget %d: no context_trimmed event", tt.budget)
				}
				last := trims[len(trims)-1].Data.(*engine.ContextTrimmed)
				lastReq := reqs[len(reqs)-1]
				if last.Kept != len(lastReq) || last.Dropped+last.Kept != len(s.History)-1 {
					t.Errorf("trim event %+v; last request had %d of %d messages", last, len(lastReq), len(s.History)-1)
				}
			}
		})
	}
}

// TestReplayRebuildsState replays a run's events into a fresh session, after
// a JSON round trip, and expects the same state.
func TestReplayRebuildsState(t *testing.T) {
	remember := engine.Tool{Name: "remember", Func: func(_ context.Context, c *engine.Call) (string, error) {
		var in struct{ Key, Value string }
		c.Bind(&in)
		c.Memory.Set(in.Key, in.Value)
		return "ok", nil
	}}
	m := mustScript(t, `{"turns":[
		{"tool_calls":[{"name":"remember","arguments":{"key":"name","value":"Ada"}},{"name":"echo","arguments":{"text":"a"}}]},
		{"tool_calls":[{"name":"echo","arguments":{"text":"b"}}]},
		{"answer":"done"}]}`)
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, enginetest.EchoTool(), remember)})
	live := engine.NewSession("s")
	rec := &enginetest.Recorder{}
	if res := e.Run(context.Background(), live, "first", rec); res.StopReason != engine.StopAnswered || res.Answer != "done" || res.Steps != 3 {
		t.Fatalf("run = %s %q after %d steps (%v), want answered %q after 3", res.StopReason, res.Answer, res.Steps, res.Err, "done")
	}
	replayed := engine.NewSession("s")
	for _, ev := range rec.Events() {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var back engine.Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if err := replayed.Apply(back); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(live.History, replayed.History) {
		t.Errorf("history differs:\nlive     %+v\nreplayed %+v", live.History, replayed.History)
	}
	if !reflect.DeepEqual(live.Memory(), replayed.Memory()) || live.Steps != replayed.Steps || live.Usage != replayed.Usage || live.Runs != replayed.Runs {
		t.Errorf("state differs: live %v %d %+v, replayed %v %d %+v", live.Memory(), live.Steps, live.Usage, replayed.Memory(), replayed.Steps, replayed.Usage)
	}
	if len(live.History) != 7 { // the task, three decisions, three tool results
		t.Errorf("live history has %d messages, want 7: %+v", len(live.History), live.History)
	}
	if f := live.Memory(); len(f) != 1 || f[0] != (engine.Fact{Key: "name", Value: "Ada", Step: 1}) {
		t.Errorf("memory = %+v", f)
	}
}

func TestDecodeEvent(t *testing.T) {
	tests := []struct {
		name, in string
		check    func(engine.Event) bool
	}{
		{"kind first", `{"v":1,"kind":"retry","step":2,"data":{"op":"model","attempt":2}}`,
			func(e engine.Event) bool { return e.Step == 2 && e.Data.(*engine.RetryScheduled).Attempt == 2 }},
		{"data first", `{"data":{"task":"say \"kind\":\"retry\""},"kind":"run_started"}`,
			func(e engine.Event) bool { return e.Data.(*engine.RunStarted).Task == `say "kind":"retry"` }},
		{"misleading kind in data", `{"data":{"task":"\"kind\":\"retry\""},"kind":"run_started"}`,
			func(e engine.Event) bool {
				return e.Kind == engine.KindRunStarted && e.Data.(*engine.RunStarted).Task != ""
			}},
		{"null data", `{"kind":"step_finished","data":null}`, func(e engine.Event) bool { return e.Data == nil }},
		{"no data", `{"kind":"step_finished"}`, func(e engine.Event) bool { return e.Data == nil }},
	}
	for _, tt := range tests {
		ev, err := engine.DecodeEvent([]byte(tt.in))
		if err != nil || !tt.check(ev) {
			t.Errorf("%s: %+v, %v", tt.name, ev, err)
		}
	}
	if _, err := engine.DecodeEvent([]byte(`{"kind":"retry","data":{"attempt":"two"}}`)); err == nil {
		t.Errorf("a payload of the wrong type decoded")
	}
}

func TestUnknownKindIsKept(t *testing.T) {
	var ev engine.Event
	if err := json.Unmarshal([]byte(`{"v":9,"kind":"hologram","data":{"x":1}}`), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Known() || string(ev.Data.(json.RawMessage)) != `{"x":1}` {
		t.Errorf("event = %+v", ev)
	}
}

func TestConcurrentRunsShareNothing(t *testing.T) {
	e := engine.New(engine.Config{Model: mustScript(t, `{"turns":[{"tool_calls":[{"name":"echo","arguments":{"text":"x"}}]},{"answer":"done"}]}`), Tools: enginetest.Registry(t, enginetest.EchoTool())})
	var wg sync.WaitGroup
	sessions := make([]*engine.Session, 50)
	for i := range sessions {
		sessions[i] = engine.NewSession(fmt.Sprint(i))
		wg.Go(func() {
			if res := e.Run(context.Background(), sessions[i], "go", nil); res.StopReason != engine.StopAnswered {
				t.Errorf("run %d: %s %v", i, res.StopReason, res.Err)
			}
		})
	}
	wg.Wait()
	for i, s := range sessions {
		if len(s.History) != 4 || s.Steps != 2 {
			t.Errorf("session %d: %d messages, %d steps", i, len(s.History), s.Steps)
		}
	}
}

func TestOneRunPerSession(t *testing.T) {
	e := engine.New(engine.Config{Model: mustScript(t, `{"turns":[{"answer":"x","delay_ms":10000}]}`)})
	s := engine.NewSession("s")
	ctx, cancel := context.WithCancel(context.Background())
	ch := e.Start(ctx, s, "first", nil)
	<-ch // run_started: the run holds the session
	if res := e.Run(context.Background(), s, "second", nil); !errors.Is(res.Err, engine.ErrBusy) {
		t.Errorf("second run: %v, want ErrBusy", res.Err)
	}
	cancel()
	for range ch {
	}
}

func TestSinkErrorEndsRun(t *testing.T) {
	e := engine.New(engine.Config{Model: mustScript(t, `{"turns":[{"answer":"x"}]}`)})
	n := 0
	sink := engine.SinkFunc(func(ev engine.Event) error {
		n++
		if ev.Kind == engine.KindModelRequest {
			return errors.New("disk full")
		}
		return nil
	})
	res := e.Run(context.Background(), engine.NewSession("s"), "go", sink)
	if res.StopReason != engine.StopError || !strings.Contains(res.Err.Error(), "disk full") {
		t.Errorf("result = %+v, want an error naming the sink's", res)
	}
}

func TestRegistryRejectsBadTools(t *testing.T) {
	fn := func(context.Context, *engine.Call) (string, error) { return "", nil }
	for _, tc := range []struct {
		name  string
		tools []engine.Tool
		want  string
	}{
		{"no name", []engine.Tool{{Func: fn}}, "a name and a function"},
		{"duplicate", []engine.Tool{{Name: "a", Func: fn}, {Name: "a", Func: fn}}, "registered twice"},
		{"bad schema", []engine.Tool{{Name: "a", Func: fn, Schema: json.RawMessage(`{"type":"nonsense"}`)}}, "schema"},
		{"schema not JSON", []engine.Tool{{Name: "a", Func: fn, Schema: json.RawMessage(`{`)}}, "schema"},
	} {
		if _, err := engine.NewRegistry(tc.tools...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// holdingSink is a Releaser that holds events until Flush, like the journal.
type holdingSink struct {
	held, written []engine.Event
	flushes       int
}

func (h *holdingSink) Emit(ev engine.Event) error { h.held = append(h.held, ev); return nil }
func (h *holdingSink) Flush() error               { _, err := h.Release(); return err }
func (h *holdingSink) Release() ([]engine.Event, error) {
	h.flushes++
	out := h.held
	h.written = append(h.written, out...)
	h.held = nil
	return out, nil
}

// TestSinksHoldUntilWritten: subscribers after a holding sink hear of an
// event only after it was written, nested Sinks included, and nothing is
// held while the run waits for its model.
func TestSinksHoldUntilWritten(t *testing.T) {
	first := &holdingSink{}
	var order []string
	sub := engine.SinkFunc(func(ev engine.Event) error {
		written := false
		for _, w := range first.written {
			if w.Kind == ev.Kind && w.Time.Equal(ev.Time) {
				written = true
			}
		}
		if !written {
			t.Errorf("%s reached a subscriber before it was written", ev.Kind)
		}
		order = append(order, string(ev.Kind))
		return nil
	})
	var atDecide []int
	m := enginetest.ModelFunc(func(ctx context.Context, req *engine.Request) (engine.Decision, error) {
		atDecide = append(atDecide, len(first.held))
		if req.Turn == 0 {
			return engine.Decision{ToolCalls: []engine.ToolCall{{Name: "echo", Args: json.RawMessage(`{"text":"x"}`)}}}, nil
		}
		return engine.Decision{Text: "done"}, nil
	})
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, enginetest.EchoTool())})
	var last engine.Event
	for ev := range e.Start(context.Background(), engine.NewSession("s"), "go", engine.Sinks{first, sub}) {
		last = ev
	}
	if last.Kind != engine.KindRunFinished || len(first.held) != 0 || len(order) != len(first.written) {
		t.Errorf("last %s, %d held, %d written, %d delivered", last.Kind, len(first.held), len(first.written), len(order))
	}
	for i, n := range atDecide {
		if n != 0 {
			t.Errorf("decision %d: %d events held while the model was asked", i, n)
		}
	}
	if first.flushes > 8 {
		t.Errorf("%d flushes for a two-step run", first.flushes)
	}
}

// TestArgumentsThatAreNotJSONRoundTrip: events holding a model's malformed
// arguments encode and decode byte for byte.
func TestArgumentsThatAreNotJSONRoundTrip(t *testing.T) {
	bad := json.RawMessage(`{"text": "unclosed`)
	for _, ev := range []engine.Event{
		{Kind: engine.KindDecision, Data: &engine.Decided{ToolCalls: []engine.ToolCall{{ID: "c", Name: "echo", Args: bad}}}},
		{Kind: engine.KindGateResumed, Data: &engine.GateResumed{Action: engine.Proceed, Args: bad}},
		{Kind: engine.KindGatePaused, Data: &engine.GatePaused{At: engine.Act, ToolCall: &engine.ToolCall{Name: "echo", Args: bad}}},
	} {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("%s: %v", ev.Kind, err)
		}
		back, err := engine.DecodeEvent(b)
		if err != nil || !reflect.DeepEqual(back.Data, ev.Data) {
			t.Errorf("%s: %s decoded to %+v, %v", ev.Kind, b, back.Data, err)
		}
	}
}

// TestPayloadsEncodeAsEncodingJSONWould: the payloads that write their own
// JSON decode to what encoding/json's output decodes to, tricky text
// included.
func TestPayloadsEncodeAsEncodingJSONWould(t *testing.T) {
	tricky := "quote \" backslash \\ newline \n tab \t nul \x00 bell \x07 bad \xff\xfe utf8 é ✓ 😀 <&>"
	payloads := []engine.Event{
		{Kind: engine.KindStepStarted, Data: &engine.StepStarted{Turn: 7}},
		{Kind: engine.KindStepFinished, Data: &engine.StepFinished{ToolCalls: 3}},
		{Kind: engine.KindModelRequest, Data: &engine.ModelRequest{Messages: 1, MemoryFacts: 2, Tools: 3, Tokens: 4, SystemTokens: 5, MemoryTokens: 6, ToolTokens: 7, Budget: 8}},
		{Kind: engine.KindModelRequest, Data: &engine.ModelRequest{Messages: 1, Tokens: 4, InstructionTokens: 9, SummaryTokens: 10, Budget: 8, Trigger: 6, Window: 12, PromptHash: 1<<63 + 12345, Local: true},
			Agent: "a \" é", ParentRun: "run-1", ParentCall: "c", Workflow: "w", WorkflowStep: "s"},
		{Kind: engine.KindUsage, Data: &engine.UsageRecorded{Usage: engine.Usage{PromptTokens: 10, CompletionTokens: 2, Estimated: true}, SessionPrompt: 100, SessionCompletion: 20}},
		{Kind: engine.KindUsage, Data: &engine.UsageRecorded{Usage: engine.Usage{PromptTokens: 10}}},
		{Kind: engine.KindUsage, Data: &engine.UsageRecorded{Usage: engine.Usage{PromptTokens: 1000, CachedTokens: 600, Cost: 0.00123456789, Priced: 1}, SessionPrompt: 5}},
		{Kind: engine.KindUsage, Data: &engine.UsageRecorded{Usage: engine.Usage{Cost: 1e-9, Priced: 1, Calls: 3}}},
		{Kind: engine.KindToolStarted, Data: &engine.ToolStarted{Index: 1, ID: "c" + tricky, Name: "echo", Args: json.RawMessage("{\n  \"text\": \"a\\nb\"\n}")}},
		{Kind: engine.KindToolStarted, Data: &engine.ToolStarted{ID: "c", Name: "echo", Args: json.RawMessage(`{"bad`)}},
		{Kind: engine.KindToolStarted, Data: &engine.ToolStarted{ID: "c", Name: "echo"}},
		{Kind: engine.KindToolFinished, Data: &engine.ToolFinished{Index: 2, ID: "c", Name: "echo", Status: "error", Result: tricky, Error: tricky, Truncated: true, DurationMS: 12, Attempts: 2}},
		{Kind: engine.KindToolFinished, Data: &engine.ToolFinished{ID: "c", Name: "echo", Status: "ok", Result: ""}},
	}
	for _, ev := range payloads {
		ev.Time = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
		line, err := ev.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(line) || strings.Contains(string(line), "\n") {
			t.Errorf("%s: not one line of JSON: %s", ev.Kind, line)
		}
		got, err := engine.DecodeEvent(line)
		if err != nil {
			t.Fatalf("%s: %v\n%s", ev.Kind, err, line)
		}
		want := ev.Data                                    // arguments that are not JSON: encoding/json cannot write them at all
		if ref, err := json.Marshal(ev.Data); err == nil { // reflection: the payloads have no MarshalJSON
			w, err := engine.DecodeEvent([]byte(`{"kind":"` + string(ev.Kind) + `","data":` + string(ref) + `}`))
			if err != nil {
				t.Fatal(err)
			}
			want = w.Data
		}
		if !reflect.DeepEqual(got.Data, want) {
			t.Errorf("%s:\n ours %+v\n json %+v\n line %s", ev.Kind, got.Data, want, line)
		}
		if got.Agent != ev.Agent || got.ParentRun != ev.ParentRun || got.ParentCall != ev.ParentCall || got.Workflow != ev.Workflow || got.WorkflowStep != ev.WorkflowStep {
			t.Errorf("%s: the envelope did not round-trip: %s", ev.Kind, line)
		}
	}
}

func TestResultsAreCapped(t *testing.T) {
	big := engine.Tool{Name: "big", Inline: true, Func: func(context.Context, *engine.Call) (string, error) {
		return strings.Repeat("é", 20000), nil // 40,000 bytes
	}}
	m := mustScript(t, `{"turns":[{"tool_calls":[{"name":"big"}]},{"answer":"ok"}]}`)
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, big), MaxResultBytes: 1001})
	rec := &enginetest.Recorder{}
	e.Run(context.Background(), engine.NewSession("s"), "go", rec)
	fin := rec.Finished()[0]
	body, note, _ := strings.Cut(fin.Result, "\n[truncated: ")
	if !fin.Truncated || len(body) != 1000 || !utf8.ValidString(body) || note != "1000 of 40000 bytes of this result shown]" {
		t.Errorf("truncated %v, %d bytes kept, note %q", fin.Truncated, len(body), note)
	}
}

func TestRetryableErrors(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{engine.Transient(errors.New("x"), 0), true},
		{engine.Permanent(errors.New("x")), false},
		{fmt.Errorf("wrapped: %w", engine.Transient(errors.New("x"), 0)), true},
		{context.Canceled, false},
		{context.DeadlineExceeded, true},
		{io.ErrUnexpectedEOF, true},
		{syscall.ECONNRESET, true},
		{syscall.ECONNREFUSED, true},
		{&net.OpError{Op: "dial", Err: errors.New("no route")}, true},
		{errors.New("plain"), false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := engine.IsRetryable(tt.err); got != tt.want {
			t.Errorf("IsRetryable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestContinueAfterACrash replays a run cut off after one of two tool
// results (as a journal would hold it after a kill) and continues it: the
// call with a result is not run again, the one that had started is re-run
// only with approval.
func TestContinueAfterACrash(t *testing.T) {
	turns := `{"turns":[{"tool_calls":[{"name":"count","arguments":{"text":"a"}},{"name":"count","arguments":{"text":"b"}}]},{"answer":"done"}]}`
	for _, approve := range []engine.Action{engine.Proceed, engine.Deny} {
		ran := map[string]int{}
		var mu sync.Mutex
		count := engine.Tool{Name: "count", Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Text string }
			c.Bind(&in)
			mu.Lock()
			ran[in.Text]++
			mu.Unlock()
			return "counted " + in.Text, nil
		}}
		e := engine.New(engine.Config{Model: mustScript(t, turns), Tools: enginetest.Registry(t, count)})
		rec := &enginetest.Recorder{}
		e.Run(context.Background(), engine.NewSession("s"), "go", rec)
		// Cut the journal after the first tool_finished, with both calls
		// started: the process died while b ran.
		var cut []engine.Event
		finished := ""
		for _, ev := range rec.Events() {
			cut = append(cut, ev)
			if d, ok := ev.Data.(*engine.ToolFinished); ok {
				finished = d.ID
				break
			}
		}
		s := engine.NewSession("s")
		for _, ev := range cut {
			if err := s.Apply(ev); err != nil {
				t.Fatal(err)
			}
		}
		waiting, started := s.Unfinished()
		if !s.Interrupted() || len(waiting) != 1 || len(started) != 1 || waiting[0].ID == finished {
			t.Fatalf("after the crash: interrupted %v, waiting %v, started %v", s.Interrupted(), waiting, started)
		}
		clear(ran)
		e2 := engine.New(engine.Config{Model: mustScript(t, turns), Tools: enginetest.Registry(t, count), Gate: approveGate{approve}})
		res := e2.Continue(context.Background(), s, nil)
		if res.StopReason != engine.StopAnswered || res.Answer != "done" {
			t.Fatalf("continue: %+v", res)
		}
		total := 0
		for _, n := range ran {
			total += n
		}
		if want := map[engine.Action]int{engine.Proceed: 1, engine.Deny: 0}[approve]; total != want {
			t.Errorf("%s: %d calls ran again (%v), want %d", approve, total, ran, want)
		}
		for _, msg := range s.History {
			if msg.Role == engine.RoleTool && msg.ToolCallID == waiting[0].ID {
				// Denied, the model is told the call was interrupted and not run again.
				if denied := strings.Contains(msg.Content, "interrupted") && strings.Contains(msg.Content, "not run again"); denied != (approve == engine.Deny) {
					t.Errorf("%s: the re-run call's result is %q", approve, msg.Content)
				}
			}
		}
		if err := e2.Continue(context.Background(), s, nil).Err; !errors.Is(err, engine.ErrNotInterrupted) {
			t.Errorf("continuing a finished run: %v", err)
		}
	}
}

// TestCrashedConsoleEndsWithError cancels a run waiting on its model and on
// a tool, with each kind of cause: only ErrCrashed turns the stop reason
// into error, saying the console crashed; any other cancel is cancelled.
func TestCrashedConsoleEndsWithError(t *testing.T) {
	blockTool := engine.Tool{Name: "block", Func: func(ctx context.Context, _ *engine.Call) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}}
	waits := []struct {
		name  string
		turns string
		armAt engine.Kind
	}{
		{"model", `{"turns":[{"answer":"late","delay_ms":100000}]}`, engine.KindModelRequest},
		{"tool", `{"turns":[{"tool_calls":[{"name":"block"}]},{"answer":"x"}]}`, engine.KindToolStarted},
	}
	causes := []struct {
		name     string
		cause    error
		wantStop engine.StopReason
		wantErr  string
	}{
		{"crashed", engine.ErrCrashed, engine.StopError, "the console crashed"},
		{"crashed, wrapped", fmt.Errorf("ui: panic: %w", engine.ErrCrashed), engine.StopError, "the console crashed"},
		{"no cause", nil, engine.StopCancelled, ""},
		{"other cause", errors.New("interrupt signal received"), engine.StopCancelled, ""},
	}
	for _, w := range waits {
		for _, c := range causes {
			t.Run(w.name+"/"+c.name, func(t *testing.T) {
				e := engine.New(engine.Config{Model: mustScript(t, w.turns), Tools: enginetest.Registry(t, blockTool)})
				ctx, cancel := context.WithCancelCause(context.Background())
				defer cancel(nil)
				var last engine.Event
				for ev := range e.Start(ctx, engine.NewSession("s"), "go", nil) {
					if ev.Kind == w.armAt {
						cancel(c.cause)
					}
					last = ev
				}
				fin, ok := last.Data.(*engine.RunFinished)
				if !ok {
					t.Fatalf("last event %s, want run_finished", last.Kind)
				}
				if fin.StopReason != c.wantStop || !strings.Contains(fin.Error, c.wantErr) {
					t.Errorf("run_finished = %s %q, want %s containing %q", fin.StopReason, fin.Error, c.wantStop, c.wantErr)
				}
			})
		}
	}
}

// TestToolStartedWrittenBeforeTheToolRuns: a call's tool_started is written
// (flushed) before its tool runs, so that a run continued after a crash
// knows the call may have run; a pure tool (Inline and Repeatable, which
// may simply run again) skips that write, and its events go with the
// step's end, all of them.
func TestToolStartedWrittenBeforeTheToolRuns(t *testing.T) {
	for _, tc := range []struct {
		name               string
		inline, repeatable bool
		wantWritten        bool
	}{
		{"isolated", false, false, true},
		{"inline", true, false, true},
		{"isolated repeatable", false, true, true},
		{"pure", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &holdingSink{}
			written := func() bool {
				for _, ev := range sink.written {
					if ev.Kind == engine.KindToolStarted {
						return true
					}
				}
				return false
			}
			var sawWritten []bool
			tool := engine.Tool{Name: "echo", Inline: tc.inline, Repeatable: tc.repeatable,
				Func: func(context.Context, *engine.Call) (string, error) {
					sawWritten = append(sawWritten, written())
					return "ok", nil
				}}
			model := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
				if req.Turn > 0 {
					return engine.Decision{Text: "done"}, nil
				}
				return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "a", Name: "echo", Args: json.RawMessage(`{}`)}}}, nil
			})
			e := engine.New(engine.Config{Model: model, Tools: enginetest.Registry(t, tool)})
			if res := e.Run(context.Background(), engine.NewSession("s"), "go", sink); res.StopReason != engine.StopAnswered {
				t.Fatalf("run: %s %v", res.StopReason, res.Err)
			}
			if len(sawWritten) != 1 || sawWritten[0] != tc.wantWritten {
				t.Errorf("tool_started written when the tool ran: %v, want %v", sawWritten, tc.wantWritten)
			}
			kinds := map[engine.Kind]int{}
			for _, ev := range sink.written {
				kinds[ev.Kind]++
			}
			if len(sink.held) != 0 || kinds[engine.KindToolStarted] != 1 || kinds[engine.KindToolFinished] != 1 || kinds[engine.KindRunFinished] != 1 {
				t.Errorf("after the run: written %v, held %d", kinds, len(sink.held))
			}
		})
	}
}
