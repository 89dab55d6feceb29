package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// loopModel calls the instant tool until the run's last step, then answers.
func loopModel(steps int) engine.Model {
	args := json.RawMessage(`{"text":"x"}`)
	return enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		if req.Turn+1 >= steps {
			return engine.Decision{Text: "done", Usage: engine.Usage{PromptTokens: 10, CompletionTokens: 1}}, nil
		}
		return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c", Name: "echo", Args: args}}, Usage: engine.Usage{PromptTokens: 10, CompletionTokens: 1}}, nil
	})
}

// pairModel is loopModel asking for two calls of the instant tool a step,
// which run in parallel.
func pairModel(steps int) engine.Model {
	args := json.RawMessage(`{"text":"x"}`)
	return enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		if req.Turn+1 >= steps {
			return engine.Decision{Text: "done"}, nil
		}
		return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "a", Name: "echo", Args: args}, {ID: "b", Name: "echo", Args: args}}}, nil
	})
}

func instantTool() engine.Tool {
	return engine.Tool{Name: "echo", Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Func: func(context.Context, *engine.Call) (string, error) { return "ok", nil }}
}

// countingSink is a subscriber that reads every event.
type countingSink struct{ n, tools int }

func (c *countingSink) Emit(ev engine.Event) error {
	c.n++
	if ev.Kind == engine.KindToolFinished {
		c.tools++
	}
	return nil
}

// BenchmarkStepOverhead measures the engine's own cost per step: one run of
// N steps with an instant model and an instant tool, every event consumed by
// a subscriber. The per-step cost must not grow with N (the history).
//
// Variants: inline (the tool runs on the run's goroutine, as the built-in
// tools do; events go to a Sink), isolated (the tool is not Inline, as MCP
// and shell tools are not: the step's only call runs watched, watch.go), channel (events read from Start's channel by
// another goroutine, as the console does), and the first two with no sink
// (nosink: nobody reads the events, as in ../shared/bench's side-by-side),
// and pair-nosink: two isolated calls a step, run in parallel, each on its
// own goroutine.
// cpu-ns/step is the process's CPU time per step, garbage collection and
// the scheduler included.
func BenchmarkStepOverhead(b *testing.B) {
	type variant struct {
		name    string
		inline  bool
		channel bool
		noSink  bool
		steps   []int
		pair    bool
	}
	for _, v := range []variant{
		{"inline", true, false, false, []int{100, 1000, 10000}, false},
		{"isolated", false, false, false, []int{1000}, false},
		{"channel", true, true, false, []int{1000}, false},
		{"inline-nosink", true, false, true, []int{1000, 10000, 50000}, false},
		{"isolated-nosink", false, false, true, []int{1000, 10000, 50000}, false},
		{"pair-nosink", false, false, true, []int{1000}, true},
	} {
		for _, steps := range v.steps {
			b.Run(fmt.Sprintf("%s/steps=%d", v.name, steps), func(b *testing.B) {
				tool := instantTool()
				tool.Inline = v.inline
				model := loopModel(steps)
				if v.pair {
					model = pairModel(steps)
				}
				e := engine.New(engine.Config{Model: model, Tools: enginetest.Registry(b, tool), MaxSteps: steps})
				b.ReportAllocs()
				events := 0
				cpu := cpuTime()
				for b.Loop() {
					s := engine.NewSession("bench")
					if v.channel {
						for range e.Start(context.Background(), s, "go", nil) {
							events++
						}
						continue
					}
					if v.noSink {
						if res := e.Run(context.Background(), s, "go", nil); res.StopReason != engine.StopAnswered || res.Steps != steps {
							b.Fatalf("run: %s %v, %d steps", res.StopReason, res.Err, res.Steps)
						}
						continue
					}
					sub := &countingSink{}
					if res := e.Run(context.Background(), s, "go", sub); res.StopReason != engine.StopAnswered || sub.tools != steps-1 {
						b.Fatalf("run: %s %v, %d tool results", res.StopReason, res.Err, sub.tools)
					}
					events += sub.n
				}
				b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N*steps), "cpu-ns/step")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
				b.ReportMetric(float64(events)/float64(b.N*steps), "events/step")
			})
		}
	}
}

// BenchmarkConcurrentRuns starts 1,000 runs of 10 steps at once on one
// engine and reports runs per second: with the tool inline (the built-in
// pure tools' path) and isolated (watched, as MCP, shell and user tools
// run).
func BenchmarkConcurrentRuns(b *testing.B) {
	const runs, steps = 1000, 10
	for _, inline := range []bool{true, false} {
		name := "isolated"
		if inline {
			name = "inline"
		}
		b.Run(name, func(b *testing.B) {
			tool := instantTool()
			tool.Inline = inline
			e := engine.New(engine.Config{Model: loopModel(steps), Tools: enginetest.Registry(b, tool)})
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				var wg sync.WaitGroup
				for range runs {
					wg.Go(func() {
						sub := &countingSink{}
						if res := e.Run(context.Background(), engine.NewSession("bench"), "go", sub); res.StopReason != engine.StopAnswered {
							b.Errorf("run: %s %v", res.StopReason, res.Err)
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N*runs)/b.Elapsed().Seconds(), "runs/s")
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N*runs*steps), "cpu-ns/step")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*runs*steps), "ns/step")
		})
	}
}
