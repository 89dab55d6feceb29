package ui_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/sessions"
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

func pin(in <-chan engine.Event) <-chan engine.Event {
	out := make(chan engine.Event)
	go func() {
		defer close(out)
		for ev := range in {
			ev.Time = fixed
			if d, ok := ev.Data.(*engine.ToolFinished); ok {
				d.DurationMS = 0
			}
			out <- ev
		}
	}()
	return out
}

func (b *testBackend) Start(ctx context.Context, task string) <-chan engine.Event {
	return pin(b.e.Start(ctx, b.s, task, nil))
}
func (b *testBackend) Continue(ctx context.Context) <-chan engine.Event {
	return pin(b.e.StartContinue(ctx, b.s, nil))
}
func (b *testBackend) ChangeMemory(c engine.MemoryChanged) (engine.Event, error) {
	ev, err := b.s.ChangeMemory(c, nil)
	ev.Time = fixed
	return ev, err
}
func (b *testBackend) SessionID() string { return b.s.ID }
func (b *testBackend) Close() error      { return nil }

type fakeSessions struct{ list []sessions.Listing }

func (f fakeSessions) List() ([]sessions.Listing, error) { return f.list, nil }
func (f fakeSessions) Open(id string) (ui.Backend, []engine.Event, error) {
	return nil, nil, os.ErrNotExist
}

func newConsole(t testing.TB, step bool) (*ui.Model, *ui.Gate) {
	gate := ui.NewGate(step)
	m := ui.New(ui.Config{
		Backend: newBackend(t, gate), Gate: gate, Model: "offline", Style: "notty",
		Notice: "Using the built-in offline model.",
		Sessions: fakeSessions{list: []sessions.Listing{
			{Meta: sessions.Meta{ID: "0mx2test0002", Title: "what is 17*23?", Model: "offline", Updated: fixed, LastStep: 2}},
			{Meta: sessions.Meta{ID: "0mx2test0001", Title: "remember that my name is Ada", Model: "offline", Updated: fixed.Add(-time.Hour), LastStep: 4, Interrupted: true}},
		}},
	})
	return m, gate
}

func waitFor(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(s)) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
}

func key(k tea.KeyType) tea.KeyMsg { return tea.KeyMsg{Type: k} }

// TestGoldenFrames drives the console as a person would, through teatest,
// and compares what it shows at 120×40 and 80×24 with golden frames.
func TestGoldenFrames(t *testing.T) {
	sizes := []struct{ w, h int }{{120, 40}, {80, 24}}
	scenes := []struct {
		name string
		step bool
		play func(t *testing.T, tm *teatest.TestModel)
	}{
		{"empty", false, func(t *testing.T, tm *teatest.TestModel) { waitFor(t, tm, "Input") }},
		{"offline-run", false, func(t *testing.T, tm *teatest.TestModel) {
			tm.Type("what is 17*23?")
			tm.Send(key(tea.KeyEnter))
			waitFor(t, tm, "step 2 · idle")
		}},
		{"paused-tool", true, func(t *testing.T, tm *teatest.TestModel) {
			tm.Type("what is 17*23?")
			tm.Send(key(tea.KeyEnter))
			waitFor(t, tm, "Paused before deciding")
			tm.Send(key(tea.KeyEnter))
			waitFor(t, tm, "Paused before calling")
		}},
		{"detail", false, func(t *testing.T, tm *teatest.TestModel) {
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
		{"picker", false, func(t *testing.T, tm *teatest.TestModel) {
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
				sc.play(t, tm)
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
