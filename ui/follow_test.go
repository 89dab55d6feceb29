package ui_test

import (
	"context"
	"fmt"
	"regexp"
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

// followConsole is a console following session s1 (no journal), its live
// events fed by the test, its gate in step mode as watch makes it.
func followConsole(t *testing.T) (*ui.Model, *ui.Gate, chan<- engine.Event) {
	t.Helper()
	live := make(chan engine.Event, 16)
	g := ui.NewGate(true)
	m := ui.New(ui.Config{Gate: g, Model: "offline", Style: "notty", Follow: &ui.Follow{Session: "s1", Events: live}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	return m, g, live
}

// ask hands p to the console through its gate, as a run elsewhere asks,
// and returns where the verdict comes.
func ask(t *testing.T, m *ui.Model, g *ui.Gate, p engine.Pending) <-chan engine.Verdict {
	t.Helper()
	verdict := make(chan engine.Verdict, 1)
	go func() {
		v, err := g.Wait(context.Background(), p)
		if err == nil {
			verdict <- v
		}
	}()
	m.Update(readMsg(t, ui.WaitForGate(g)))
	return verdict
}

// feed sends evs on the followed stream and has the console apply them.
func feed(t *testing.T, m *ui.Model, live chan<- engine.Event, evs ...engine.Event) {
	t.Helper()
	for _, ev := range evs {
		live <- ev
		m.Update(readMsg(t, ui.WaitForFollow(m)))
	}
}

// verdictOf waits at most a minute for a verdict.
func verdictOf(t *testing.T, ch <-chan engine.Verdict) engine.Verdict {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatal("no verdict")
		return engine.Verdict{}
	}
}

// statusAndHelp are the frame's lines from the status line down.
func statusAndHelp(frame string) string {
	lines := strings.Split(frame, "\n")
	for i, l := range lines {
		if strings.Contains(l, "· session ") {
			return strings.Join(lines[i:], "\n")
		}
	}
	return ""
}

// TestFollowHelpFrames: a followed session's status line says it is
// watched, not that it is in step mode, and its help, short and full (?),
// lists the keys that work there and none that would send a task, start a
// run or change the session.
func TestFollowHelpFrames(t *testing.T) {
	unusable := []string{"send", "newline", "cancel run", "fork", "fact", "continue", "sessions", "history", "search"}
	for _, sz := range []struct{ w, h int }{{120, 40}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			m, _, _ := followConsole(t)
			m.Update(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
			check := func(where string, want ...string) {
				t.Helper()
				got := statusAndHelp(m.View())
				for _, w := range want { // the full help puts a key and its help in columns
					if !regexp.MustCompile(strings.ReplaceAll(regexp.QuoteMeta(w), " ", `\s+`)).MatchString(got) {
						t.Errorf("%s: %q is not shown:\n%s", where, w, got)
					}
				}
				for _, u := range append(unusable, "step mode ·", "step mode from") {
					if strings.Contains(got, u) {
						t.Errorf("%s: %q is shown:\n%s", where, u, got)
					}
				}
			}
			check("input", "watching (read-only)", "ctrl+c quit", "? all keys")
			m.Update(key(tea.KeyTab))
			m.Update(key(tea.KeyTab))
			check("timeline", "step details")
			m.Update(key(tea.KeyTab))
			check("memory", "next pane")
			m.Update(key(tea.KeyEsc))
			m.Update(runes("?"))
			check("full help", "ctrl+c quit", "approve", "abort run", "ctrl+t step mode", "commands", "pgup/pgdn")
			frame := m.View()
			ui.CheckFrame(t, frame, sz.w, sz.h)
			golden.RequireEqual(t, []byte(frame))
		})
	}
}

// TestFollowStepModeOff: ctrl+t in a followed session turns step mode off
// and answers the step pauses shown or queued with proceed, so that the
// runs go on; an approval is left for the person to answer.
func TestFollowStepModeOff(t *testing.T) {
	t.Run("step pause", func(t *testing.T) {
		m, g, _ := followConsole(t)
		v := ask(t, m, g, engine.Pending{Session: "s1", Run: "run-1", Step: 1, At: engine.Decide})
		if f := m.View(); !strings.Contains(f, "Paused before deciding") {
			t.Fatalf("no pause bar:\n%s", f)
		}
		m.Update(key(tea.KeyCtrlT))
		if got := verdictOf(t, v); got.Action != engine.Proceed {
			t.Errorf("the step pause got %+v, want proceed", got)
		}
		f := m.View()
		if strings.Contains(f, "Paused before") || !strings.Contains(f, "step mode off: runs you answer go on unpaused") ||
			!strings.Contains(f, "watching, step mode off") {
			t.Errorf("the pause is still shown, or step mode off is not said:\n%s", f)
		}
		if g.Stepping() || g.Stop(engine.Pending{Session: "s1", Run: "run-1", Step: 2, At: engine.Decide}) {
			t.Error("the gate still stops the run")
		}
		m.Update(key(tea.KeyCtrlT))
		if f := m.View(); !strings.Contains(f, "step mode on: the runs submitted with --step pause here") || !g.Stepping() {
			t.Errorf("step mode is not back on:\n%s", f)
		}
	})
	t.Run("approval", func(t *testing.T) {
		m, g, _ := followConsole(t)
		call := &engine.ToolCall{ID: "c1", Name: "shell", Args: []byte(`{"command":"ls"}`)}
		approval := ask(t, m, g, engine.Pending{Session: "s1", Run: "run-1", Step: 1, At: engine.Act, ToolCall: call, Approval: true})
		step := ask(t, m, g, engine.Pending{Session: "s1", Run: "run-2", Step: 1, At: engine.Decide}) // queued behind it
		m.Update(key(tea.KeyCtrlT))
		if got := verdictOf(t, step); got.Action != engine.Proceed {
			t.Errorf("the queued step pause got %+v, want proceed", got)
		}
		if f := m.View(); !strings.Contains(f, "Approve calling shell") {
			t.Fatalf("the approval is not shown:\n%s", f)
		}
		m.Update(runes("n"))
		if got := verdictOf(t, approval); got.Action != engine.Deny {
			t.Errorf("the approval got %+v, want deny", got)
		}
		if f := m.View(); strings.Contains(f, "Paused before") || strings.Contains(f, "Approve calling") {
			t.Errorf("a pause is still shown:\n%s", f)
		}
	})
}

// TestFollowStepModeOffFrames: ctrl+t at a followed run's step pause lets
// the run, going on elsewhere, go on to its end without pausing again.
func TestFollowStepModeOffFrames(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{120, 40}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			f := newFollowed(t)
			tm := teatest.NewTestModel(t, ui.New(f.config()), teatest.WithInitialTermSize(sz.w, sz.h))
			waitFor(t, tm, "Paused before deciding")
			tm.Send(key(tea.KeyCtrlT))
			// The note of ctrl+t takes the step's place at 80 columns.
			waitForAll(t, tm, regexp.MustCompile(`6\*7 = 42`), regexp.MustCompile(`idle ·`))
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model)
			frame := fm.View()
			ui.CheckFrame(t, frame, sz.w, sz.h)
			if !strings.Contains(frame, "42") || strings.Contains(frame, "Paused") {
				t.Errorf("the run did not go on to its answer:\n%s", frame)
			}
			golden.RequireEqual(t, []byte(frame))
		})
	}
}

// TestFollowAborted: a followed run aborted at its pause (esc) ends saying
// so in words a person knows, not in the engine's.
func TestFollowAborted(t *testing.T) {
	f := newFollowed(t)
	tm := teatest.NewTestModel(t, ui.New(f.config()), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "Paused before deciding")
	tm.Send(key(tea.KeyEsc))
	waitFor(t, tm, "■ cancelled")
	tm.Send(key(tea.KeyTab))
	tm.Send(key(tea.KeyTab))
	tm.Send(key(tea.KeyEnter)) // the details of the step selected: the run's last
	waitFor(t, tm, "Error: aborted (esc at a pause)")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model)
	if frame := fm.View(); strings.Contains(frame, "at the gate") {
		t.Errorf("the engine's words are shown:\n%s", frame)
	}
}

// TestFollowAnsweredElsewhere: a pause shown or queued here that another
// console answered (its gate_resumed comes live) is taken away, saying so;
// a gate_resumed of another pause of the same run and step takes nothing.
func TestFollowAnsweredElsewhere(t *testing.T) {
	m, g, live := followConsole(t)
	ev := func(step int, ph engine.Phase, data any) engine.Event {
		kind := engine.KindGatePaused
		if _, ok := data.(*engine.GateResumed); ok {
			kind = engine.KindGateResumed
		}
		return engine.Event{Session: "s1", Run: "run-1", Step: step, Phase: ph, Kind: kind, Data: data}
	}
	feed(t, m, live, engine.Event{Session: "s1", Run: "run-1", Kind: engine.KindRunStarted, Data: &engine.RunStarted{Task: "t"}})
	// Answered here: the next pause (the step's call) comes on the gate
	// before the decide's gate_resumed comes on the stream.
	decide := ask(t, m, g, engine.Pending{Session: "s1", Run: "run-1", Step: 1, At: engine.Decide})
	feed(t, m, live, ev(1, engine.Decide, &engine.GatePaused{At: engine.Decide, Reason: engine.ReasonStep}))
	m.Update(key(tea.KeyEnter))
	verdictOf(t, decide)
	call := &engine.ToolCall{ID: "c1", Name: "calculator", Args: []byte(`{"expression":"6*7"}`)}
	act := ask(t, m, g, engine.Pending{Session: "s1", Run: "run-1", Step: 1, At: engine.Act, ToolCall: call})
	feed(t, m, live, ev(1, engine.Decide, &engine.GateResumed{Action: engine.Proceed}))
	if f := m.View(); !strings.Contains(f, "Paused before calling calculator") || strings.Contains(f, "elsewhere") {
		t.Fatalf("the call's pause is taken by the decide's gate_resumed:\n%s", f)
	}
	// Answered elsewhere: skipped by another console.
	feed(t, m, live,
		ev(1, engine.Act, &engine.GatePaused{At: engine.Act, Reason: engine.ReasonStep, ToolCall: call}),
		ev(1, engine.Act, &engine.GateResumed{Action: engine.Skip}))
	if f := m.View(); strings.Contains(f, "Paused before") || !strings.Contains(f, "the pause at step 1 was answered elsewhere (skip)") {
		t.Errorf("the pause answered elsewhere is still shown, or that it was is not said:\n%s", f)
	}
	if v := verdictOf(t, act); v.Action != engine.Skip {
		t.Errorf("the pause taken away got %+v, want the run's skip", v)
	}
	// A queued pause answered elsewhere leaves the queue; the one shown stays.
	shown := ask(t, m, g, engine.Pending{Session: "s1", Run: "run-1/c2", ParentRun: "run-1", Step: 1, At: engine.Decide})
	queued := ask(t, m, g, engine.Pending{Session: "s1", Run: "run-1/c3", ParentRun: "run-1", Step: 1, At: engine.Decide})
	sub := func(kind engine.Kind, data any) engine.Event {
		return engine.Event{Session: "s1", Run: "run-1/c3", ParentRun: "run-1", Step: 1, Phase: engine.Decide, Kind: kind, Data: data}
	}
	feed(t, m, live, sub(engine.KindGatePaused, &engine.GatePaused{At: engine.Decide, Reason: engine.ReasonStep}),
		sub(engine.KindGateResumed, &engine.GateResumed{Action: engine.Proceed}))
	if v := verdictOf(t, queued); v.Action != engine.Proceed {
		t.Errorf("the queued pause got %+v, want proceed", v)
	}
	m.Update(key(tea.KeyEnter)) // answers the one shown; none is left
	if v := verdictOf(t, shown); v.Action != engine.Proceed {
		t.Errorf("the pause shown got %+v, want proceed", v)
	}
	if f := m.View(); strings.Contains(f, "Paused before") {
		t.Errorf("the queued pause answered elsewhere is shown:\n%s", f)
	}
}

// fanGate is a stepped run's gate that asks every watching console at
// once and takes the first answer, as a pause asked again reaches a second
// console while the first still shows it.
type fanGate []*ui.Gate

func (g fanGate) Stop(engine.Pending) bool { return true }

func (g fanGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan engine.Verdict, len(g))
	for _, c := range g {
		go func() {
			if v, err := c.Wait(ctx, p); err == nil {
				got <- v
			}
		}()
	}
	select {
	case v := <-got:
		return v, nil
	case <-ctx.Done():
		return engine.Verdict{}, ctx.Err()
	}
}

// TestFollowTwoConsoles: two consoles watch one stepped run and both show
// its pause; the one that did not answer takes the pause away when the
// run's gate_resumed comes, and shows the run's next pause.
func TestFollowTwoConsoles(t *testing.T) {
	ga, gb := ui.NewGate(true), ui.NewGate(true)
	b := newBackend(t, fanGate{ga, gb})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	liveA, liveB := make(chan engine.Event, 1024), make(chan engine.Event, 1024)
	go func() {
		for ev := range b.Start(ctx, "what is 6*7?") {
			liveA <- ev
			liveB <- ev
		}
	}()
	console := func(g *ui.Gate, live chan engine.Event) *ui.Model {
		m := ui.New(ui.Config{Gate: g, Model: "offline", Style: "notty", Follow: &ui.Follow{Session: "0mx2test0001", Events: live}})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		return m
	}
	a, bc := console(ga, liveA), console(gb, liveB)
	a.Update(readMsg(t, ui.WaitForGate(ga)))
	bc.Update(readMsg(t, ui.WaitForGate(gb)))
	for _, m := range []*ui.Model{a, bc} {
		if f := m.View(); !strings.Contains(f, "Paused before deciding") {
			t.Fatalf("the pause is not shown in both:\n%s", f)
		}
	}
	bc.Update(key(tea.KeyEnter)) // b answers; a reads the run's events
	for !strings.Contains(a.View(), "answered elsewhere") {
		a.Update(readMsg(t, ui.WaitForFollow(a)))
	}
	if f := a.View(); strings.Contains(f, "Paused before deciding") || !strings.Contains(f, "the pause at step 1 was answered elsewhere (proceed)") {
		t.Fatalf("the pause b answered is still shown in a:\n%s", f)
	}
	a.Update(readMsg(t, ui.WaitForGate(ga)))
	if f := a.View(); !strings.Contains(f, "Paused before calling calculator") {
		t.Errorf("the run's next pause is not shown in a:\n%s", f)
	}
}

// TestFollowAnsweredElsewhereFromJournal: a run that was paused when the
// console began to follow it (its gate_paused in the journal) is known
// when another console answers it.
func TestFollowAnsweredElsewhereFromJournal(t *testing.T) {
	live := make(chan engine.Event, 4)
	g := ui.NewGate(true)
	journal := []engine.Event{
		{Session: "s1", Run: "run-1", Kind: engine.KindRunStarted, Data: &engine.RunStarted{Task: "t"}},
		{Session: "s1", Run: "run-1", Step: 1, Phase: engine.Decide, Kind: engine.KindGatePaused, Data: &engine.GatePaused{At: engine.Decide, Reason: engine.ReasonStep}},
	}
	m := ui.New(ui.Config{Events: journal, Gate: g, Model: "offline", Style: "notty", Follow: &ui.Follow{Session: "s1", Events: live}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	v := ask(t, m, g, engine.Pending{Session: "s1", Run: "run-1", Step: 1, At: engine.Decide})
	feed(t, m, live, engine.Event{Session: "s1", Run: "run-1", Step: 1, Phase: engine.Decide, Kind: engine.KindGateResumed, Data: &engine.GateResumed{Action: engine.Abort}})
	if f := m.View(); strings.Contains(f, "Paused before") || !strings.Contains(f, "answered elsewhere (abort)") {
		t.Errorf("the pause answered elsewhere is still shown:\n%s", f)
	}
	if got := verdictOf(t, v); got.Action != engine.Abort {
		t.Errorf("the pause taken away got %+v, want the run's abort", got)
	}
}

// A session followed while its run goes on elsewhere (its journal ends
// mid-run) says it is running, not idle; its end, when it comes, says idle.
func TestFollowMidRunSaysRunning(t *testing.T) {
	mid := []engine.Event{
		{V: engine.SchemaVersion, Session: "s1", Run: "run-1", Kind: engine.KindRunStarted, Data: &engine.RunStarted{Task: "think slowly"}},
		{V: engine.SchemaVersion, Session: "s1", Run: "run-1", Step: 1, Phase: engine.Perceive, Kind: engine.KindStepStarted, Data: &engine.StepStarted{}},
	}
	live := make(chan engine.Event, 4)
	m := ui.New(ui.Config{Gate: ui.NewGate(true), Model: "offline", Style: "notty", Events: mid, Follow: &ui.Follow{Session: "s1", Events: live}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if v := m.View(); !strings.Contains(v, "step 1 · running · watching") {
		t.Errorf("a followed run going on elsewhere:\n%s", v[strings.LastIndex(v, "agentty ·"):])
	}
}
