package eval

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/agentty/agentty/engine"
)

// recordedTools gives a live run the tool results of a recording: a call
// of the same tool with the same arguments as a recorded call gets that
// call's result (each recorded result once, in the order recorded, whichever
// run of the session made it); any other call runs the tool. The pure
// tools that work on the run's own state (Inline: memory, arithmetic, the
// clock) always run. A comparison then tells the agent's change
// from the world's.
type recordedTools struct {
	mu      sync.Mutex
	results map[string][]recordedResult // toolKey → results not yet given
}

type recordedResult struct {
	ok         bool
	text, fail string
}

// toolKey names a call by its tool and its arguments as a JSON value
// (keys in order, spaces gone): the same call written otherwise matches.
func toolKey(name string, args json.RawMessage) string {
	var v any
	if json.Unmarshal(args, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			args = b
		}
	}
	return name + "\x00" + string(args)
}

func newRecordedTools(events []engine.Event) *recordedTools {
	type callRef struct{ run, id string }
	keys := map[callRef]string{}
	rt := &recordedTools{results: map[string][]recordedResult{}}
	for _, ev := range events {
		switch d := ev.Data.(type) {
		case *engine.Decided:
			for _, c := range d.ToolCalls {
				keys[callRef{ev.Run, c.ID}] = toolKey(c.Name, c.Args)
			}
		case *engine.ToolFinished:
			k, ok := keys[callRef{ev.Run, d.ID}]
			if !ok || (d.Status != engine.ToolOK && d.Status != engine.ToolError) || d.By != "" {
				continue // refused, skipped or a person's answer: the call runs now
			}
			rt.results[k] = append(rt.results[k], recordedResult{ok: d.Status == engine.ToolOK, text: d.Result, fail: d.Error})
		}
	}
	return rt
}

// take is the next recorded result of the call, if one is left.
func (rt *recordedTools) take(name string, args json.RawMessage) (recordedResult, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	k := toolKey(name, args)
	q := rt.results[k]
	if len(q) == 0 {
		return recordedResult{}, false
	}
	rt.results[k] = q[1:]
	return q[0], true
}

// wrap is reg with each tool answering from the recording when it can.
func (rt *recordedTools) wrap(reg *engine.Registry) (*engine.Registry, error) {
	if reg == nil {
		return nil, nil
	}
	ts := reg.Tools()
	for i := range ts {
		if ts[i].Inline {
			continue // a pure tool of the run's own (memory, arithmetic, the clock): it runs
		}
		name, run := ts[i].Name, ts[i].Func
		ts[i].Func = func(ctx context.Context, c *engine.Call) (string, error) {
			if r, ok := rt.take(name, c.Args); ok {
				if !r.ok {
					return "", errors.New(r.fail)
				}
				return r.text, nil
			}
			return run(ctx, c)
		}
	}
	return engine.NewRegistry(ts...)
}
