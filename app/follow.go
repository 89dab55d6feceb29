package app

import (
	"context"
	"errors"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/ui"
)

// Followed is a session that the console follows read-only (agentty
// watch): its journal so far, then its live events.
type Followed struct {
	ID   string
	Past []engine.Event
	// Live are the events after Past, none twice; closed when following
	// ends.
	Live   <-chan engine.Event
	Notice string
	// Answer makes the console's gate answer the pauses the session's runs
	// ask for; it returns how to stop answering.
	Answer func(engine.Gate) (func(), error)
	// Hold and Release bracket the console: what is said on stderr
	// meanwhile waits until it ends.
	Hold, Release func()
}

// Follow shows f in the console, read-only, in step mode (its pauses are
// answered here), until the person quits or ctx ends.
func Follow(ctx context.Context, f Followed, getenv func(string) string) error {
	gate := ui.NewGate(true)
	stop, err := f.Answer(gate)
	if err != nil {
		return err
	}
	defer stop()
	cfg := ui.Config{
		Events: f.Past, Gate: gate, Model: "-", Style: "dark", Notice: f.Notice,
		Follow: &ui.Follow{Session: f.ID, Events: f.Live, Why: "watching " + f.ID + ": read-only"},
	}
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		cfg.Style = "notty"
	}
	f.Hold()
	err = ui.Run(ui.New(cfg), tea.WithContext(ctx))
	f.Release()
	if err != nil && ctx.Err() == nil && !errors.Is(err, tea.ErrProgramKilled) {
		return err
	}
	return nil
}
