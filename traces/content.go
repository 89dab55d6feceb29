package traces

import (
	"encoding/json"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/agentty/agentty/engine"
)

// What a chat span was asked (Options.Content): gen_ai.input.messages, the
// run's messages so far as the conventions shape them, and
// gen_ai.system_instructions, from the session's prompt event.

// maxInputBytes bounds gen_ai.input.messages: the latest messages that
// fit, the rest counted in agentty.input.dropped_messages.
const maxInputBytes = 64 << 10

// maxSystems bounds the prompts a Sink remembers.
const maxSystems = 256

// conversation is a run's messages, each marshalled once.
type conversation struct{ msgs [][]byte }

func (c *conversation) add(m message) {
	b, _ := json.Marshal(m)
	c.msgs = append(c.msgs, b)
}

// json is the latest messages that fit maxInputBytes (at least the last),
// as a JSON list, and how many were left out.
func (c *conversation) json() (string, int) {
	from, size := len(c.msgs), 2
	for from > 0 && (from == len(c.msgs) || size+len(c.msgs[from-1])+1 <= maxInputBytes) {
		from--
		size += len(c.msgs[from]) + 1
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteByte('[')
	for i, m := range c.msgs[from:] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m)
	}
	b.WriteByte(']')
	return b.String(), from
}

// converse notes what ev adds to its run's messages; s.mu is held.
func (s *Sink) converse(r *runState, ev engine.Event) {
	if !s.opt.Content {
		return
	}
	switch d := ev.Data.(type) {
	case *engine.Prompt:
		if len(s.systems) >= maxSystems {
			clear(s.systems)
		}
		b, _ := json.Marshal([]part{{Type: "text", Content: d.System}})
		s.systems[d.Hash] = string(b)
	case *engine.RunStarted:
		r.conv.add(message{Role: "user", Parts: []part{{Type: "text", Content: d.Task}}})
	case *engine.Decided:
		r.conv.add(decisionMessage(d, ""))
	case *engine.ToolFinished:
		r.conv.add(message{Role: "tool", Parts: []part{{Type: "tool_call_response", ID: d.ID, Response: d.Result}}})
	case *engine.AnswerRejected:
		r.conv.add(message{Role: "user", Parts: []part{{Type: "text", Content: d.Message}}})
	}
}

// asked puts on the chat span just started what its request held.
func (s *Sink) asked(r *runState, d *engine.ModelRequest) {
	if !s.opt.Content || r.chat == nil {
		return
	}
	msgs, dropped := r.conv.json()
	r.chat.attrs = append(r.chat.attrs, KeyInputMessages.String(msgs))
	if dropped > 0 {
		r.chat.attrs = append(r.chat.attrs, KeyDroppedMessages.Int(dropped))
	}
	if sys, ok := s.systems[d.PromptHash]; ok {
		r.chat.attrs = append(r.chat.attrs, KeySystemInstruct.String(sys))
	}
}

// outcome marks a run span that ended without an answer: error status
// with the stop reason as error.type (a cancel is the person's, not an
// error), and an event naming the guardrail that stopped it.
func outcome(run *span, ev engine.Event, d *engine.RunFinished) {
	switch d.StopReason {
	case engine.StopAnswered, engine.StopCancelled:
		return
	case engine.StopError:
		run.attrs = append(run.attrs, KeyErrorType.String(ErrorTypeOther))
	default:
		run.attrs = append(run.attrs, KeyErrorType.String(string(d.StopReason)))
	}
	if name, ok := engine.GuardrailOf(d.Error); ok {
		run.event(EventGuardrail, ev.Time, []attribute.KeyValue{KeyGuardrailName.String(name)})
	}
	why := d.Error
	if why == "" {
		why = "stopped: " + string(d.StopReason)
	}
	run.fail(why)
}

// workflow makes a run that carries out a workflow its invoke_workflow
// span, named by the workflow.
func (r *runState) workflow(d *engine.WorkflowStarted) {
	r.run.name = OpInvokeWorkflow + " " + d.Name
	for i, kv := range r.run.attrs {
		switch kv.Key {
		case KeyOperationName:
			r.run.attrs[i] = KeyOperationName.String(OpInvokeWorkflow)
		case KeyAgentName:
			r.run.attrs[i] = KeyAgentName.String(d.Name)
		}
	}
	r.run.attrs = append(r.run.attrs, KeyWorkflowName.String(d.Name))
}
