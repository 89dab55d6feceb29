package openai_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/engine/openai"
)

// BenchmarkStreamDecode streams a 2,000-token answer with a tool call from
// an in-process server through go-openai, this package and the engine, and
// reports the cost per chunk from server bytes to engine event.
func BenchmarkStreamDecode(b *testing.B) {
	const tokens = 2000
	var ps []string
	for i := range tokens {
		ps = append(ps, enginetest.TextChunk(fmt.Sprintf("tok%d ", i)))
	}
	args := `{"text":"` + strings.Repeat("abc ", 20) + `"}`
	call := enginetest.ToolCallStream("call_1", "echo", args, 10)
	body := strings.TrimSuffix(enginetest.SSE(ps...), "data: [DONE]\n\n") + call
	chunks := strings.Count(body, "data: ") - 1
	f := enginetest.NewServer(b)
	m := openai.New(openai.Config{Model: "bench", BaseURL: f.URL()})
	reg, _ := engine.NewRegistry(enginetest.EchoTool())
	e := engine.New(engine.Config{Model: m, Tools: reg, MaxSteps: 1})
	events := 0
	sink := engine.SinkFunc(func(engine.Event) error { events++; return nil })
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		f.Reset(enginetest.Reply{Body: body})
		b.StartTimer()
		res := e.Run(context.Background(), engine.NewSession("bench"), "go", sink)
		if res.StopReason != engine.StopStepLimit {
			b.Fatalf("run: %s %v", res.StopReason, res.Err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
}
