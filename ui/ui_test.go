package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/tools"
	"github.com/agentty/agentty/ui"
)

func init() {
	lipgloss.SetColorProfile(termenv.Ascii)
	time.Local = time.UTC
}

var fixed = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// testBackend runs the real engine on an in-memory session, with event
// times and durations pinned so that frames do not depend on the machine.
type testBackend struct {
	e *engine.Engine
	s *engine.Session

	mu     sync.Mutex
	events []engine.Event // every event of its runs, as a journal has them
}

func newBackend(t testing.TB, gate engine.Gate) *testBackend {
	t.Helper()
	reg, err := engine.NewRegistry(tools.Builtins()...)
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Config{Model: offline.Model{}, ModelName: "offline", Tools: reg, Gate: gate})
	return &testBackend{e: e, s: engine.NewSession("0mx2test0001")}
}

// pin pins the events' times and records them before the console sees
// them, as the journal does.
func (b *testBackend) pin(in <-chan engine.Event) <-chan engine.Event {
	out := make(chan engine.Event)
	go func() {
		defer close(out)
		for ev := range in {
			ev.Time = fixed
			if d, ok := ev.Data.(*engine.ToolFinished); ok {
				d.DurationMS = 0
			}
			b.mu.Lock()
			b.events = append(b.events, ev)
			b.mu.Unlock()
			out <- ev
		}
	}()
	return out
}

// journal returns the events recorded so far, written and read back as
// the journal writes and reads them.
func (b *testBackend) journal(t testing.TB) []engine.Event {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []engine.Event
	for _, ev := range b.events {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		back, err := engine.DecodeEvent(line)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, back)
	}
	return out
}

func (b *testBackend) Start(ctx context.Context, task string) <-chan engine.Event {
	return b.pin(b.e.Start(ctx, b.s, task, nil))
}
func (b *testBackend) Continue(ctx context.Context) <-chan engine.Event {
	return b.pin(b.e.StartContinue(ctx, b.s, nil))
}
func (b *testBackend) ChangeMemory(c engine.MemoryChanged) (engine.Event, error) {
	ev, err := b.s.ChangeMemory(c, nil)
	ev.Time = fixed
	return ev, err
}
func (b *testBackend) SessionID() string { return b.s.ID }
func (b *testBackend) Close() error      { return nil }

type fakeSessions struct{ list []ui.SessionInfo }

func (f fakeSessions) List() ([]ui.SessionInfo, error) { return f.list, nil }
func (f fakeSessions) Open(id string) (ui.Backend, []engine.Event, error) {
	return nil, nil, os.ErrNotExist
}

func newConsole(t testing.TB, step bool) (*ui.Model, *ui.Gate) {
	cfg := consoleConfig(t, step, nil)
	return ui.New(cfg), cfg.Gate
}

// consoleConfig is the console's configuration in these tests; events are
// a resumed session's journal.
func consoleConfig(t testing.TB, step bool, events []engine.Event) ui.Config {
	gate := ui.NewGate(step)
	return ui.Config{
		Backend: newBackend(t, gate), Events: events, Gate: gate, Model: "offline", Style: "notty",
		Notice: "Using the built-in offline model.",
		Sessions: fakeSessions{list: []ui.SessionInfo{
			{ID: "0mx2test0002", Title: "what is 17*23?", Model: "offline", Updated: fixed, Steps: 2},
			{ID: "0mx2test0001", Title: "remember that my name is Ada", Model: "offline", Updated: fixed.Add(-time.Hour), Steps: 4, Interrupted: true},
		}},
	}
}

func waitFor(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	waitForAll(t, tm, regexp.MustCompile(regexp.QuoteMeta(s)))
}

// waitForAll waits until the console has drawn a match of each of res (in
// the output read during this call).
func waitForAll(t *testing.T, tm *teatest.TestModel, res ...*regexp.Regexp) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, re := range res {
			if !re.Match(b) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
}

func key(k tea.KeyType) tea.KeyMsg { return tea.KeyMsg{Type: k} }

// TestGoldenFrames drives the console as a person would, through teatest,
// and compares what it shows at 120×40 and 80×24 with golden frames.
func TestGoldenFrames(t *testing.T) {
	sizes := []struct{ w, h int }{{120, 40}, {80, 24}}
	scenes := []struct {
		name string
		step bool
		play func(t *testing.T, tm *teatest.TestModel, w int)
	}{
		{"empty", false, func(t *testing.T, tm *teatest.TestModel, w int) { waitFor(t, tm, "Input") }},
		{"offline-run", false, func(t *testing.T, tm *teatest.TestModel, w int) {
			tm.Type("what is 17*23?")
			tm.Send(key(tea.KeyEnter))
			waitFor(t, tm, "step 2 · idle")
		}},
		{"paused-tool", true, func(t *testing.T, tm *teatest.TestModel, w int) {
			tm.Type("what is 17*23?")
			tm.Send(key(tea.KeyEnter))
			waitFor(t, tm, "Paused before deciding")
			tm.Send(key(tea.KeyEnter))
			// The pause comes on the gate's channel, the events on the
			// run's: wait for both (narrow, only the chat shows them).
			res := []*regexp.Regexp{regexp.MustCompile("Paused before calling"), regexp.MustCompile(`⚙ calculator expression`)}
			if w >= 120 {
				res = append(res, regexp.MustCompile(`act +calculator +paused`), regexp.MustCompile(`tokens: 547 in`))
			}
			waitForAll(t, tm, res...)
		}},
		{"detail", false, func(t *testing.T, tm *teatest.TestModel, w int) {
			tm.Type("what is 17*23?")
			tm.Send(key(tea.KeyEnter))
			waitFor(t, tm, "step 2 · idle")
			tm.Send(key(tea.KeyTab))
			tm.Send(key(tea.KeyTab))
			for range 5 {
				tm.Send(key(tea.KeyUp))
			}
			tm.Send(key(tea.KeyEnter))
			waitFor(t, tm, "Step details")
		}},
		{"picker", false, func(t *testing.T, tm *teatest.TestModel, w int) {
			tm.Send(key(tea.KeyCtrlO))
			waitFor(t, tm, "Sessions")
		}},
	}
	for _, sz := range sizes {
		for _, sc := range scenes {
			name := fmt.Sprintf("%s-%dx%d", sc.name, sz.w, sz.h)
			t.Run(name, func(t *testing.T) {
				m, _ := newConsole(t, sc.step)
				tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(sz.w, sz.h))
				sc.play(t, tm, sz.w)
				if err := tm.Quit(); err != nil {
					t.Fatal(err)
				}
				fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model)
				frame := fm.View()
				fm.Cancel()
				golden.RequireEqual(t, []byte(frame)) // go test ./ui -update rewrites testdata
			})
		}
	}
}

// TestStepModeFrames: step mode draws what happened, one row per decide
// and per tool call, paused at decide, after stepping (enter), after
// continuing (c), and after a resume of that session (its journal replayed
// into a new console, as --resume does).
func TestStepModeFrames(t *testing.T) {
	sizes := []struct{ w, h int }{{120, 40}, {80, 24}}
	// A pause reaches the console twice, in either order: from the gate
	// (the pause bar) and as the run's gate_paused event (the Timeline's
	// paused row). A scene waits for both where the Timeline is in view;
	// on a narrow terminal, once it has been brought into view.
	bars := map[string]*regexp.Regexp{
		"decide":  regexp.MustCompile(`Paused before deciding`),
		"stepped": regexp.MustCompile(`Paused before calling`),
	}
	rows := map[string]*regexp.Regexp{
		"decide":  regexp.MustCompile(`decide +waiting +paused`),
		"stepped": regexp.MustCompile(`act +calculator +paused`),
	}
	paused := func(t *testing.T, tm *teatest.TestModel, w int, scene string) {
		if w >= 120 {
			waitForAll(t, tm, bars[scene], rows[scene])
		} else {
			waitForAll(t, tm, bars[scene])
		}
	}
	untilDecide := func(t *testing.T, tm *teatest.TestModel, w int) {
		tm.Type("what is 17*23?")
		tm.Send(key(tea.KeyEnter))
		paused(t, tm, w, "decide")
	}
	scenes := []struct {
		name string
		play func(t *testing.T, tm *teatest.TestModel, w int)
	}{
		{"decide", untilDecide},
		{"stepped", func(t *testing.T, tm *teatest.TestModel, w int) {
			untilDecide(t, tm, w)
			tm.Send(key(tea.KeyEnter))
			paused(t, tm, w, "stepped")
		}},
		{"continued", func(t *testing.T, tm *teatest.TestModel, w int) {
			untilDecide(t, tm, w)
			tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("c")})
			waitFor(t, tm, "step 2 · idle")
		}},
	}
	for _, sz := range sizes {
		var journal []engine.Event // of the session continued with c
		for _, sc := range scenes {
			t.Run(fmt.Sprintf("%s-%dx%d", sc.name, sz.w, sz.h), func(t *testing.T) {
				cfg := consoleConfig(t, true, nil)
				m := ui.New(cfg)
				tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(sz.w, sz.h))
				sc.play(t, tm, sz.w)
				if sz.w < 120 { // narrow: the timeline is a tab of its own
					tm.Send(key(tea.KeyTab))
					tm.Send(key(tea.KeyTab))
					if row := rows[sc.name]; row != nil {
						waitForAll(t, tm, regexp.MustCompile(`\[Timeline\]`), row)
					} else {
						waitFor(t, tm, "[Timeline]")
					}
				}
				if err := tm.Quit(); err != nil {
					t.Fatal(err)
				}
				fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model)
				frame := fm.View()
				fm.Cancel()
				fm.Drain(10 * time.Second)
				ui.CheckFrame(t, frame, sz.w, sz.h)
				if strings.Contains(frame, "9223372036") {
					t.Error("a duration taken from a zero time")
				}
				golden.RequireEqual(t, []byte(frame))
				if sc.name == "continued" {
					journal = cfg.Backend.(*testBackend).journal(t)
				}
			})
		}
		// The continued session resumed: its journal replayed into a new
		// console draws the same timeline.
		t.Run(fmt.Sprintf("resumed-%dx%d", sz.w, sz.h), func(t *testing.T) {
			if journal == nil {
				t.Fatal("no journal: the continued scene failed")
			}
			r := ui.New(consoleConfig(t, false, journal))
			r.Update(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
			if sz.w < 120 {
				r.Update(key(tea.KeyTab))
				r.Update(key(tea.KeyTab))
			}
			frame := r.View()
			ui.CheckFrame(t, frame, sz.w, sz.h)
			golden.RequireEqual(t, []byte(frame))
		})
	}
}

// TestStepModeDurations: the decide row of a step that paused before
// deciding says how long the model took, from the person's go-ahead to the
// decision, and is the only decide row of its step, live and replayed.
func TestStepModeDurations(t *testing.T) {
	t0 := fixed
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	call := engine.ToolCall{ID: "c1", Name: "calculator", Args: json.RawMessage(`{"expression":"17*23"}`)}
	evs := []engine.Event{
		{Kind: engine.KindRunStarted, Run: "r1", Step: 1, Time: at(0), Data: &engine.RunStarted{Task: "what is 17*23?"}},
		{Kind: engine.KindStepStarted, Run: "r1", Step: 1, Time: at(0), Data: &engine.StepStarted{}},
		{Kind: engine.KindModelRequest, Run: "r1", Step: 1, Time: at(10 * time.Millisecond), Data: &engine.ModelRequest{Messages: 1, Tokens: 50}},
		{Kind: engine.KindGatePaused, Run: "r1", Step: 1, Time: at(10 * time.Millisecond), Data: &engine.GatePaused{At: engine.Decide, Reason: engine.ReasonStep}},
		{Kind: engine.KindGateResumed, Run: "r1", Step: 1, Time: at(time.Minute), Data: &engine.GateResumed{Action: engine.Proceed}},
		{Kind: engine.KindDecision, Run: "r1", Step: 1, Time: at(time.Minute + 2*time.Second), Data: &engine.Decided{ToolCalls: []engine.ToolCall{call}}},
		{Kind: engine.KindGatePaused, Run: "r1", Step: 1, Time: at(time.Minute + 2*time.Second), Data: &engine.GatePaused{At: engine.Act, Reason: engine.ReasonStep, ToolCall: &call}},
		{Kind: engine.KindGateResumed, Run: "r1", Step: 1, Time: at(2 * time.Minute), Data: &engine.GateResumed{Action: engine.Proceed}},
		{Kind: engine.KindToolStarted, Run: "r1", Step: 1, Time: at(2 * time.Minute), Data: &engine.ToolStarted{ID: "c1", Name: "calculator", Args: call.Args}},
		{Kind: engine.KindToolFinished, Run: "r1", Step: 1, Time: at(2 * time.Minute), Data: &engine.ToolFinished{ID: "c1", Name: "calculator", Status: "ok", Result: "391", DurationMS: 3}},
		{Kind: engine.KindStepFinished, Run: "r1", Step: 1, Time: at(2 * time.Minute), Data: &engine.StepFinished{ToolCalls: 1}},
		{Kind: engine.KindRunFinished, Run: "r1", Step: 1, Time: at(2 * time.Minute), Data: &engine.RunFinished{StopReason: engine.StopAnswered}},
	}
	m := ui.New(consoleConfig(t, true, evs))
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	frame := m.View()
	var decide, act []string
	for _, l := range strings.Split(frame, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if strings.Contains(l, "◆") {
			decide = append(decide, l)
		}
		if strings.Contains(l, "⚙ 1 act") {
			act = append(act, l)
		}
	}
	if len(decide) != 1 || !strings.Contains(decide[0], "call calculator 2.0s ok") {
		t.Errorf("decide rows: %q, want one: call calculator 2.0s ok", decide)
	}
	if len(act) != 1 || !strings.Contains(act[0], "calculator 3ms ok") {
		t.Errorf("act rows: %q, want one: calculator 3ms ok", act)
	}
	if strings.Contains(frame, "thinking") || strings.Contains(frame, "9223372036") {
		t.Errorf("a stale row:\n%s", frame)
	}
	// The step's details say what each pause was and the person's answer.
	m.Update(key(tea.KeyTab))
	m.Update(key(tea.KeyTab))
	m.Update(key(tea.KeyUp))
	m.Update(key(tea.KeyEnter))
	details := m.View()
	for _, want := range []string{"Gate: paused before deciding: proceed", "Gate: paused before calling calculator: proceed", "1 message, 0 memory facts"} {
		if !strings.Contains(details, want) {
			t.Errorf("the step details do not say %q:\n%s", want, details)
		}
	}

	// Interrupted while paused: on resume nothing is still running.
	m = ui.New(consoleConfig(t, true, evs[:4]))
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	frame = m.View()
	for _, l := range strings.Split(frame, "\n") {
		if strings.Contains(l, "◆") && (!strings.Contains(l, "waiting") || !strings.HasSuffix(strings.TrimRight(l, "│ "), "interrupted")) {
			t.Errorf("an interrupted pause does not say so: %q", l)
		}
	}
}

// timelineRows returns the Timeline's rows in a frame at 160 columns, each
// with its spaces squeezed.
func timelineRows(frame string) []string {
	var rows []string
	for _, l := range strings.Split(frame, "\n") {
		if r := []rune(l); len(r) >= 124 {
			rows = append(rows, strings.Join(strings.Fields(strings.Trim(string(r[76:124]), "│")), " "))
		}
	}
	return rows
}

// TestSameCallIDInEveryStep: the offline model (and llama.cpp's "call_0")
// gives a call the same id in every step; each step still gets its own act
// row and its own tool line, live and after a resume.
func TestSameCallIDInEveryStep(t *testing.T) {
	gate := ui.NewGate(false)
	b := newBackend(t, gate)
	for _, task := range []string{"what is (17*23)+sqrt(16)?", "15% of 80"} {
		for range b.Start(context.Background(), task) {
		}
	}
	events := b.journal(t)
	var ids []string
	for _, ev := range events {
		if d, ok := ev.Data.(*engine.ToolStarted); ok {
			ids = append(ids, fmt.Sprintf("step %d %s", ev.Step, d.ID))
		}
	}
	if len(ids) != 2 || !strings.HasSuffix(ids[0], "call_calculator") || !strings.HasSuffix(ids[1], "call_calculator") {
		t.Fatalf("the offline model's calls: %q, want call_calculator twice", ids)
	}
	m := ui.New(consoleConfig(t, false, events))
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	frame := m.View()
	var act, observe []string
	for _, r := range timelineRows(frame) {
		if strings.HasPrefix(r, "⚙") {
			act = append(act, r)
		}
		if strings.HasPrefix(r, "◉") {
			observe = append(observe, r)
		}
	}
	if want := []string{"⚙ 1 act calculator ok", "⚙ 3 act calculator ok"}; strings.Join(act, "|") != strings.Join(want, "|") {
		t.Errorf("act rows: %q, want %q\n%s", act, want, frame)
	}
	// A step that only answered observes nothing: it has no observe row.
	if want := []string{"◉ 1 observe 1 result ok", "◉ 3 observe 1 result ok"}; strings.Join(observe, "|") != strings.Join(want, "|") {
		t.Errorf("observe rows: %q, want %q\n%s", observe, want, frame)
	}
	for _, want := range []string{`expression="(17*23)+sqrt(16)" → 22 B ✓`, `expression="15% of 80" → 14 B ✓`} {
		if !strings.Contains(frame, want) {
			t.Errorf("the chat has no tool line %q:\n%s", want, frame)
		}
	}
	// The second step's details hold its own call.
	m.Update(key(tea.KeyTab))
	m.Update(key(tea.KeyTab))
	for range 4 {
		m.Update(key(tea.KeyUp))
	}
	m.Update(key(tea.KeyEnter))
	details := m.View()
	if !strings.Contains(details, "Step 3 of") || !strings.Contains(details, `args: {"expression":"15% of 80"}`) || strings.Contains(details, "17*23") {
		t.Errorf("the details of step 3:\n%s", details)
	}
	// Enter on the run's row ("▶ 15% of 80") shows its first step, not the
	// last step of the run before.
	m.Update(key(tea.KeyEsc))
	for range 3 {
		m.Update(key(tea.KeyUp))
	}
	m.Update(key(tea.KeyEnter))
	if details := m.View(); !strings.Contains(details, "Step 3 of") {
		t.Errorf("the details of the run's row:\n%s", details)
	}
}
