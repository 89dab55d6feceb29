package ui_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/ui"
)

// remoteGate is the gate of a run somewhere else whose pauses a watching
// console answers, as bus.RemoteGate and bus.AnswerGate do over NATS: in
// step mode it asks at every pause, and the console's gate lets through at
// once what it would not stop at.
type remoteGate struct {
	step    atomic.Bool
	console atomic.Pointer[ui.Gate]
}

func (g *remoteGate) Stop(p engine.Pending) bool { return g.step.Load() || p.Approval }

func (g *remoteGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	c := g.console.Load()
	if !c.Stop(p) && !p.Approval {
		return engine.Verdict{Action: engine.Proceed}, nil
	}
	return c.Wait(ctx, p)
}

// followed is a session with one finished run (its journal) and a second
// run going on elsewhere in step mode, whose events come live.
type followed struct {
	journal []engine.Event
	live    <-chan engine.Event
	gate    *ui.Gate // the watching console's
	cancel  context.CancelFunc
}

func newFollowed(t *testing.T) *followed {
	t.Helper()
	rg := &remoteGate{}
	b := newBackend(t, rg)
	for range b.Start(context.Background(), "what is 17*23?") {
	}
	f := &followed{journal: b.journal(t), gate: ui.NewGate(true)}
	rg.console.Store(f.gate)
	rg.step.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	f.cancel = cancel
	t.Cleanup(cancel)
	// The stream goes on after the run, as a watcher's does.
	run, live := b.Start(ctx, "what is 6*7?"), make(chan engine.Event)
	go func() {
		defer close(live)
		for ev := range run {
			select {
			case live <- ev:
			case <-ctx.Done():
				return
			}
		}
		<-ctx.Done()
	}()
	f.live = live
	return f
}

func (f *followed) config() ui.Config {
	return ui.Config{Events: f.journal, Gate: f.gate, Model: "offline", Style: "notty",
		Follow: &ui.Follow{Session: "0mx2test0001", Events: f.live, Why: "watching 0mx2test0001: read-only"}}
}

func runes(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

// TestFollowFrames: a console following a session draws its journal and
// then the live run, shows the run's remote pauses in the pause bar and
// answers them with the usual keys; the input box says it is read-only.
func TestFollowFrames(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{120, 40}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			f := newFollowed(t)
			tm := teatest.NewTestModel(t, ui.New(f.config()), teatest.WithInitialTermSize(sz.w, sz.h))
			waitFor(t, tm, "Paused before deciding")
			tm.Send(key(tea.KeyEnter))
			waitFor(t, tm, "Paused before calling")
			tm.Send(key(tea.KeyEnter))
			waitFor(t, tm, "Paused before deciding")
			tm.Send(runes("c")) // to the end
			waitFor(t, tm, "step 4 · idle")
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model)
			frame := fm.View()
			ui.CheckFrame(t, frame, sz.w, sz.h)
			if !strings.Contains(frame, "391") || !strings.Contains(frame, "42") || !strings.Contains(frame, "read-only") {
				t.Errorf("the journal's answer, the followed run's or why it is read-only is not shown:\n%s", frame)
			}
			golden.RequireEqual(t, []byte(frame))
		})
	}
}

// TestFollowReadOnly: the keys that would start a run or change the
// session followed are refused with why; a run that ends while its pause
// is shown takes the pause away; the end of the stream is said.
func TestFollowReadOnly(t *testing.T) {
	live := make(chan engine.Event, 8)
	g := ui.NewGate(true)
	m := ui.New(ui.Config{Gate: g, Style: "notty", Follow: &ui.Follow{Session: "s1", Events: live}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if got := m.Backend().SessionID(); got != "s1" {
		t.Errorf("session %q, want s1", got)
	}
	for _, keys := range [][]tea.KeyMsg{
		{key(tea.KeyCtrlR)}, {key(tea.KeyCtrlO)},
		{runes("hello"), key(tea.KeyEnter)},
		{key(tea.KeyTab), key(tea.KeyTab), key(tea.KeyTab), runes("a")}, // Memory: add a fact
	} {
		m.Update(key(tea.KeyEsc)) // back to the input
		m.Update(key(tea.KeyCtrlU))
		for _, k := range keys {
			m.Update(k)
		}
		if v := m.View(); !strings.Contains(v, "· watching s1: read-only") || strings.Contains(v, "thinking") {
			t.Errorf("%v not refused:\n%s", keys, v)
		}
	}
	// A pause of run-1 reaches the gate while run-1 goes on elsewhere.
	verdict := make(chan engine.Verdict, 1)
	go func() {
		v, _ := g.Wait(context.Background(), engine.Pending{Session: "s1", Run: "run-1", Step: 1, At: engine.Decide})
		verdict <- v
	}()
	m.Update(readMsg(t, ui.WaitForGate(g)))
	if v := m.View(); !strings.Contains(v, "Paused before deciding") {
		t.Fatalf("no pause bar:\n%s", v)
	}
	live <- engine.Event{Session: "s1", Run: "run-1", Kind: engine.KindRunStarted, Data: &engine.RunStarted{Task: "t"}}
	live <- engine.Event{Session: "s1", Run: "run-1", Kind: engine.KindRunFinished, Data: &engine.RunFinished{StopReason: engine.StopCancelled, Error: "no console answered"}}
	close(live)
	m.Update(readMsg(t, ui.WaitForFollow(m)))
	m.Update(readMsg(t, ui.WaitForFollow(m)))
	if v := m.View(); strings.Contains(v, "Paused before") || !strings.Contains(v, "the run ended (cancelled)") {
		t.Errorf("the pause of a finished run is still shown:\n%s", v)
	}
	if v := <-verdict; v.Action != engine.Abort {
		t.Errorf("the dropped pause got %+v", v)
	}
	m.Update(readMsg(t, ui.WaitForFollow(m)))
	if v := m.View(); !strings.Contains(v, "live events ended") {
		t.Errorf("the end of the stream is not said:\n%s", v)
	}
}

// readMsg runs cmd, waiting at most a minute.
func readMsg(t *testing.T, cmd tea.Cmd) tea.Msg {
	t.Helper()
	got := make(chan tea.Msg, 1)
	go func() { got <- cmd() }()
	select {
	case msg := <-got:
		return msg
	case <-time.After(time.Minute):
		t.Fatal("no message")
		return nil
	}
}
