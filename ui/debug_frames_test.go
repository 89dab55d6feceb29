package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/tools"
)

var debugTime = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// turns is a model that makes decisions[i] at its i-th decision of a run
// (the last one repeats).
func turns(decisions ...engine.Decision) engine.Model {
	return enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		n := 0
		for _, m := range req.Messages {
			if m.Role == engine.RoleAssistant {
				n++
			}
		}
		return decisions[min(n, len(decisions)-1)], nil
	})
}

func callDecision(id, name, args string) engine.Decision {
	return engine.Decision{ToolCalls: []engine.ToolCall{{ID: id, Name: name, Args: []byte(args)}}}
}

// pausedConsole runs task on a real engine whose gate is g until g hands
// over a pause, and returns a console w×h that has read every event so
// far and shows the pause; the run is cancelled at the test's end.
func pausedConsole(t *testing.T, cfg engine.Config, g *Gate, task string, w, h int) *Model {
	t.Helper()
	cfg.Gate = g
	e := engine.New(cfg)
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	events := make(chan engine.Event, 4096)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Run(ctx, engine.NewSession("0mx2debug001"), task, engine.SinkFunc(func(ev engine.Event) error {
			ev.Time = debugTime
			if d, ok := ev.Data.(*engine.ToolFinished); ok {
				d.DurationMS = 0
			}
			events <- ev
			return nil
		}))
	}()
	t.Cleanup(func() { cancel(); <-done })
	m := New(Config{Model: "script", Style: "notty", Backend: textBackend{}, Gate: g})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for {
		select {
		case ev := <-events:
			m.Update(engineEventMsg{ev})
		case req := <-g.requests:
			for len(events) > 0 { // what came before the pause
				m.Update(engineEventMsg{<-events})
			}
			m.Update(gateMsg{req})
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("the run did not pause")
		}
	}
}

func registry(t *testing.T, ts ...engine.Tool) *engine.Registry {
	t.Helper()
	r, err := engine.NewRegistry(append(tools.Builtins(), ts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDebugFrames: golden frames, at 120×40 and 80×24, of a breakpoint hit
// on a tool in a sub-run, the request inspector with what the decision
// added, an edited request, a write_file's diff at approval, and the form
// that answers for a tool.
func TestDebugFrames(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Notes\n\n1. milk\n2. eggs\n3. bread\n"), 0o644)
	ws, err := tools.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	subRun := func(t *testing.T, g *Gate) engine.Config {
		g.SetBreaks([]engine.Break{mustBreak(t, "tool=calc*")})
		top := turns(callDecision("c1", engine.AgentTool, `{"agent":"researcher","task":"what is 17*23?"}`), engine.Decision{Text: "done"})
		return engine.Config{Model: top, Tools: registry(t), Agents: []engine.Agent{
			{Name: "researcher", Description: "finds facts", Model: offline.Model{}}}}
	}
	atStep2 := func(t *testing.T, g *Gate) engine.Config {
		g.SetBreaks([]engine.Break{mustBreak(t, "step=2")})
		return engine.Config{Model: offline.Model{}, Tools: registry(t), System: "You are agentty's offline model."}
	}
	scenes := []struct {
		name   string
		config func(*testing.T, *Gate) engine.Config
		task   string
		keys   []string
	}{
		{"break-subrun", subRun, "ask the researcher", nil},
		{"inspector", atStep2, "what is 17*23?", []string{"i"}},
		{"edited-request", atStep2, "what is 17*23?", []string{"i", "n", "answer in French", "ctrl+s", "up", "d"}},
		{"write-diff", func(t *testing.T, g *Gate) engine.Config {
			g.SetPreview(ws.Preview)
			return engine.Config{Model: turns(callDecision("w1", "write_file", `{"path":"notes.md","content":"# Notes\n\n1. milk\n2. six eggs\n3. bread\n4. tea\n"}`)), Tools: registry(t, ws.WriteFile())}
		}, "add tea to my notes", nil},
		{"answer-form", func(t *testing.T, g *Gate) engine.Config {
			g.SetBreaks([]engine.Break{mustBreak(t, "tool=calculator")})
			return engine.Config{Model: offline.Model{}, Tools: registry(t)}
		}, "what is 17*23?", []string{"m", "17*23 = 400"}},
	}
	for _, sz := range []struct{ w, h int }{{120, 40}, {80, 24}} {
		for _, sc := range scenes {
			t.Run(fmt.Sprintf("%s-%dx%d", sc.name, sz.w, sz.h), func(t *testing.T) {
				g := NewGate(false)
				m := pausedConsole(t, sc.config(t, g), g, sc.task, sz.w, sz.h)
				for _, k := range sc.keys {
					if len([]rune(k)) > 1 && !strings.Contains(k, "+") && k != "esc" && k != "up" {
						m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
						continue
					}
					m.Update(keyNamed(k))
				}
				frame := m.View()
				checkFrame(t, frame, sz.w, sz.h)
				golden.RequireEqual(t, []byte(frame)) // go test ./ui -run TestDebugFrames -update rewrites testdata
			})
		}
	}
}

func mustBreak(t *testing.T, cond string) engine.Break {
	t.Helper()
	b, err := engine.ParseBreak(cond)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
