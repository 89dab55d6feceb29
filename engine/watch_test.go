package engine_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
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

	// One that ends its goroutine only once the watchdog has taken the
	// run over: the run, on its new goroutine, still answers.
	lateQuit := engine.Tool{Name: "late_quit", Timeout: 20 * time.Millisecond, Func: func(ctx context.Context, _ *engine.Call) (string, error) {
		<-ctx.Done()
		time.Sleep(5 * time.Millisecond) // the run goes on meanwhile
		runtime.Goexit()
		return "", nil
	}}
	e = engine.New(engine.Config{Model: callsThen("late_quit", 2), Tools: enginetest.Registry(t, lateQuit)})
	rec = &enginetest.Recorder{}
	if res := e.Run(context.Background(), engine.NewSession("s"), "go", rec); res.StopReason != engine.StopAnswered || res.Answer != "done" {
		t.Fatalf("run: %s %q (%v)", res.StopReason, res.Answer, res.Err)
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

// isolatedEngine has one isolated tool, so its runs run on a goroutine of
// their own.
func isolatedEngine(t *testing.T, m engine.Model) *engine.Engine {
	iso := engine.Tool{Name: "iso", Timeout: time.Second, Func: func(context.Context, *engine.Call) (string, error) { return "ok", nil }}
	return engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, iso)})
}

// TestRunOnItsOwnGoroutineEndsAsBefore: a run on a goroutine of its own
// ends for its caller as one on the caller's: a model's panic is the
// caller's panic, and a model's runtime.Goexit (t.FailNow) ends the
// caller's goroutine, the session no longer busy.
func TestRunOnItsOwnGoroutineEndsAsBefore(t *testing.T) {
	t.Run("panic", func(t *testing.T) {
		e := isolatedEngine(t, enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
			panic("model bug")
		}))
		defer func() {
			if p := recover(); p != "model bug" {
				t.Fatalf("recovered %v, want the model's panic", p)
			}
		}()
		e.Run(context.Background(), engine.NewSession("s"), "go", nil)
		t.Fatal("Run returned")
	})
	t.Run("goexit", func(t *testing.T) {
		e := isolatedEngine(t, enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
			runtime.Goexit()
			return engine.Decision{}, nil
		}))
		s := engine.NewSession("s")
		returned, ended := false, make(chan struct{})
		go func() {
			defer close(ended)
			e.Run(context.Background(), s, "go", nil)
			returned = true
		}()
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Fatal("the caller of Run did not end")
		}
		if returned {
			t.Error("Run returned instead of ending its caller's goroutine")
		}
		quick := isolatedEngine(t, callsThen("iso", 0))
		if res := quick.Run(context.Background(), s, "again", nil); res.Err != nil {
			t.Errorf("the session after: %v", res.Err)
		}
	})
}

// TestCancelAsWatchedCallStarts cancels runs as their watched call starts
// (the sink cancels on tool_started): the cancellation and the watchdog
// race, and every run still ends once, cancelled, its call reported once.
func TestCancelAsWatchedCallStarts(t *testing.T) {
	for i := range 300 {
		ctx, cancel := context.WithCancel(context.Background())
		rec := &offered{onEmit: func(ev engine.Event) {
			if ev.Kind == engine.KindToolStarted {
				cancel()
			}
		}}
		e := isolatedEngine(t, callsThen("iso", 1))
		res := e.Run(ctx, engine.NewSession("s"), "go", rec)
		cancel()
		rec.mu.Lock()
		events := rec.events
		rec.mu.Unlock()
		finished := 0
		for _, ev := range events {
			if ev.Kind == engine.KindRunFinished {
				finished++
			}
		}
		if finished != 1 || (res.StopReason != engine.StopCancelled && res.StopReason != engine.StopAnswered) {
			t.Fatalf("run %d: %d run_finished, stop %s (%v)", i, finished, res.StopReason, res.Err)
		}
		pairing(t, events)
	}
}

// TestWatchedRunsUnderStress runs many runs at once whose single calls
// answer in time, answer late, or never answer, with timeouts that differ
// from call to call (the watchdog's timer is left armed for an earlier
// deadline and fires early), and cancels a third of the runs at a random
// moment. Every run returns once, cancelled or answered; every call that
// started is finished once; none is timed out before its timeout; and a
// run whose calls hang is not held by them.
func TestWatchedRunsUnderStress(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	wait := func(d time.Duration) func(context.Context, *engine.Call) (string, error) {
		return func(ctx context.Context, _ *engine.Call) (string, error) {
			select {
			case <-time.After(d):
				return "ok", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
	}
	tools := []engine.Tool{
		{Name: "quick", Timeout: 40 * time.Millisecond, Func: wait(0)},
		{Name: "slow", Timeout: 60 * time.Millisecond, Func: wait(8 * time.Millisecond)},
		{Name: "hang", Timeout: 6 * time.Millisecond, Func: func(context.Context, *engine.Call) (string, error) {
			<-release // ignores its context
			return "late", nil
		}},
		{Name: "hang_long", Timeout: 15 * time.Millisecond, Func: func(context.Context, *engine.Call) (string, error) {
			<-release
			return "late", nil
		}},
	}
	timeouts := map[string]time.Duration{}
	for _, tl := range tools {
		timeouts[tl.Name] = tl.Timeout
	}
	const runs, steps = 24, 8
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			order := make([]string, steps)
			for k := range order {
				order[k] = tools[rng.IntN(len(tools))].Name
			}
			model := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
				if req.Turn >= steps {
					return engine.Decision{Text: "done"}, nil
				}
				return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c" + strconv.Itoa(req.Turn), Name: order[req.Turn]}}}, nil
			})
			e := engine.New(engine.Config{Model: model, Tools: enginetest.Registry(t, tools...)})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if i%3 == 0 {
				time.AfterFunc(time.Duration(rng.IntN(40))*time.Millisecond, cancel)
			}
			rec := &offered{}
			start := time.Now()
			res := e.Run(ctx, engine.NewSession("s"), "go", rec)
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("run %d took %v", i, el)
			}
			if res.StopReason != engine.StopAnswered && res.StopReason != engine.StopCancelled {
				t.Errorf("run %d: %s (%v)", i, res.StopReason, res.Err)
			}
			rec.mu.Lock()
			events := rec.events
			rec.mu.Unlock()
			pairing(t, events)
			for _, ev := range events {
				if f, ok := ev.Data.(*engine.ToolFinished); ok && strings.Contains(f.Result, "timed out") {
					if d := time.Duration(f.DurationMS) * time.Millisecond; d < timeouts[f.Name]-time.Millisecond {
						t.Errorf("run %d: call %s (%s) timed out after %v, its timeout is %v", i, f.ID, f.Name, d, timeouts[f.Name])
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestOwnedRunPanicFreesTheSession: a run that panics before it starts
// (a nil context, in an engine with agents, whose tree context needs one)
// leaves its session free for the next run once the caller recovers, on a
// goroutine of its own as on the caller's.
func TestOwnedRunPanicFreesTheSession(t *testing.T) {
	for _, inline := range []bool{false, true} {
		tool := engine.Tool{Name: "slow", Timeout: time.Second, Inline: inline, Func: func(context.Context, *engine.Call) (string, error) { return "ok", nil }}
		e := engine.New(engine.Config{Model: callsThen("slow", 0), Tools: enginetest.Registry(t, tool),
			Agents: []engine.Agent{{Name: "helper", Description: "helps", Model: callsThen("slow", 0)}}})
		s := engine.NewSession("s")
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("inline %v: a run with a nil context did not panic", inline)
				}
			}()
			var nilCtx context.Context
			e.Run(nilCtx, s, "go", nil)
		}()
		if res := e.Run(context.Background(), s, "go", nil); res.StopReason != engine.StopAnswered {
			t.Errorf("inline %v: the next run: %s %v", inline, res.StopReason, res.Err)
		}
	}
}
