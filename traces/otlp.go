package traces

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// Config says where spans go.
type Config struct {
	// Endpoint is --otlp: the collector's base URL (http://host:4318);
	// empty means the OTEL_EXPORTER_OTLP_* variables.
	Endpoint string
	// File is --trace-file: the spans are written there as OTLP JSON, a
	// line an export (file.go), instead of being sent to a collector.
	File string
	// Content is --trace-content (or AGENTTY_TRACE_CONTENT=1).
	Content bool
	// Getenv reads the environment (os.Getenv).
	Getenv func(string) string
	// Version is agentty's, for service.version.
	Version string
}

// Enabled reports whether tracing is asked for: --otlp, or an OTLP endpoint
// in the environment.
func (c Config) Enabled() bool {
	return c.File != "" || c.Endpoint != "" || c.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || c.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// metricsEndpoint is where metrics go: OTEL_EXPORTER_OTLP_METRICS_ENDPOINT,
// or the base endpoint when OTEL_METRICS_EXPORTER=otlp; "" for none (so
// that a collector that takes only traces, such as Jaeger, is not sent
// metrics it refuses).
func (c Config) metricsEndpoint() string {
	if e := c.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"); e != "" {
		return e
	}
	if c.Getenv("OTEL_METRICS_EXPORTER") != "otlp" {
		return ""
	}
	base := c.Endpoint
	if base == "" {
		base = c.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if base == "" {
		return ""
	}
	return strings.TrimSuffix(base, "/") + "/v1/metrics"
}

// ContentFromEnv reports AGENTTY_TRACE_CONTENT=1 (or true).
func ContentFromEnv(getenv func(string) string) bool {
	v := strings.ToLower(getenv("AGENTTY_TRACE_CONTENT"))
	return v == "1" || v == "true" || v == "yes"
}

// Exporting bounds: spans wait in a bounded queue and are dropped when it
// is full, so a collector that is slow or down never holds a run up.
const (
	queueSize       = 4096
	exportTimeout   = 5 * time.Second
	ShutdownTimeout = 2 * time.Second
)

// Tracing is the OTLP pipeline of one command: a provider with a batching
// processor and an exporter. Close it at the end of the command.
type Tracing struct {
	bsp     sdktrace.SpanProcessor
	res     *resource.Resource
	sampler sdktrace.Sampler
	content bool

	mu       sync.Mutex
	errs     []error // the first failure only: it is reported once
	sinks    []*Sink
	exported *counted
	meters   *sdkmetric.MeterProvider // nil without a metrics endpoint
	metrics  *Metrics
}

// counted counts the spans its exporter took.
type counted struct {
	sdktrace.SpanExporter
	n atomic.Int64
}

func (c *counted) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := c.SpanExporter.ExportSpans(ctx, spans)
	if err == nil {
		c.n.Add(int64(len(spans)))
	}
	return err
}

// Start sets up the pipeline c asks for. It makes no connection: the
// exporter connects when it first sends.
func Start(ctx context.Context, c Config) (*Tracing, error) {
	t := &Tracing{content: c.Content}
	sampler, err := SamplerFromEnv(c.Getenv)
	if err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	t.sampler = sampler
	exp, err := exporter(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	attrs := []attribute.KeyValue{semconv.ServiceName("agentty")}
	if c.Version != "" {
		attrs = append(attrs, semconv.ServiceVersion(c.Version))
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attrs...),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
		resource.WithTelemetrySDK())
	if err != nil && res == nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	// The exporter's failures reach the global error handler; keep the
	// first and say it once, at Close.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(t.failed))
	t.res = res
	if err := t.startMetrics(ctx, c, res); err != nil {
		return nil, fmt.Errorf("traces: metrics: %w", err)
	}
	t.exported = &counted{SpanExporter: exp}
	t.bsp = sdktrace.NewBatchSpanProcessor(t.exported, sdktrace.WithMaxQueueSize(queueSize), sdktrace.WithExportTimeout(exportTimeout))
	return t, nil
}

func exporter(ctx context.Context, c Config) (sdktrace.SpanExporter, error) {
	if c.File != "" {
		return fileExporter(ctx, c.File)
	}
	proto := c.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = c.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	// The endpoint is read here, not left to the exporter, so that the
	// environment the command was given is the one that counts.
	endpoint, signal := c.Endpoint, false
	if endpoint == "" {
		if endpoint = c.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); endpoint != "" {
			signal = true
		} else {
			endpoint = c.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("the OTLP endpoint %q is not an http:// or https:// URL", endpoint)
	}
	switch proto {
	case "grpc":
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(u.Host), otlptracegrpc.WithTimeout(exportTimeout),
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
		if u.Scheme == "http" {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		return otlptracegrpc.New(ctx, opts...)
	case "", "http/protobuf":
	default:
		return nil, fmt.Errorf("OTLP protocol %q is not supported (http/protobuf or grpc)", proto)
	}
	if !signal { // the base URL: the traces path goes after it
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()), otlptracehttp.WithTimeout(exportTimeout),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
}

func (t *Tracing) failed(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.errs) == 0 {
		t.errs = append(t.errs, err)
	}
}

// Sink is a sink exporting through this pipeline.
func (t *Tracing) Sink(opt Options) *Sink {
	opt.Content = opt.Content || t.content
	opt.Resource, opt.Sampler = t.res, t.sampler
	if opt.Metrics == nil && !opt.Replay {
		opt.Metrics = t.metrics
	}
	s := NewSink(opt, t.bsp)
	t.mu.Lock()
	t.sinks = append(t.sinks, s)
	t.mu.Unlock()
	return s
}

// Flush sends the spans queued now, waiting at most ShutdownTimeout: a
// worker's run that ended is exported before its request is acknowledged,
// so a worker that dies after that loses none of its spans.
func (t *Tracing) Flush(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ShutdownTimeout)
	defer cancel()
	return t.bsp.ForceFlush(ctx)
}

// Close sends what is queued, waiting at most ShutdownTimeout, and returns
// the first failure to export, if any (to be told once).
func (t *Tracing) Close() error {
	t.mu.Lock()
	sinks := t.sinks
	t.sinks = nil
	t.mu.Unlock()
	var sent int64
	for _, s := range sinks {
		s.Close()
		sent += s.Sent()
	}
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := t.bsp.Shutdown(ctx); err != nil {
		t.failed(err)
	}
	if t.meters != nil {
		if err := t.meters.Shutdown(ctx); err != nil {
			t.failed(err)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := sent - t.exported.n.Load(); n > 0 && len(t.errs) == 0 {
		t.errs = append(t.errs, fmt.Errorf("%d of %d spans were dropped", n, sent))
	}
	if len(t.errs) > 0 {
		return fmt.Errorf("traces: spans could not be sent (%w)", errors.Join(t.errs...))
	}
	return nil
}

// SamplerFromEnv is the sampler OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG name; nil (every run) when unset. A run's trace is
// the root of its spans, so the parent-based samplers sample as their root
// sampler does; the decision is taken once per run, on its trace id, so a
// journal exported again is sampled the same way.
func SamplerFromEnv(getenv func(string) string) (sdktrace.Sampler, error) {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	ratio := func() (float64, error) {
		arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
		if arg == "" {
			return 1, nil
		}
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || f < 0 || f > 1 {
			return 0, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG %q is not a ratio from 0 to 1", arg)
		}
		return f, nil
	}
	switch strings.TrimPrefix(name, "parentbased_") {
	case "", "always_on":
		return nil, nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		f, err := ratio()
		if err != nil {
			return nil, err
		}
		return sdktrace.TraceIDRatioBased(f), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER %q is not one agentty knows (always_on, always_off, traceidratio, parentbased_…)", name)
}

// startMetrics sets up the metrics pipeline when a metrics endpoint is
// named.
func (t *Tracing) startMetrics(ctx context.Context, c Config, res *resource.Resource) error {
	endpoint := c.metricsEndpoint()
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("the OTLP metrics endpoint %q is not an http:// or https:// URL", endpoint)
	}
	proto := c.Getenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")
	if proto == "" {
		proto = c.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exp sdkmetric.Exporter
	if proto == "grpc" {
		opts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithEndpoint(u.Host), otlpmetricgrpc.WithTimeout(exportTimeout)}
		if u.Scheme == "http" {
			opts = append(opts, otlpmetricgrpc.WithInsecure())
		}
		exp, err = otlpmetricgrpc.New(ctx, opts...)
	} else {
		exp, err = otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(u.String()), otlpmetrichttp.WithTimeout(exportTimeout),
			otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
	}
	if err != nil {
		return err
	}
	t.meters = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	t.metrics, err = NewMetrics(t.meters.Meter(Scope.Name))
	return err
}
