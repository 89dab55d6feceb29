package engine_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// harnessModel is the side-by-side harness's instant model (../shared/bench):
// each decision is a new call with its own id and arguments, made as a
// decoded model answer would be, and it reads only the last message.
func harnessModel() engine.Model {
	return enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		last := req.Messages[len(req.Messages)-1]
		var next, target int
		if last.Role == engine.RoleUser {
			next = 1
			target, _ = strconv.Atoi(strings.TrimPrefix(last.Content, "steps="))
		} else {
			k, t, _ := strings.Cut(last.ToolCallID[1:], "/")
			ki, _ := strconv.Atoi(k)
			next = ki + 1
			target, _ = strconv.Atoi(t)
		}
		if next > target {
			return engine.Decision{Text: "done"}, nil
		}
		return engine.Decision{ToolCalls: []engine.ToolCall{{
			ID:   "c" + strconv.Itoa(next) + "/" + strconv.Itoa(target),
			Name: "echo",
			Args: json.RawMessage(`{"i":` + strconv.Itoa(next) + `}`),
		}}}, nil
	})
}

// BenchmarkStepCostGrowth is the figure to quote for how a step's cost grows
// with the run's length (issue 42): CPU per step of a run of 50,000 steps
// over that of runs of 1,000, on the inline and the isolated path.
//
// Each iteration runs fifty 1,000-step runs and one 50,000-step run, in
// turn, so that the two are measured side by side whatever the machine is
// doing. Before each run the heap is collected, as in a fresh process (the
// harness runs each in a process of its own), and the collection is not
// counted; the collector's work during the run, on either core, is.
// Reports short-cpu-ns/step, long-cpu-ns/step and growth (their ratio; the
// goal is at most 1.25).
func BenchmarkStepCostGrowth(b *testing.B) {
	const short, long = 1000, 50000
	for _, inline := range []bool{true, false} {
		name := "isolated"
		if inline {
			name = "inline"
		}
		b.Run(name, func(b *testing.B) {
			tool := engine.Tool{Name: "echo", Description: "returns a short string", Inline: inline,
				Schema: json.RawMessage(`{"type":"object","properties":{"i":{"type":"number"}},"required":["i"]}`),
				Func:   func(context.Context, *engine.Call) (string, error) { return "ok", nil }}
			e := engine.New(engine.Config{Model: harnessModel(), Tools: enginetest.Registry(b, tool), MaxSteps: long + 1})
			var cpuShort, cpuLong time.Duration
			for b.Loop() {
				for range long / short {
					cpuShort += timedRun(b, e, short)
				}
				cpuLong += timedRun(b, e, long)
			}
			perShort := float64(cpuShort.Nanoseconds()) / float64(b.N*long)
			perLong := float64(cpuLong.Nanoseconds()) / float64(b.N*long)
			b.ReportMetric(perShort, "short-cpu-ns/step")
			b.ReportMetric(perLong, "long-cpu-ns/step")
			b.ReportMetric(perLong/perShort, "growth")
		})
	}
}

// timedRun collects the heap, then runs one run of n steps and returns the
// CPU it took.
func timedRun(b *testing.B, e *engine.Engine, n int) time.Duration {
	runtime.GC()
	c := cpuTime()
	res := e.Run(context.Background(), engine.NewSession("bench"), "steps="+strconv.Itoa(n), nil)
	d := cpuTime() - c
	if res.StopReason != engine.StopAnswered || res.Steps != n+1 {
		b.Fatalf("run: %s %v, %d steps", res.StopReason, res.Err, res.Steps)
	}
	return d
}
