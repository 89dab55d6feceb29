package sessions_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// stepEvents returns the events of one typical step: a decision with one
// tool call, its result and the step's end.
func stepEvents(step int) []engine.Event {
	now := time.Now()
	call := engine.ToolCall{ID: "call_1", Name: "calculator", Args: json.RawMessage(`{"expression":"17*23"}`)}
	mk := func(p engine.Phase, k engine.Kind, d any) engine.Event {
		return engine.Event{V: 1, Session: "s", Run: "run-1", Step: step, Phase: p, Kind: k, Time: now, Data: d}
	}
	return []engine.Event{
		mk(engine.Perceive, engine.KindStepStarted, &engine.StepStarted{Turn: step}),
		mk(engine.Perceive, engine.KindModelRequest, &engine.ModelRequest{Messages: 12, Tools: 5, Tokens: 900, Budget: 64000}),
		mk(engine.Decide, engine.KindDecision, &engine.DecisionData{ToolCalls: []engine.ToolCall{call}, Attempts: 1}),
		mk(engine.Decide, engine.KindUsage, &engine.UsageData{Usage: engine.Usage{PromptTokens: 900, CompletionTokens: 20}}),
		mk(engine.Act, engine.KindToolStarted, &engine.ToolStarted{ID: call.ID, Name: call.Name, Args: call.Args}),
		mk(engine.Act, engine.KindToolFinished, &engine.ToolFinished{ID: call.ID, Name: call.Name, Status: "ok", Result: "17*23 = 391", Attempts: 1}),
		mk(engine.Observe, engine.KindStepFinished, &engine.StepFinished{ToolCalls: 1}),
	}
}

// BenchmarkAppend measures appending one event to a journal: "nosync"
// leaves out the per-step fsync (only step_finished would sync), "step-sync"
// appends whole steps, so one event in seven carries the step's fsync.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []string{"nosync", "step-sync"} {
		b.Run(mode, func(b *testing.B) {
			store, _ := sessions.Open(b.TempDir())
			j, err := store.Create()
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			evs := stepEvents(1)
			if mode == "nosync" {
				evs = evs[:6]
			}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if err := j.Emit(evs[n%len(evs)]); err != nil {
					b.Fatal(err)
				}
				n++
			}
		})
	}
}

// fsyncCost measures one fsync of a step's worth of appended bytes on this
// disk: the cost the journal cannot avoid.
func fsyncCost(b *testing.B, size int) time.Duration {
	f, err := os.CreateTemp(b.TempDir(), "fsync")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, size)
	for i := range chunk {
		chunk[i] = 'x'
	}
	chunk[size-1] = '\n'
	const n = 300
	start := time.Now()
	for range n {
		f.Write(chunk)
		f.Sync()
	}
	return time.Since(start) / n
}

// BenchmarkJournaledRun is the engine's 1,000-step run (instant scripted
// model, instant tool) with the journal as its sink. It reports ns/step,
// journal bytes/step, fsyncs/step, and the journal's cost per step on top
// of its fsync.
func BenchmarkJournaledRun(b *testing.B) {
	const steps = 1000
	args := json.RawMessage(`{"expression":"17*23"}`)
	m := modelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		if req.Turn+1 >= steps {
			return engine.Decision{Text: "done"}, nil
		}
		return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c", Name: "calculator", Args: args}}}, nil
	})
	reg := registry(b)
	e := engine.New(engine.Config{Model: m, Tools: reg, MaxSteps: steps})
	fsync := fsyncCost(b, 1500)
	store, _ := sessions.Open(b.TempDir())
	var bytes int64
	b.ReportAllocs()
	for b.Loop() {
		j, err := store.Create()
		if err != nil {
			b.Fatal(err)
		}
		if res := e.Run(context.Background(), engine.NewSession(j.ID), "go", j); res.StopReason != engine.StopAnswered {
			b.Fatal(res.Err)
		}
		j.Close()
		st, _ := os.Stat(store.JournalPath(j.ID))
		bytes += st.Size()
	}
	perStep := float64(b.Elapsed().Nanoseconds()) / float64(b.N*steps)
	b.ReportMetric(perStep, "ns/step")
	b.ReportMetric(float64(bytes)/float64(b.N*steps), "bytes/step")
	b.ReportMetric(float64(fsync.Nanoseconds()), "ns/fsync")
	b.ReportMetric(perStep-float64(fsync.Nanoseconds()), "ns/step-over-fsync")
}

// BenchmarkResume replays a 10,000-event journal from disk.
func BenchmarkResume(b *testing.B) {
	store, _ := sessions.Open(b.TempDir())
	j, err := store.Create()
	if err != nil {
		b.Fatal(err)
	}
	events := 0
	for step := 1; events < 10000; step++ {
		for _, ev := range stepEvents(step) {
			ev.Session = j.ID
			if step == 1 && ev.Kind == engine.KindStepStarted {
				j.Emit(engine.Event{V: 1, Session: j.ID, Run: "run-1", Kind: engine.KindRunStarted, Time: ev.Time, Data: &engine.RunStarted{Task: "go", MaxSteps: 2000}})
				events++
			}
			if err := j.Emit(ev); err != nil {
				b.Fatal(err)
			}
			events++
		}
	}
	j.Close()
	b.ReportAllocs()
	for b.Loop() {
		l, err := store.Load(j.ID)
		if err != nil || len(l.Events) < 10000 {
			b.Fatalf("load: %v, %d events", err, len(l.Events))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/resume")
}
