package traces

import (
	"encoding/json"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentty/agentty/engine"
)

// ToolType is gen_ai.tool.type: "extension" for an MCP tool (server__tool),
// "function" for the rest.
func ToolType(name string) string {
	if strings.Contains(name, "__") {
		return ToolTypeExtension
	}
	return ToolTypeFunction
}

func (s *Sink) startTool(r *runState, step, index int, id, name string, args json.RawMessage, t time.Time) *span {
	attrs := make([]attribute.KeyValue, 0, 9)
	attrs = append(attrs,
		KeyOperationName.String(OpExecuteTool),
		KeyToolName.String(name),
		KeyToolCallID.String(id),
		KeyToolType.String(ToolType(name)),
		KeyStep.Int(step))
	if s.opt.Content && len(args) > 0 {
		attrs = append(attrs, KeyToolArguments.String(string(args)))
	}
	spanName, ok := s.toolNames[name]
	if !ok {
		spanName = OpExecuteTool + " " + name
		s.toolNames[name] = spanName
	}
	return &span{name: spanName, kind: trace.SpanKindInternal, parent: r.run.sc, res: s.opt.Resource,
		sc: spanContext(r.run.sc.TraceID(), ToolSpanID(r.key.session, r.key.run, step, index, id)), start: t, attrs: attrs, index: index, tool: name, call: id}
}

func (s *Sink) toolFinished(r *runState, ev engine.Event, d *engine.ToolFinished) {
	var sp *span
	for i, t := range r.tools {
		if t.index == d.Index {
			sp = t
			r.tools = append(r.tools[:i], r.tools[i+1:]...)
			break
		}
	}
	if sp == nil { // refused or skipped: it never started
		sp = s.startTool(r, ev.Step, d.Index, d.ID, d.Name, nil, ev.Time.Add(-time.Duration(d.DurationMS)*time.Millisecond))
	}
	sp.attrs = append(sp.attrs, KeyToolStatus.String(string(d.Status)), KeyToolDurationMS.Int64(d.DurationMS), KeyAttempts.Int(d.Attempts))
	if d.Truncated {
		sp.attrs = append(sp.attrs, KeyToolTruncated.Bool(true))
	}
	if d.By != "" { // a person answered in the tool's place: it did not run
		sp.attrs = append(sp.attrs, KeyAnsweredBy.String(d.By))
	}
	if s.opt.Content {
		sp.attrs = append(sp.attrs, KeyToolResult.String(d.Result))
	}
	switch d.Status {
	case engine.ToolError:
		kind := "tool_error"
		if strings.Contains(d.Error, "timed out") || strings.Contains(d.Error, "deadline exceeded") {
			kind = "timeout"
		} else if strings.Contains(d.Error, "cancel") {
			kind = "cancelled"
		}
		sp.attrs = append(sp.attrs, KeyErrorType.String(kind))
		sp.fail(d.Error)
	case engine.ToolDenied:
		sp.attrs = append(sp.attrs, KeyErrorType.String("denied"))
		sp.fail("denied")
	}
	sp.end = ev.Time
	if s.opt.Metrics != nil && !s.priming { // the journal primed: its process counted them
		s.opt.Metrics.tool(d.Name, string(d.Status))
	}
	s.send(r, sp)
}

// endTools ends the calls still open (the run ended under them).
func (s *Sink) endTools(r *runState, t time.Time, kind, why string) {
	for _, sp := range r.tools {
		if kind != "" {
			sp.attrs = append(sp.attrs, KeyErrorType.String(kind))
			sp.fail(why)
		}
		sp.end = t
		s.send(r, sp)
	}
	r.tools = r.tools[:0]
}
