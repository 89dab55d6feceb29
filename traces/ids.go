package traces

import (
	"encoding/binary"
	"strings"

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

// fnvInt goes on with the eight bytes of n.
func fnvInt(h uint64, n int) uint64 {
	for i := 0; i < 8; i++ {
		h ^= uint64(byte(n >> (8 * i)))
		h *= fnvPrime
	}
	return h
}

// TraceID is the trace of one run of a session. A sub-run (an agent's run
// delegated to by a call, its id the parent's id, "/", …) is in its
// top-level run's trace.
func TraceID(session, run string) trace.TraceID {
	run, _, _ = strings.Cut(run, "/")
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
	return spanID(fnvInt(fnv(fnvOffset, "chat", session, run), step))
}

// ToolSpanID is the span of a tool call (execute_tool): the index in its step
// and the call id, since models reuse call ids.
func ToolSpanID(session, run string, step, index int, call string) trace.SpanID {
	return spanID(fnv(fnvInt(fnvInt(fnv(fnvOffset, "tool", session, run), step), index), call))
}

// Traceparent is the W3C trace context header for the model request of a
// run's step: its parent is that step's chat span, so a proxy or gateway
// that reads the header (LiteLLM, an API gateway) joins the run's trace.
func Traceparent(session, run string, step int) string {
	return "00-" + TraceID(session, run).String() + "-" + ChatSpanID(session, run, step).String() + "-01"
}
