package traces

import (
	"context"
	"time"

	"github.com/agentty/agentty/engine"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The GenAI client metrics (semantic conventions v1.41.0) and agentty's
// count of tool calls.
const (
	MetricTokenUsage        = "gen_ai.client.token.usage"
	MetricOperationDuration = "gen_ai.client.operation.duration"
	MetricToolCalls         = "agentty.tool.calls"
	MetricCost              = "agentty.usage.cost"
	KeyTokenType            = attribute.Key("gen_ai.token.type")
)

// Metrics records the GenAI client metrics from the events the Sink sees:
// the tokens of each decision, each decision's duration, and the tool calls
// by tool and status. Only live runs should feed it (a journal sent again
// would count twice).
type Metrics struct {
	tokens   metric.Int64Histogram
	duration metric.Float64Histogram
	tools    metric.Int64Counter
	cost     metric.Float64Counter
}

// NewMetrics makes the instruments on meter.
func NewMetrics(meter metric.Meter) (*Metrics, error) {
	var m Metrics
	var err error
	if m.tokens, err = meter.Int64Histogram(MetricTokenUsage, metric.WithUnit("{token}"),
		metric.WithDescription("Number of input and output tokens used"),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)); err != nil {
		return nil, err
	}
	if m.duration, err = meter.Float64Histogram(MetricOperationDuration, metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration"),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)); err != nil {
		return nil, err
	}
	if m.tools, err = meter.Int64Counter(MetricToolCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls by tool and status")); err != nil {
		return nil, err
	}
	if m.cost, err = meter.Float64Counter(MetricCost, metric.WithUnit("USD"),
		metric.WithDescription("What the model calls whose price is known cost, in US dollars")); err != nil {
		return nil, err
	}
	return &m, nil
}

func (m *Metrics) usage(provider, model string, u engine.Usage) {
	ctx := context.Background()
	base := []attribute.KeyValue{KeyOperationName.String(OpChat), KeyProviderName.String(provider), KeyRequestModel.String(model)}
	m.tokens.Record(ctx, int64(u.PromptTokens), metric.WithAttributes(append(base, KeyTokenType.String("input"))...))
	m.tokens.Record(ctx, int64(u.CompletionTokens), metric.WithAttributes(append(base, KeyTokenType.String("output"))...))
	if u.Priced > 0 { // an unknown cost is not counted as nothing
		m.cost.Add(ctx, u.Cost, metric.WithAttributes(base...))
	}
}

func (m *Metrics) decision(provider, model string, d time.Duration, errType string) {
	attrs := []attribute.KeyValue{KeyOperationName.String(OpChat), KeyProviderName.String(provider), KeyRequestModel.String(model)}
	if errType != "" {
		attrs = append(attrs, KeyErrorType.String(errType))
	}
	m.duration.Record(context.Background(), d.Seconds(), metric.WithAttributes(attrs...))
}

func (m *Metrics) tool(name, status string) {
	m.tools.Add(context.Background(), 1, metric.WithAttributes(KeyToolName.String(name), KeyToolStatus.String(status)))
}
