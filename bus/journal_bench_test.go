package bus_test

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/sessions"
)

// BenchmarkJournalPerStep is the journal's cost per step: one run of 1,000
// steps, each one tool call (an instant model, an echo tool), journaled to
// the local files ("file", fsynced at every step) or to JetStream on an
// embedded server reached over loopback TCP, its store synced on every
// write ("jetstream", every line acknowledged before the run goes on).
// ns/step is the run's wall time per step; cpu-ns/step the process's CPU
// time per step (the embedded server's included).
func BenchmarkJournalPerStep(b *testing.B) {
	const steps = 1000
	args := json.RawMessage(`{"text":"x"}`)
	model := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		u := engine.Usage{PromptTokens: 10, CompletionTokens: 1}
		if req.Turn+1 >= steps {
			return engine.Decision{Text: "done", Usage: u}, nil
		}
		return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c", Name: "echo", Args: args}}, Usage: u}, nil
	})
	tool := engine.Tool{Name: "echo", Inline: true, Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Func: func(context.Context, *engine.Call) (string, error) { return "ok", nil }}
	e := engine.New(engine.Config{Model: model, Tools: enginetest.Registry(b, tool), MaxSteps: steps})
	for _, v := range []string{"file", "jetstream"} {
		b.Run(v, func(b *testing.B) {
			var store *sessions.Store
			if v == "file" {
				var err error
				if store, err = sessions.Open(b.TempDir()); err != nil {
					b.Fatal(err)
				}
			} else {
				journals, _ := openJournals(b, startServer(b))
				store = sessions.OpenWith(b.TempDir(), journals)
			}
			cpu0 := cpuTime()
			b.ReportAllocs()
			for b.Loop() {
				j, err := store.Create()
				if err != nil {
					b.Fatal(err)
				}
				if res := e.Run(context.Background(), engine.NewSession(j.ID), "go", j); res.StopReason != engine.StopAnswered {
					b.Fatalf("run: %s %v", res.StopReason, res.Err)
				}
				if err := j.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*steps), "cpu-ns/step")
		})
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
