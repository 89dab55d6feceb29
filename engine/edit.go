package engine

import (
	"fmt"
	"slices"
)

// KindRequestEdited: the person changed the request of a decision before
// it was sent (RequestEdited); the history is not changed.
const KindRequestEdited Kind = "request_edited"

// RequestEdit changes one decision's request: its system prompt, a
// message's text, messages dropped, a note from the person added at the
// end. Indexes are of the request's Messages.
type RequestEdit struct {
	System   *string       `json:"system,omitempty"`
	Messages []MessageEdit `json:"messages,omitempty"`
	Note     string        `json:"note,omitempty"`
}

// MessageEdit changes or drops one of a request's messages.
type MessageEdit struct {
	Index   int     `json:"index"`
	Content *string `json:"content,omitempty"`
	Drop    bool    `json:"drop,omitempty"`
}

// RequestEdited is the payload of request_edited: the edit, and the
// request's size after it.
type RequestEdited struct {
	RequestEdit
	Tokens int `json:"tokens"`
}

// Empty reports whether e changes nothing.
func (e *RequestEdit) Empty() bool {
	return e == nil || e.System == nil && len(e.Messages) == 0 && e.Note == ""
}

// Check says what is wrong with e for req, nil if nothing.
func (e *RequestEdit) Check(req *Request) error {
	for _, m := range e.Messages {
		if m.Index < 0 || m.Index >= len(req.Messages) {
			return fmt.Errorf("message %d: the request has messages 0 to %d", m.Index, len(req.Messages)-1)
		}
		if m.Drop == (m.Content != nil) {
			return fmt.Errorf("message %d: give either content or drop", m.Index)
		}
		if m.Drop && req.Messages[m.Index].Role == RoleTool {
			return fmt.Errorf("message %d: a tool result cannot be dropped alone (drop the assistant message that called it, or change its content)", m.Index)
		}
	}
	return nil
}

// Apply returns req with e applied, sharing nothing e changes with req.
// Dropping an assistant message drops its tool results too: a server
// refuses a result whose call is gone.
func (e *RequestEdit) Apply(req *Request) (*Request, error) {
	if err := e.Check(req); err != nil {
		return nil, err
	}
	out := *req
	if e.System != nil {
		out.System = *e.System
	}
	msgs := slices.Clone(req.Messages)
	drop := make([]bool, len(msgs))
	for _, m := range e.Messages {
		if m.Drop {
			drop[m.Index] = true
			for _, c := range msgs[m.Index].ToolCalls {
				for j := m.Index + 1; j < len(msgs); j++ {
					if msgs[j].Role == RoleTool && msgs[j].ToolCallID == c.ID {
						drop[j] = true
					}
				}
			}
			continue
		}
		msgs[m.Index].Content = *m.Content
	}
	kept := msgs[:0]
	for i, m := range msgs {
		if !drop[i] {
			kept = append(kept, m)
		}
	}
	if e.Note != "" {
		kept = append(kept, Message{Role: RoleUser, Content: "A note from the person watching this run: " + e.Note})
	}
	out.Messages = kept
	return &out, nil
}

// RequestTokens estimates the size of req as a model would be sent it.
func RequestTokens(req *Request) int {
	n := EstimateTokens(req.System) + EstimateTokens(req.Instructions) + EstimateTokens(req.Summary) + estimateFacts(req.Memory) + estimateTools(req.Tools)
	for i := range req.Messages {
		n += estimateMessage(&req.Messages[i])
	}
	return n
}
