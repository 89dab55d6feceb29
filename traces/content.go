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
// fit, the rest counted in agentty.input.dropped_messages. A run's sink
// keeps no more than that of its messages.
const maxInputBytes = 64 << 10

// maxSystems bounds the prompts a Sink remembers.
const maxSystems = 256

// maxMessageBytes bounds one message of gen_ai.input.messages: a longer
// one has its texts clipped.
const maxMessageBytes = 16 << 10

// conversation is a run's latest messages, each marshalled once, within
// maxInputBytes all told; dropped counts those left out before them.
type conversation struct {
	msgs    [][]byte
	size    int
	dropped int
}

func (c *conversation) add(m message) {
	b, _ := json.Marshal(m)
	if len(b) > maxMessageBytes {
		for i := range m.Parts {
			p := &m.Parts[i]
			p.Content, p.Response = engine.Clip(p.Content, maxMessageBytes/4), engine.Clip(p.Response, maxMessageBytes/4)
			if len(p.Arguments) > maxMessageBytes/4 {
				p.Arguments, _ = json.Marshal(engine.Clip(string(p.Arguments), maxMessageBytes/4))
			}
		}
		b, _ = json.Marshal(m)
	}
	c.msgs = append(c.msgs, b)
	c.size += len(b) + 1
	for len(c.msgs) > 1 && c.size+1 > maxInputBytes {
		c.size -= len(c.msgs[0]) + 1
		c.msgs[0] = nil
		c.msgs = c.msgs[1:]
		c.dropped++
	}
}

// json is the messages kept, as a JSON list, and how many were left out.
func (c *conversation) json() (string, int) {
	var b strings.Builder
	b.Grow(c.size + 2)
	b.WriteByte('[')
	for i, m := range c.msgs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m)
	}
	b.WriteByte(']')
	return b.String(), c.dropped
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
// error), and an event naming the guardrail that stopped it. A guardrail's
// reason quotes the text it stopped: without content, the status names
// the guardrail alone.
func outcome(run *span, ev engine.Event, d *engine.RunFinished, content bool) {
	switch d.StopReason {
	case engine.StopAnswered, engine.StopCancelled:
		return
	case engine.StopError:
		run.attrs = append(run.attrs, KeyErrorType.String(ErrorTypeOther))
	default:
		run.attrs = append(run.attrs, KeyErrorType.String(string(d.StopReason)))
	}
	why := d.Error
	if name, ok := engine.GuardrailOf(d.Error); ok {
		run.event(EventGuardrail, ev.Time, []attribute.KeyValue{KeyGuardrailName.String(name)})
		if !content {
			why = "guardrail " + name + " stopped the run"
		}
	}
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
