package bus_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/sessions"
	"github.com/nats-io/nats.go"
)

// BenchmarkPublishPerStep is the cost of publishing a run's events on NATS:
// one run of 1,000 steps (an instant model and tool) journaled to a file,
// with and without the NATS sink after the journal, the server embedded and
// reached over loopback TCP; "watched" adds a subscriber reading every
// event. ns/step is the whole run's time per step, journal included. The
// journal fsyncs at every step, which is most of its cost on this kind of
// disk: "none" and "nats" (no journal) show the sink's own cost.
func BenchmarkPublishPerStep(b *testing.B) {
	const steps = 1000
	e := stepEngine(b, steps)
	srv := startServer(b)
	for _, v := range []string{"none", "nats", "journal", "journal+nats", "journal+nats/watched"} {
		b.Run(v, func(b *testing.B) {
			store, err := sessions.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			var sink *bus.Sink
			if strings.Contains(v, "nats") {
				nc, err := bus.Connect(bus.Config{URL: srv.URL()})
				if err != nil {
					b.Fatal(err)
				}
				sink = bus.NewSink(nc)
				defer nc.Close()
				defer sink.Close(10 * time.Second)
			}
			var got int
			if v == "journal+nats/watched" {
				w, err := nats.Connect(srv.URL())
				if err != nil {
					b.Fatal(err)
				}
				defer w.Close()
				if _, err := w.Subscribe(bus.Filter(""), func(*nats.Msg) { got++ }); err != nil {
					b.Fatal(err)
				}
				w.Flush()
			}
			b.ReportAllocs()
			for b.Loop() {
				j, err := store.Create()
				if err != nil {
					b.Fatal(err)
				}
				s := engine.NewSession(j.ID)
				sinks := engine.Sinks{j}
				if !strings.HasPrefix(v, "journal") {
					sinks = engine.Sinks{}
				}
				if sink != nil {
					sinks = append(sinks, sink)
				}
				if res := e.Run(context.Background(), s, "go", sinks); res.StopReason != engine.StopAnswered {
					b.Fatalf("run: %s %v", res.StopReason, res.Err)
				}
				j.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
			if sink != nil {
				if err := sink.Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// stepEngine runs steps steps of one instant inline tool call each, then
// answers: the run the bus benchmarks journal and publish.
func stepEngine(b *testing.B, steps int) *engine.Engine {
	return stepEngineWith(b, steps, false)
}

// stepEngineWith is stepEngine with the tool Repeatable (pure: a run
// continued after a crash may call it again) or not.
func stepEngineWith(b *testing.B, steps int, repeatable bool) *engine.Engine {
	args := json.RawMessage(`{"text":"x"}`)
	model := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		u := engine.Usage{PromptTokens: 10, CompletionTokens: 1}
		if req.Turn+1 >= steps {
			return engine.Decision{Text: "done", Usage: u}, nil
		}
		return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c", Name: "echo", Args: args}}, Usage: u}, nil
	})
	tool := engine.Tool{Name: "echo", Inline: true, Repeatable: repeatable, Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Func: func(context.Context, *engine.Call) (string, error) { return "ok", nil }}
	return engine.New(engine.Config{Model: model, Tools: enginetest.Registry(b, tool), MaxSteps: steps})
}
