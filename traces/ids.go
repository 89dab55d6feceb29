package traces

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"strconv"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Trace and span ids are derived from the ids the events carry, so that a
// run exported live and the same run exported later from its journal (or a
// run continued after a crash) have the same ids: the trace from the session
// and the run, the run's span from them too, a decision's span from its step,
// a tool call's from its step, index and call id.

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnv is FNV-1a 64 over the parts, each ended by a zero byte so that
// ("ab","c") and ("a","bc") differ.
func fnv(seed uint64, parts ...string) uint64 {
	h := seed
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= fnvPrime
		}
		h *= fnvPrime // the zero byte
	}
	return h
}

// TraceID is the trace of one run of a session.
func TraceID(session, run string) trace.TraceID {
	var id trace.TraceID
	binary.BigEndian.PutUint64(id[:8], fnv(fnvOffset, "trace", session, run))
	binary.BigEndian.PutUint64(id[8:], fnv(fnvOffset^0x9e3779b97f4a7c15, "trace", session, run))
	if !id.IsValid() {
		id[15] = 1
	}
	return id
}

func spanID(h uint64) trace.SpanID {
	if h == 0 {
		h = 1
	}
	var id trace.SpanID
	binary.BigEndian.PutUint64(id[:], h)
	return id
}

// RunSpanID is the span of a run (invoke_agent).
func RunSpanID(session, run string) trace.SpanID {
	return spanID(fnv(fnvOffset, "run", session, run))
}

// ChatSpanID is the span of the decision of a step (chat).
func ChatSpanID(session, run string, step int) trace.SpanID {
	return spanID(fnv(fnvOffset, "chat", session, run, strconv.Itoa(step)))
}

// ToolSpanID is the span of a tool call (execute_tool): the index in its step
// and the call id, since models reuse call ids.
func ToolSpanID(session, run string, step, index int, call string) trace.SpanID {
	return spanID(fnv(fnvOffset, "tool", session, run, strconv.Itoa(step), strconv.Itoa(index), call))
}

type idsKey struct{}

type ids struct {
	trace trace.TraceID
	span  trace.SpanID
}

func withIDs(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, ids{t, s})
}

// IDGenerator gives the spans the sink starts the ids it derived; spans
// started by anyone else get random ids. A TracerProvider must use it for
// the sink's ids to hold (NewProvider sets it).
func IDGenerator() sdktrace.IDGenerator { return idGen{} }

type idGen struct{}

func (idGen) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if v, ok := ctx.Value(idsKey{}).(ids); ok {
		return v.trace, v.span
	}
	var t trace.TraceID
	binary.BigEndian.PutUint64(t[:8], rand.Uint64())
	binary.BigEndian.PutUint64(t[8:], rand.Uint64()|1)
	return t, spanID(rand.Uint64())
}

func (idGen) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if v, ok := ctx.Value(idsKey{}).(ids); ok {
		return v.span
	}
	return spanID(rand.Uint64())
}

// NewProvider is a TracerProvider with the sink's IDGenerator and opts.
func NewProvider(opts ...sdktrace.TracerProviderOption) *sdktrace.TracerProvider {
	return sdktrace.NewTracerProvider(append(opts, sdktrace.WithIDGenerator(IDGenerator()))...)
}
