package traces_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/traces"
)

// loopModel calls the instant tool until the run's last step, then answers
// (engine/bench_test.go's shape).
func loopModel(steps int) engine.Model {
	args := json.RawMessage(`{"text":"x"}`)
	return enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		if req.Turn+1 >= steps {
			return engine.Decision{Text: "done", Usage: engine.Usage{PromptTokens: 10, CompletionTokens: 1}}, nil
		}
		return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c", Name: "echo", Args: args}}, Usage: engine.Usage{PromptTokens: 10, CompletionTokens: 1}}, nil
	})
}

// discard is an exporter that drops what it is sent.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkStepOverhead is the engine's step (one decision, one instant
// inline tool call) with no trace sink, and with one exporting through the
// batching processor (as agentty does) to an exporter that drops the spans.
// The difference of the two ns/step is what tracing adds.
func BenchmarkStepOverhead(b *testing.B) {
	const steps = 1000
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name+"/steps=1000", func(b *testing.B) {
			tool := enginetest.EchoTool()
			tool.Inline = true
			e := engine.New(engine.Config{Model: loopModel(steps), ModelName: "bench", Tools: enginetest.Registry(b, tool), MaxSteps: steps})
			var sink engine.Sink = engine.SinkFunc(func(engine.Event) error { return nil })
			var bsp sdktrace.SpanProcessor
			if on {
				bsp = sdktrace.NewBatchSpanProcessor(discard{}, sdktrace.WithMaxQueueSize(1<<20)) // nothing dropped
				sink = traces.NewSink(traces.Options{}, bsp)
			}
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				if res := e.Run(context.Background(), engine.NewSession("bench"), "go", sink); res.StopReason != engine.StopAnswered {
					b.Fatalf("run: %s %v", res.StopReason, res.Err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
			if on {
				// and until the batching processor has exported every
				// span: its goroutine works beside the run's
				bsp.Shutdown(context.Background())
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*steps), "ns/step-drained")
		})
	}
}
