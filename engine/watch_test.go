package engine_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// callsThen is a model that asks for one call of tool in each of its first
// n turns, then answers "done".
func callsThen(tool string, n int) engine.Model {
	return enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		if req.Turn >= n {
			return engine.Decision{Text: "done"}, nil
		}
		return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c" + string(rune('a'+req.Turn)), Name: tool}}}, nil
	})
}

// TestWatchedCallsOverrun: a step's single isolated call runs on the run's
// goroutine; when it ignores its deadline, another goroutine takes the run
// over. Three steps in a row overrun (each takeover is taken over again),
// every call's context is cancelled at its deadline, and the run answers
// while the three tools still hold their goroutines.
func TestWatchedCallsOverrun(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	cancelled := make(chan struct{}, 3)
	stubborn := engine.Tool{Name: "stubborn", Timeout: 20 * time.Millisecond, Func: func(ctx context.Context, _ *engine.Call) (string, error) {
		<-ctx.Done()
		cancelled <- struct{}{}
		<-release // and still does not return
		return "late", nil
	}}
	e := engine.New(engine.Config{Model: callsThen("stubborn", 3), Tools: enginetest.Registry(t, stubborn)})
	rec := &enginetest.Recorder{}
	res := e.Run(context.Background(), engine.NewSession("s"), "go", rec)
	if res.StopReason != engine.StopAnswered || res.Answer != "done" || res.Steps != 4 {
		t.Fatalf("run: %s %q %d steps (%v)", res.StopReason, res.Answer, res.Steps, res.Err)
	}
	fins := rec.Finished()
	if len(fins) != 3 {
		t.Fatalf("%d tool results, want 3", len(fins))
	}
	for _, f := range fins {
		if f.Status != engine.ToolError || !strings.Contains(f.Result, "timed out after 20ms") {
			t.Errorf("call %s: %s %q, want timed out", f.ID, f.Status, f.Result)
		}
	}
	// Each call's context was cancelled before the run went on; the
	// tools see it on their own goroutines.
	for i := range 3 {
		select {
		case <-cancelled:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of 3 calls saw their context cancelled", i)
		}
	}
	pairing(t, rec.Events())
}

// TestWatchedCallCancelled: the run is cancelled while its watched call
// ignores the cancellation; Run returns at once, cancelled, with the call
// reported as such.
func TestWatchedCallCancelled(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stubborn := engine.Tool{Name: "stubborn", Timeout: time.Hour, Func: func(context.Context, *engine.Call) (string, error) {
		cancel()
		<-release
		return "late", nil
	}}
	e := engine.New(engine.Config{Model: callsThen("stubborn", 1), Tools: enginetest.Registry(t, stubborn)})
	rec := &enginetest.Recorder{}
	res := e.Run(ctx, engine.NewSession("s"), "go", rec)
	if res.StopReason != engine.StopCancelled {
		t.Fatalf("run: %s (%v), want cancelled", res.StopReason, res.Err)
	}
	fins := rec.Finished()
	if len(fins) != 1 || fins[0].Result != "error: cancelled" {
		t.Fatalf("tool results %+v, want one cancelled", fins)
	}
	pairing(t, rec.Events())
}

// TestWatchedCallGoexit: a tool that ends its goroutine (runtime.Goexit,
// as t.FailNow does) never answers: it times out, and the run goes on.
func TestWatchedCallGoexit(t *testing.T) {
	quits := engine.Tool{Name: "quits", Timeout: 20 * time.Millisecond, Func: func(context.Context, *engine.Call) (string, error) {
		runtime.Goexit()
		return "", nil
	}}
	e := engine.New(engine.Config{Model: callsThen("quits", 2), Tools: enginetest.Registry(t, quits)})
	rec := &enginetest.Recorder{}
	res := e.Run(context.Background(), engine.NewSession("s"), "go", rec)
	if res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %s (%v)", res.StopReason, res.Err)
	}
	fins := rec.Finished()
	if len(fins) != 2 || !strings.Contains(fins[0].Result, "timed out") || !strings.Contains(fins[1].Result, "timed out") {
		t.Fatalf("tool results %+v, want two timed out", fins)
	}
	pairing(t, rec.Events())
}

// TestWatchdogNotEarly: the watchdog's timer is left armed for an earlier
// call's deadline; when it fires during a later call that has longer, that
// call is not cut short.
func TestWatchdogNotEarly(t *testing.T) {
	quick := engine.Tool{Name: "quick", Timeout: 10 * time.Millisecond, Func: func(context.Context, *engine.Call) (string, error) {
		return "quick done", nil
	}}
	slow := engine.Tool{Name: "slow", Timeout: 5 * time.Second, Func: func(ctx context.Context, _ *engine.Call) (string, error) {
		select {
		case <-time.After(60 * time.Millisecond): // past quick's deadline
			return "slow done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}}
	model := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		switch req.Turn {
		case 0:
			return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "a", Name: "quick"}}}, nil
		case 1:
			return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "b", Name: "slow"}}}, nil
		}
		return engine.Decision{Text: "done"}, nil
	})
	e := engine.New(engine.Config{Model: model, Tools: enginetest.Registry(t, quick, slow)})
	rec := &enginetest.Recorder{}
	if res := e.Run(context.Background(), engine.NewSession("s"), "go", rec); res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %s (%v)", res.StopReason, res.Err)
	}
	fins := rec.Finished()
	if len(fins) != 2 || fins[0].Result != "quick done" || fins[1].Status != engine.ToolOK || fins[1].Result != "slow done" {
		t.Fatalf("tool results %+v", fins)
	}
}
