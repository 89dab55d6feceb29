package sessions_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/tools"
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
		mk(engine.Decide, engine.KindDecision, &engine.Decided{ToolCalls: []engine.ToolCall{call}, Attempts: 1}),
		mk(engine.Decide, engine.KindUsage, &engine.UsageRecorded{Usage: engine.Usage{PromptTokens: 900, CompletionTokens: 20}}),
		mk(engine.Act, engine.KindToolStarted, &engine.ToolStarted{ID: call.ID, Name: call.Name, Args: call.Args}),
		mk(engine.Act, engine.KindToolFinished, &engine.ToolFinished{ID: call.ID, Name: call.Name, Status: "ok", Result: "17*23 = 391", Attempts: 1}),
		mk(engine.Observe, engine.KindStepFinished, &engine.StepFinished{ToolCalls: 1}),
	}
}

// BenchmarkAppend measures appending events to a journal as the engine
// does: "event" writes each event on its own (Emit, then Flush, no fsync);
// "step" writes a step's seven events at the engine's three flush points
// (before the model, before the tool, at the step's end), with the step's
// fsync. Both report ns per event.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []string{"event", "step"} {
		b.Run(mode, func(b *testing.B) {
			store, _ := sessions.Open(b.TempDir())
			j, err := store.Create()
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			evs := stepEvents(1)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				i := n % len(evs)
				n++
				if mode == "event" && i == len(evs)-1 {
					i = 0 // not step_finished: no fsync
				}
				if err := j.Emit(evs[i]); err != nil {
					b.Fatal(err)
				}
				if mode == "event" || i == 1 || i == 4 || i == 6 {
					if err := j.Flush(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkJournaledRun is the engine's 1,000-step run (instant scripted
// model, instant tool) with the journal as its sink. It reports ns/step,
// journal bytes/step, fsyncs/step, and the journal's cost per step on top
// of its fsync: the time spent outside fsync(2), measured by the journal.
func BenchmarkJournaledRun(b *testing.B) {
	const steps = 1000
	args := json.RawMessage(`{"expression":"17*23"}`)
	m := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		if req.Turn+1 >= steps {
			return engine.Decision{Text: "done"}, nil
		}
		return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c", Name: "calculator", Args: args}}}, nil
	})
	reg := enginetest.Registry(b, tools.Builtins()...)
	e := engine.New(engine.Config{Model: m, Tools: reg, MaxSteps: steps})
	store, _ := sessions.Open(b.TempDir())
	var bytes int64
	var syncs int
	var inSync time.Duration
	b.ReportAllocs()
	for b.Loop() {
		j, err := store.Create()
		if err != nil {
			b.Fatal(err)
		}
		if res := e.Run(context.Background(), engine.NewSession(j.ID), "go", j); res.StopReason != engine.StopAnswered {
			b.Fatal(res.Err)
		}
		n, d := j.Syncs()
		syncs, inSync = syncs+n, inSync+d
		j.Close()
		st, _ := os.Stat(store.JournalPath(j.ID))
		bytes += st.Size()
	}
	steps64 := float64(b.N * steps)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/steps64, "ns/step")
	b.ReportMetric(float64(bytes)/steps64, "bytes/step")
	b.ReportMetric(float64(syncs)/steps64, "fsyncs/step")
	b.ReportMetric(float64(inSync.Nanoseconds())/float64(syncs), "ns/fsync")
	b.ReportMetric(float64((b.Elapsed()-inSync).Nanoseconds())/steps64, "ns/step-beside-fsync")
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
