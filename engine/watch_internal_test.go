package engine

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Regression tests for two interleavings of the watchdog (fire) with the
// run, which a review found: the engine's watchHook holds fire at a point
// while the run goes on.

// callEach asks for one call of tools[k] at turn k, then answers.
type callEach []string

func (m callEach) Decide(_ context.Context, req *Request) (Decision, error) {
	if req.Turn < len(m) {
		return Decision{ToolCalls: []ToolCall{{ID: "c" + strconv.Itoa(req.Turn), Name: m[req.Turn]}}}, nil
	}
	return Decision{Text: "done"}, nil
}

// onTurn calls f before the model decides at turn n.
type onTurn struct {
	Model
	n int
	f func()
}

func (m onTurn) Decide(ctx context.Context, req *Request) (Decision, error) {
	if req.Turn == m.n {
		m.f()
	}
	return m.Model.Decide(ctx, req)
}

func watchEngine(t *testing.T, m Model, tools ...Tool) *Engine {
	t.Helper()
	reg, err := NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return New(Config{Model: m, Tools: reg})
}

// TestWatchdogAfterLostCAS: the timer fires for call A past its deadline,
// and A returns before fire's CAS: the run keeps A. The next call, C,
// overruns its deadline and must still be taken over (fire looks again
// instead of leaving a timer that has fired standing for C's).
func TestWatchdogAfterLostCAS(t *testing.T) {
	releaseA, turn1 := make(chan struct{}), make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	a := Tool{Name: "a", Timeout: 20 * time.Millisecond, Func: func(context.Context, *Call) (string, error) {
		<-releaseA
		return "a", nil
	}}
	c := Tool{Name: "c", Timeout: 20 * time.Millisecond, Func: func(context.Context, *Call) (string, error) {
		<-release // ignores its context
		return "c", nil
	}}
	e := watchEngine(t, onTurn{Model: callEach{"a", "c"}, n: 1, f: func() { turn1 <- struct{}{} }}, a, c)
	var once sync.Once
	e.watchHook = func(p int) {
		if p != pauseBeforeCAS {
			return
		}
		once.Do(func() {
			close(releaseA)                   // A returns: the run's CAS wins
			<-turn1                           // the run has gone on to the next step
			time.Sleep(10 * time.Millisecond) // and started C
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	res := e.Run(ctx, NewSession("s"), "go", nil)
	if el := time.Since(start); res.StopReason != StopAnswered || el > 2*time.Second {
		t.Fatalf("run: %s after %v: C (timeout 20ms) was not taken over at its deadline", res.StopReason, el.Round(time.Millisecond))
	}
}

// TestWatchdogStaleReset: the timer, armed for call A's early deadline,
// fires while B (a long timeout) runs; fire re-arms it for B's deadline,
// but B returns and C (a short timeout) starts before fire's Reset lands.
// C must be taken over at its own deadline, not B's.
func TestWatchdogStaleReset(t *testing.T) {
	releaseB, cStarted := make(chan struct{}), make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	// A's deadline is early, but far enough that A (instant) never
	// overruns it on a busy machine: A timed out would leave no stale
	// timer, and B would wait out its own 5 s.
	a := Tool{Name: "a", Timeout: 300 * time.Millisecond, Func: func(context.Context, *Call) (string, error) { return "a", nil }}
	b := Tool{Name: "b", Timeout: 5 * time.Second, Func: func(context.Context, *Call) (string, error) {
		<-releaseB
		return "b", nil
	}}
	c := Tool{Name: "c", Timeout: 20 * time.Millisecond, Func: func(context.Context, *Call) (string, error) {
		close(cStarted)
		<-release // ignores its context
		return "c", nil
	}}
	e := watchEngine(t, callEach{"a", "b", "c"}, a, b, c)
	var once sync.Once
	e.watchHook = func(p int) {
		if p != pauseBeforeReset {
			return
		}
		once.Do(func() {
			close(releaseB)
			<-cStarted // C's arm has run
		})
	}
	start := time.Now()
	res := e.Run(context.Background(), NewSession("s"), "go", nil)
	if el := time.Since(start); res.StopReason != StopAnswered || el > 2*time.Second {
		t.Fatalf("run: %s after %v: C (timeout 20ms) was taken over at B's deadline", res.StopReason, el.Round(time.Millisecond))
	}
}

// TestCallCtxRaces: a context made from a call's context while it is
// cancelled does not deadlock (context.WithCancel calls AfterFunc holding
// the lock f takes), and Err reports cancelled only once Done is closed.
func TestCallCtxRaces(t *testing.T) {
	for i := range 3000 {
		c := &callCtx{Context: context.Background()}
		done := c.Done() // a waiter: cancel takes its slow path
		go c.cancel()
		made := make(chan struct{})
		go func() {
			_, childCancel := context.WithCancel(c)
			childCancel()
			close(made)
		}()
		for c.Err() == nil {
		}
		select {
		case <-done:
		default:
			t.Fatalf("iteration %d: Err reports cancelled, Done is open", i)
		}
		select {
		case <-made:
		case <-time.After(5 * time.Second):
			t.Fatalf("iteration %d: context.WithCancel of a call's context deadlocked", i)
		}
	}
}

// slowFlush is a Flusher whose Flush after the tool_started of the tool
// "hang" takes d (a journal's fsync); it notes that call's start and end.
type slowFlush struct {
	d             time.Duration
	last          Kind
	started, fins time.Time
}

func (s *slowFlush) Emit(ev Event) error {
	s.last = ev.Kind
	switch d := ev.Data.(type) {
	case *ToolStarted:
		if d.Name == "hang" {
			s.started = ev.Time
		}
	case *ToolFinished:
		if d.Name == "hang" {
			s.fins = ev.Time
		}
	}
	return nil
}

func (s *slowFlush) Flush() error {
	if s.last == KindToolStarted {
		s.last = ""
		time.Sleep(s.d)
	}
	return nil
}

// TestWatchdogCountsFromStart: a watched call's deadline counts from its
// tool_started, however long that event's flush took, as an isolated
// call's does.
func TestWatchdogCountsFromStart(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	hang := Tool{Name: "hang", Timeout: 2 * time.Second, Func: func(context.Context, *Call) (string, error) {
		<-release // ignores its context
		return "", nil
	}}
	e := watchEngine(t, callEach{"hang"}, hang)
	// Counted from after the flush, the timeout would end the call 3.5 s
	// after its tool_started: past the bound by a second, which a busy
	// machine's late timer does not make up (100 ms did, under load).
	sink := &slowFlush{d: 1500 * time.Millisecond}
	if res := e.Run(context.Background(), NewSession("s"), "go", sink); res.StopReason != StopAnswered {
		t.Fatalf("run: %s %v", res.StopReason, res.Err)
	}
	if took := sink.fins.Sub(sink.started); took >= 3*time.Second {
		t.Fatalf("the call timed out %v after its tool_started (timeout 2s, flush 1.5s)", took.Round(time.Millisecond))
	}
}

// TestWatchdogTakesSlowStart: the run's goroutine is held just after it
// published call X and before it runs X, past X's deadline: the watchdog
// takes the run over, which goes on to the next step (reusing the step's
// buffers) while the held goroutine, once it resumes, touches none of
// them (-race) and does not run X.
func TestWatchdogTakesSlowStart(t *testing.T) {
	a := Tool{Name: "a", Timeout: 50 * time.Millisecond, Func: func(context.Context, *Call) (string, error) { return "a", nil }}
	var ran sync.Mutex
	xRan := false
	x := Tool{Name: "x", Timeout: 10 * time.Millisecond, Func: func(context.Context, *Call) (string, error) {
		ran.Lock()
		xRan = true
		ran.Unlock()
		return "x", nil
	}}
	e := watchEngine(t, callEach{"a", "x", "a"}, a, x)
	var mu sync.Mutex
	n := 0
	resumed := make(chan struct{})
	e.watchHook = func(p int) {
		if p != pauseAfterPublish {
			return
		}
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		if k == 2 { // X's
			time.Sleep(150 * time.Millisecond)
			close(resumed)
		}
	}
	res := e.Run(context.Background(), NewSession("s"), "go", nil)
	if res.StopReason != StopAnswered {
		t.Fatalf("run: %s %v", res.StopReason, res.Err)
	}
	<-resumed
	time.Sleep(20 * time.Millisecond) // the held goroutine goes on, then returns
	ran.Lock()
	defer ran.Unlock()
	if xRan {
		t.Error("x ran after the run had timed it out")
	}
}
