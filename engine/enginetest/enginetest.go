// Package enginetest holds the fakes agentty's tests share: a Sink that
// records every event, a Model made of a function, an echo tool, and an
// in-process OpenAI-compatible server that streams scripted replies
// (server.go).
//
// It is for tests only, and imports nothing of agentty's but engine, so
// that the tests of every package (engine's own external tests included)
// can use it.
package enginetest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/agentty/agentty/engine"
)

// Recorder is an engine.Sink that keeps every event. It is safe for
// concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []engine.Event
}

var _ engine.Sink = (*Recorder)(nil)

// Emit implements engine.Sink.
func (r *Recorder) Emit(ev engine.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return nil
}

// Events returns the events so far, in order.
func (r *Recorder) Events() []engine.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]engine.Event(nil), r.events...)
}

// Of returns the events of kind k, in order.
func (r *Recorder) Of(k engine.Kind) []engine.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []engine.Event
	for _, ev := range r.events {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// Finished returns the payloads of the tool_finished events, in order.
func (r *Recorder) Finished() []*engine.ToolFinished {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*engine.ToolFinished
	for _, ev := range r.events {
		if f, ok := ev.Data.(*engine.ToolFinished); ok {
			out = append(out, f)
		}
	}
	return out
}

// ModelFunc adapts a function to engine.Model.
type ModelFunc func(ctx context.Context, req *engine.Request) (engine.Decision, error)

var _ engine.Model = ModelFunc(nil)

// Decide calls f.
func (f ModelFunc) Decide(ctx context.Context, req *engine.Request) (engine.Decision, error) {
	return f(ctx, req)
}

// EchoTool returns the tool "echo": it takes {"text": string} and nothing
// else, and answers "echo: " and the text.
func EchoTool() engine.Tool {
	return engine.Tool{
		Name:   "echo",
		Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Text string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			return "echo: " + in.Text, nil
		},
	}
}

// Registry returns a registry holding tools, failing the test if it
// cannot be made.
func Registry(t testing.TB, tools ...engine.Tool) *engine.Registry {
	t.Helper()
	r, err := engine.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
