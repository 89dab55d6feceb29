package traces

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Scope is the instrumentation scope of agentty's spans.
var Scope = instrumentation.Scope{Name: "github.com/agentty/agentty/traces", SchemaURL: "https://opentelemetry.io/schemas/" + SemconvVersion}

// span is a span noted from the events. Once complete it is handed, as it
// is, to the span processors as a finished span (sdktrace.ReadOnlySpan):
// its times, ids and parent are the events', not the SDK's clock and random
// ids, and nothing else is allocated for it.
type span struct {
	// The embedded interface supplies ReadOnlySpan's unexported method
	// (the SDK's own tracetest.SpanStub does the same); it is never called.
	sdktrace.ReadOnlySpan

	name       string
	kind       trace.SpanKind
	sc, parent trace.SpanContext
	start, end time.Time
	attrs      []attribute.KeyValue
	events     []sdktrace.Event
	status     sdktrace.Status
	res        *resource.Resource

	index    int    // a tool call's, in its step
	tool     string // a tool call's tool
	call     string // a tool call's id
	step     int    // a decision's
	finished bool   // a decision's span has its decision
}

func (s *span) Name() string                                { return s.name }
func (s *span) SpanContext() trace.SpanContext              { return s.sc }
func (s *span) Parent() trace.SpanContext                   { return s.parent }
func (s *span) SpanKind() trace.SpanKind                    { return s.kind }
func (s *span) StartTime() time.Time                        { return s.start }
func (s *span) EndTime() time.Time                          { return s.end }
func (s *span) Attributes() []attribute.KeyValue            { return s.attrs }
func (s *span) Links() []sdktrace.Link                      { return nil }
func (s *span) Events() []sdktrace.Event                    { return s.events }
func (s *span) Status() sdktrace.Status                     { return s.status }
func (s *span) InstrumentationScope() instrumentation.Scope { return Scope }

//nolint:staticcheck // ReadOnlySpan still has it.
func (s *span) InstrumentationLibrary() instrumentation.Library { return Scope }
func (s *span) Resource() *resource.Resource                    { return s.res }
func (s *span) DroppedAttributes() int                          { return 0 }
func (s *span) DroppedLinks() int                               { return 0 }
func (s *span) DroppedEvents() int                              { return 0 }
func (s *span) ChildSpanCount() int                             { return 0 }

func (s *span) event(name string, t time.Time, attrs []attribute.KeyValue) {
	s.events = append(s.events, sdktrace.Event{Name: name, Time: t, Attributes: attrs})
}

func (s *span) fail(desc string) {
	s.status = sdktrace.Status{Code: codes.Error, Description: desc}
}

func spanContext(t trace.TraceID, id trace.SpanID) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: t, SpanID: id, TraceFlags: trace.FlagsSampled})
}
