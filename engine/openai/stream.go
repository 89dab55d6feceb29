package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/agentty/agentty/engine"
)

// chunk is one streamed chat-completion chunk, read with the fields
// go-openai's own type leaves out (reasoning, a missing index, error).
type chunk struct {
	// Model is the model that answered, as the server names it.
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent string  `json:"reasoning_content"`
			Reasoning        string  `json:"reasoning"`
			ToolCalls        []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	// Counts are read as numbers of any size (a server's 1e30 is a
	// count the engine calls implausible, not a chunk that is not JSON).
	Usage *struct {
		PromptTokens        float64 `json:"prompt_tokens"`
		CompletionTokens    float64 `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens float64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		// Cost is what the call cost in US dollars, when the server
		// says (OpenRouter's usage accounting).
		Cost *float64 `json:"cost"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	} `json:"error"`
}

// accumulator builds a decision from chunks.
type accumulator struct {
	text, reasoning strings.Builder
	calls           []toolCall
	byIndex         map[int]int
	finish          string
	usage           engine.Usage
	chunks          int
	// size is the answer's bytes so far (text, reasoning, arguments),
	// at most max; progress is told of every chunk that carried a part
	// of the answer.
	size, max int
	progress  func()
	counted   bool // a usage chunk came
	model     string
}

type toolCall struct {
	id, name string
	args     strings.Builder
}

func (a *accumulator) add(raw []byte, req *engine.Request) error {
	var c chunk
	if err := json.Unmarshal(raw, &c); err != nil {
		return engine.Transient(fmt.Errorf("the server sent a chunk that is not JSON: %.80s", raw), 0)
	}
	a.chunks++
	if a.model == "" && c.Model != "" {
		a.model = engine.OneLine(c.Model, 100) // the server's words: one line, bounded
	}
	if c.Error != nil {
		return &streamErr{msg: c.Error.Message, typ: c.Error.Type, code: c.Error.Code}
	}
	if err := a.grow(&c); err != nil {
		return err
	}
	if c.Usage != nil && (c.Usage.PromptTokens > 0 || c.Usage.CompletionTokens > 0) {
		a.usage = engine.Usage{PromptTokens: count(c.Usage.PromptTokens), CompletionTokens: count(c.Usage.CompletionTokens), CachedTokens: count(c.Usage.PromptTokensDetails.CachedTokens)}
		if c.Usage.Cost != nil && *c.Usage.Cost >= 0 {
			a.usage.Cost, a.usage.Priced = *c.Usage.Cost, 1
		}
	}
	for _, ch := range c.Choices {
		d := ch.Delta
		if d.Content != nil && *d.Content != "" {
			a.text.WriteString(*d.Content)
			req.Delta(*d.Content, false)
		}
		for _, r := range []string{d.ReasoningContent, d.Reasoning} {
			if r != "" {
				a.reasoning.WriteString(r)
				req.Delta(r, true)
			}
		}
		for _, tc := range d.ToolCalls {
			i := a.slot(tc.Index, tc.ID)
			if tc.Function.Name != "" && a.calls[i].name == "" {
				a.calls[i].name = tc.Function.Name
			}
			a.calls[i].args.WriteString(tc.Function.Arguments)
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	return nil
}

// grow counts what chunk c adds to the answer, tells of progress when it
// adds anything (or ends it), and refuses an answer past the cap.
func (a *accumulator) grow(c *chunk) error {
	n, parts := 0, c.Usage != nil && !a.counted // its end: once, not a filler
	a.counted = a.counted || c.Usage != nil
	for _, ch := range c.Choices {
		d := &ch.Delta
		if d.Content != nil {
			n += len(*d.Content)
		}
		n += len(d.ReasoningContent) + len(d.Reasoning)
		for _, tc := range d.ToolCalls {
			n += len(tc.Function.Arguments) + len(tc.Function.Name) + len(tc.ID)
		}
		parts = parts || ch.FinishReason != "" && a.finish == ""
	}
	if a.size += n; a.max > 0 && a.size > a.max {
		return errTooLarge
	}
	if (n > 0 || parts) && a.progress != nil {
		a.progress()
	}
	return nil
}

// count is a server's token count as an int: past the largest int, the
// largest (the engine takes it as implausible).
func count(f float64) int {
	switch {
	case f >= math.MaxInt || f != f:
		return math.MaxInt
	case f < -1:
		return -1 // implausible all the same, the same on every platform
	}
	return int(f)
}

// errTooLarge ends a decision whose answer passed Config.MaxAnswerBytes.
var errTooLarge = errors.New("the answer is larger than the cap")

// slot finds the call a tool-call delta belongs to. A delta with an id
// starts a call unless its index already holds a call with that same id;
// one without an id continues the call at its index, or the last call.
func (a *accumulator) slot(index *int, id string) int {
	if a.byIndex == nil {
		a.byIndex = map[int]int{}
	}
	if index != nil {
		if i, ok := a.byIndex[*index]; ok && (id == "" || a.calls[i].id == id) {
			return i
		}
	} else if id == "" && len(a.calls) > 0 {
		return len(a.calls) - 1
	}
	a.calls = append(a.calls, toolCall{id: id})
	i := len(a.calls) - 1
	if index != nil {
		a.byIndex[*index] = i
	}
	return i
}

func (a *accumulator) decision() (engine.Decision, error) {
	switch a.finish {
	case "error":
		return engine.Decision{}, engine.Transient(errors.New("the server ended the answer with finish_reason \"error\""), 0)
	case "":
		if a.chunks == 0 {
			return engine.Decision{}, engine.Transient(errors.New("the server closed the stream without sending anything"), 0)
		}
		return engine.Decision{}, engine.Transient(errors.New("the stream ended before the answer was finished"), 0)
	}
	d := engine.Decision{Text: a.text.String(), Reasoning: a.reasoning.String(), Usage: a.usage, Model: a.model}
	for _, c := range a.calls {
		if c.name == "" {
			return engine.Decision{}, engine.Transient(errors.New("the server sent a tool call without a name"), 0)
		}
		d.ToolCalls = append(d.ToolCalls, engine.ToolCall{ID: c.id, Name: c.name, Args: json.RawMessage(c.args.String())})
	}
	if d.Text == "" && len(d.ToolCalls) == 0 {
		return engine.Decision{}, engine.Transient(fmt.Errorf("the server finished (%s) with neither text nor tool calls", a.finish), 0)
	}
	return d, nil
}
