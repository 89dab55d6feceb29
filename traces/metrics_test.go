package traces_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/traces"
)

func TestMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	m, err := traces.NewMetrics(mp.Meter("agentty"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := offlineConfig(t)
	cfg.Prices = func(string) (engine.Price, bool) { return engine.Price{Input: 1e6, Output: 2e6}, true } // $1 a prompt token
	runTask(t, context.Background(), cfg, "what is 1/0", traces.Options{Metrics: m})
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, md := range sm.Metrics {
			got[md.Name] = md.Data
		}
	}
	tokens, ok := got[traces.MetricTokenUsage].(metricdata.Histogram[int64])
	if !ok || len(tokens.DataPoints) != 2 {
		t.Fatalf("token usage: %#v", got[traces.MetricTokenUsage])
	}
	for _, dp := range tokens.DataPoints {
		typ, _ := dp.Attributes.Value(traces.KeyTokenType)
		model, _ := dp.Attributes.Value(traces.KeyRequestModel)
		if dp.Count != 2 || model.AsString() != "offline" || (typ.AsString() != "input" && typ.AsString() != "output") {
			t.Errorf("token point %v: count %d", dp.Attributes.ToSlice(), dp.Count)
		}
	}
	dur, ok := got[traces.MetricOperationDuration].(metricdata.Histogram[float64])
	if !ok || len(dur.DataPoints) != 1 || dur.DataPoints[0].Count != 2 {
		t.Fatalf("duration: %#v", got[traces.MetricOperationDuration])
	}
	cost, ok := got[traces.MetricCost].(metricdata.Sum[float64])
	var tokensIn, tokensOut int64
	for _, dp := range tokens.DataPoints {
		if typ, _ := dp.Attributes.Value(traces.KeyTokenType); typ.AsString() == "input" {
			tokensIn = dp.Sum
		} else {
			tokensOut = dp.Sum
		}
	}
	if !ok || len(cost.DataPoints) != 1 || cost.DataPoints[0].Value != float64(tokensIn+2*tokensOut) {
		t.Fatalf("cost: %#v, want %d", got[traces.MetricCost], tokensIn+2*tokensOut)
	}
	calls, ok := got[traces.MetricToolCalls].(metricdata.Sum[int64])
	if !ok || len(calls.DataPoints) != 1 {
		t.Fatalf("tool calls: %#v", got[traces.MetricToolCalls])
	}
	dp := calls.DataPoints[0]
	if name, _ := dp.Attributes.Value(traces.KeyToolName); dp.Value != 1 || name.AsString() != "calculator" {
		t.Errorf("tool calls point %v = %d", dp.Attributes.ToSlice(), dp.Value)
	}
	if v, _ := dp.Attributes.Value(traces.KeyToolStatus); v != attribute.StringValue("error") {
		t.Errorf("tool call status %v", v)
	}
}
