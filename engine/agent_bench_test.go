package engine_test

import (
	"context"
	"encoding/json"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSubRuns compares the engine's cost per step of sub-runs with a
// top-level run's: "top-level" is one run of 1,000 steps on an engine with
// no agents, "top-level-runs" 100 runs of 10 steps one after another (the
// same length of run as the sub-runs); "sub-runs" is one decision that delegates to 100 agents at
// once, each a sub-run of 10 steps (1,000 sub-run steps, run in parallel,
// sharing the session and the sink). Both use the instant model and the
// isolated instant tool. cpu-ns/step is the CPU time per step (the fair
// comparison: the sub-runs also use the second core); ns/step is wall time.
func BenchmarkSubRuns(b *testing.B) {
	const subs, steps = 100, 10
	b.Run("top-level", func(b *testing.B) {
		e := engine.New(engine.Config{Model: loopModel(subs * steps), Tools: enginetest.Registry(b, instantTool()), MaxSteps: subs * steps})
		benchSteps(b, e, subs*steps, subs*steps-1)
	})
	b.Run("top-level-runs", func(b *testing.B) {
		// 100 top-level runs of 10 steps, one after another, per iteration.
		e := engine.New(engine.Config{Model: loopModel(steps), Tools: enginetest.Registry(b, instantTool())})
		b.ReportAllocs()
		cpu := cpuTime()
		for b.Loop() {
			for range subs {
				sub := &countingSink{}
				if res := e.Run(context.Background(), engine.NewSession("bench"), "go", sub); res.StopReason != engine.StopAnswered || sub.tools != steps-1 {
					b.Fatalf("run: %s %v, %d tool results", res.StopReason, res.Err, sub.tools)
				}
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N*subs*steps), "cpu-ns/step")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*subs*steps), "ns/step")
	})
	b.Run("sub-runs", func(b *testing.B) {
		delegations := make([]engine.ToolCall, subs)
		for i := range delegations {
			delegations[i] = engine.ToolCall{ID: "c" + strconv.Itoa(i), Name: engine.AgentTool, Args: json.RawMessage(`{"agent":"worker","task":"go"}`)}
		}
		top := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
			if req.Turn == 0 {
				return engine.Decision{ToolCalls: delegations, Usage: engine.Usage{PromptTokens: 10, CompletionTokens: 1}}, nil
			}
			return engine.Decision{Text: "done", Usage: engine.Usage{PromptTokens: 10, CompletionTokens: 1}}, nil
		})
		e := engine.New(engine.Config{Model: top, Tools: enginetest.Registry(b, instantTool()),
			Agents: []engine.Agent{{Name: "worker", Description: "works", Model: loopModel(steps)}}})
		benchSteps(b, e, subs*steps, subs*(steps-1)+subs)
	})
}

// benchSteps runs e on a new session per iteration and reports its cost
// per step; tools is the tool_finished events each run must have.
func benchSteps(b *testing.B, e *engine.Engine, steps, tools int) {
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		sub := &countingSink{}
		if res := e.Run(context.Background(), engine.NewSession("bench"), "go", sub); res.StopReason != engine.StopAnswered || sub.tools != tools {
			b.Fatalf("run: %s %v, %d tool results", res.StopReason, res.Err, sub.tools)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N*steps), "cpu-ns/step")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
}
