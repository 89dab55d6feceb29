package traces

import (
	"encoding/json"

	"github.com/agentty/agentty/engine"
)

// The conventions' message shape (gen_ai.input.messages and
// gen_ai.output.messages), as JSON.
type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  string          `json:"response,omitempty"`
}

type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

func messages(role, text string) string {
	b, _ := json.Marshal([]message{{Role: role, Parts: []part{{Type: "text", Content: text}}}})
	return string(b)
}

func decisionMessages(d *engine.Decided, reason string) string {
	b, _ := json.Marshal([]message{decisionMessage(d, reason)})
	return string(b)
}

func decisionMessage(d *engine.Decided, reason string) message {
	m := message{Role: "assistant", FinishReason: reason}
	if d.Text != "" {
		m.Parts = append(m.Parts, part{Type: "text", Content: d.Text})
	}
	for _, c := range d.ToolCalls {
		args := c.Args
		if !json.Valid(args) {
			args, _ = json.Marshal(string(args))
		}
		m.Parts = append(m.Parts, part{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: args})
	}
	return m
}
