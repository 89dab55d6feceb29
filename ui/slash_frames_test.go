package ui_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/ui"
)

// commandBackend is the test backend with the slash commands that need no
// store: /compact on the real engine (the offline model summarises) and
// /model offline.
type commandBackend struct{ *testBackend }

var _ ui.Commander = commandBackend{}

func (b commandBackend) Compact(ctx context.Context, focus string) <-chan engine.Event {
	return b.pin(b.e.StartCompact(ctx, b.s, focus, nil))
}
func (b commandBackend) SetModel(name string) (engine.Event, error) {
	if name != "offline" {
		return engine.Event{}, fmt.Errorf("model %q needs OPENAI_API_KEY", name)
	}
	ev, err := b.s.ChangeModel(name, nil)
	ev.Time = fixed
	return ev, err
}
func (b commandBackend) SetAgent(string) (engine.Event, error) {
	return engine.Event{}, errors.New("there are no agents")
}
func (b commandBackend) Fork(int) (ui.Backend, []engine.Event, error) {
	return nil, nil, errors.New("no store")
}
func (b commandBackend) Clear() (ui.Backend, []engine.Event, error) {
	return nil, nil, errors.New("no store")
}
func (b commandBackend) Export(string, string) (string, error) { return "", errors.New("no store") }
func (b commandBackend) Trust() (string, error)                { return "", errors.New("no workspace") }
func (b commandBackend) ModelName() string                     { return "offline" }

// TestSlashFrames: golden frames, at 120×40 and 80×24, of the list of
// commands as "/" is typed, and of a compaction (/compact after three
// offline turns: its row in the Timeline, a note in the Chat, which keeps
// every message) and its details.
func TestSlashFrames(t *testing.T) {
	sizes := []struct{ w, h int }{{120, 40}, {80, 24}}
	turns := func(t *testing.T, tm *teatest.TestModel) {
		for i, task := range []string{"what is 17*23?", "remember that my name is Ada", "what is 2+2?"} {
			tm.Type(task)
			tm.Send(key(tea.KeyEnter))
			waitFor(t, tm, fmt.Sprintf("step %d · idle", 2*(i+1)))
		}
		tm.Type("/compact my name")
		tm.Send(key(tea.KeyEnter))
		waitFor(t, tm, "summarised for the model")
	}
	scenes := []struct {
		name string
		play func(t *testing.T, tm *teatest.TestModel)
	}{
		{"slash-list", func(t *testing.T, tm *teatest.TestModel) {
			tm.Type("/")
			waitFor(t, tm, "tab completes, enter runs")
		}},
		{"slash-filtered", func(t *testing.T, tm *teatest.TestModel) {
			tm.Type("/m")
			tm.Send(key(tea.KeyDown))
			waitFor(t, tm, "/memory")
		}},
		{"compacted", turns},
		{"compacted-detail", func(t *testing.T, tm *teatest.TestModel) {
			turns(t, tm)
			tm.Send(key(tea.KeyTab))
			tm.Send(key(tea.KeyTab))
			tm.Send(key(tea.KeyEnter))
			waitFor(t, tm, "Summary:")
		}},
	}
	for _, sz := range sizes {
		for _, sc := range scenes {
			name := fmt.Sprintf("%s-%dx%d", sc.name, sz.w, sz.h)
			t.Run(name, func(t *testing.T) {
				cfg := consoleConfig(t, false, nil)
				cfg.Backend = commandBackend{cfg.Backend.(*testBackend)}
				m := ui.New(cfg)
				tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(sz.w, sz.h))
				sc.play(t, tm)
				if err := tm.Quit(); err != nil {
					t.Fatal(err)
				}
				fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model)
				frame := fm.View()
				fm.Cancel()
				if sc.name == "compacted" && !strings.Contains(frame, "⇊   6 8 msgs, 668→632 tok") && sz.w >= 120 {
					t.Errorf("no compaction row in the Timeline:\n%s", frame)
				}
				golden.RequireEqual(t, []byte(frame)) // go test ./ui -update rewrites testdata
			})
		}
	}
}
