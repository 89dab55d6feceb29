package app

import (
	"context"
	"errors"

	"github.com/agentty/agentty/engine"
)

// NewGiveUpEngine is an engine that only ends runs (a cancelled one, a
// worker's lost one): nothing is asked.
func NewGiveUpEngine() *engine.Engine { return engine.New(engine.Config{Model: noModel{}}) }

// noModel is the model of an engine that only ends runs.
type noModel struct{}

func (noModel) Decide(context.Context, *engine.Request) (engine.Decision, error) {
	return engine.Decision{}, errors.New("no model")
}

// RequestRun finds the top-level run that carries out request in a
// session's events: its id ("" when none), and whether it finished.
func RequestRun(events []engine.Event, request string) (run string, finished bool) {
	for _, ev := range events {
		if ev.ParentRun != "" {
			continue
		}
		switch d := ev.Data.(type) {
		case *engine.RunStarted:
			if d.Request == request {
				run, finished = ev.Run, false
			}
		case *engine.RunFinished:
			if run != "" && ev.Run == run {
				finished = true
			}
		}
	}
	return run, finished
}
