package engine

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends the event as JSON, as MarshalJSON writes it, without
// reflection on the envelope: the journal encodes every event.
func (e Event) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(e.V), 10)
	b = append(b, `,"session":`...)
	b = appendString(b, e.Session)
	b = append(b, `,"run":`...)
	b = appendString(b, e.Run)
	if e.Agent != "" {
		b = append(b, `,"agent":`...)
		b = appendString(b, e.Agent)
	}
	if e.ParentRun != "" {
		b = append(b, `,"parent_run":`...)
		b = appendString(b, e.ParentRun)
	}
	if e.ParentCall != "" {
		b = append(b, `,"parent_call":`...)
		b = appendString(b, e.ParentCall)
	}
	if e.Workflow != "" {
		b = append(b, `,"workflow":`...)
		b = appendString(b, e.Workflow)
	}
	if e.WorkflowStep != "" {
		b = append(b, `,"workflow_step":`...)
		b = appendString(b, e.WorkflowStep)
	}
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(e.Step), 10)
	if e.Phase != "" {
		b = append(b, `,"phase":`...)
		b = appendString(b, string(e.Phase))
	}
	b = append(b, `,"kind":`...)
	b = appendString(b, string(e.Kind))
	b = append(b, `,"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if pa, ok := e.Data.(payloadAppender); ok {
		b = append(b, `,"data":`...)
		return append(pa.appendJSON(b), '}'), nil
	}
	if e.Data != nil {
		data, err := json.Marshal(e.Data)
		if err != nil {
			return b, err
		}
		if string(data) != "null" {
			b = append(b, `,"data":`...)
			b = append(b, data...)
		}
	}
	return append(b, '}'), nil
}

// MarshalJSON writes the event with its payload under "data".
func (e Event) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil) }

// payloadAppender is a payload that writes its own JSON, as encoding/json
// would but without reflection: the journal encodes every event, and these
// are the ones every step has.
type payloadAppender interface {
	appendJSON(b []byte) []byte
}

func appendIntField(b []byte, name string, v int64) []byte {
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `":`...)
	return strconv.AppendInt(b, v, 10)
}

func appendStringField(b []byte, name, v string) []byte {
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `":`...)
	return appendString(b, v)
}

// appendArgs writes tool arguments as ToolCall does: compact JSON under
// "args", or, when they are not JSON, text under "args_text".
func appendArgs(b []byte, args json.RawMessage) []byte {
	if len(args) == 0 {
		return b
	}
	buf := bytes.NewBuffer(append(b, `,"args":`...))
	if err := json.Compact(buf, args); err != nil {
		return appendStringField(append(b, ','), "args_text", string(args))
	}
	return buf.Bytes()
}

func (p *StepStarted) appendJSON(b []byte) []byte {
	return append(appendIntField(append(b, '{'), "turn", int64(p.Turn)), '}')
}

func (p *StepFinished) appendJSON(b []byte) []byte {
	return append(appendIntField(append(b, '{'), "tool_calls", int64(p.ToolCalls)), '}')
}

func (p *ModelRequest) appendJSON(b []byte) []byte {
	b = appendIntField(append(b, '{'), "messages", int64(p.Messages))
	b = appendIntField(append(b, ','), "memory_facts", int64(p.MemoryFacts))
	b = appendIntField(append(b, ','), "tools", int64(p.Tools))
	b = appendIntField(append(b, ','), "tokens", int64(p.Tokens))
	b = appendIntField(append(b, ','), "system_tokens", int64(p.SystemTokens))
	if p.InstructionTokens != 0 {
		b = appendIntField(append(b, ','), "instruction_tokens", int64(p.InstructionTokens))
	}
	if p.SummaryTokens != 0 {
		b = appendIntField(append(b, ','), "summary_tokens", int64(p.SummaryTokens))
	}
	b = appendIntField(append(b, ','), "memory_tokens", int64(p.MemoryTokens))
	b = appendIntField(append(b, ','), "tool_tokens", int64(p.ToolTokens))
	b = appendIntField(append(b, ','), "budget", int64(p.Budget))
	if p.Trigger != 0 {
		b = appendIntField(append(b, ','), "trigger", int64(p.Trigger))
	}
	if p.Window != 0 {
		b = appendIntField(append(b, ','), "window", int64(p.Window))
	}
	if p.PromptHash != 0 {
		b = p.PromptHash.appendJSON(append(b, `,"prompt_hash":`...))
	}
	if p.Local {
		b = append(b, `,"local":true`...)
	}
	return append(b, '}')
}

func (p *UsageRecorded) appendJSON(b []byte) []byte {
	b = appendIntField(append(b, '{'), "prompt_tokens", int64(p.PromptTokens))
	b = appendIntField(append(b, ','), "completion_tokens", int64(p.CompletionTokens))
	if p.Estimated {
		b = append(b, `,"estimated":true`...)
	}
	if p.CachedTokens != 0 {
		b = appendIntField(append(b, ','), "cached_prompt_tokens", int64(p.CachedTokens))
	}
	if p.Cost != 0 {
		b = strconv.AppendFloat(append(b, `,"cost_usd":`...), p.Cost, 'g', -1, 64)
	}
	if p.Priced != 0 {
		b = appendIntField(append(b, ','), "priced", int64(p.Priced))
	}
	if p.Calls != 0 {
		b = appendIntField(append(b, ','), "calls", int64(p.Calls))
	}
	if p.ReplayedCost != 0 {
		b = strconv.AppendFloat(append(b, `,"replayed_cost_usd":`...), p.ReplayedCost, 'g', -1, 64)
	}
	b = appendIntField(append(b, ','), "session_prompt_tokens", int64(p.SessionPrompt))
	b = appendIntField(append(b, ','), "session_completion_tokens", int64(p.SessionCompletion))
	return append(b, '}')
}

func (p *ToolStarted) appendJSON(b []byte) []byte {
	b = appendIntField(append(b, '{'), "index", int64(p.Index))
	b = appendStringField(append(b, ','), "id", p.ID)
	b = appendStringField(append(b, ','), "name", p.Name)
	return append(appendArgs(b, p.Args), '}')
}

func (p *ToolFinished) appendJSON(b []byte) []byte {
	b = appendIntField(append(b, '{'), "index", int64(p.Index))
	b = appendStringField(append(b, ','), "id", p.ID)
	b = appendStringField(append(b, ','), "name", p.Name)
	b = appendStringField(append(b, ','), "status", string(p.Status))
	b = appendStringField(append(b, ','), "result", p.Result)
	if p.Error != "" {
		b = appendStringField(append(b, ','), "error", p.Error)
	}
	if p.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	b = appendIntField(append(b, ','), "duration_ms", p.DurationMS)
	b = appendIntField(append(b, ','), "attempts", int64(p.Attempts))
	if p.By != "" {
		b = appendStringField(append(b, ','), "by", p.By)
	}
	if len(p.Structured) > 0 {
		b = append(append(b, `,"structured":`...), p.Structured...)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string; bytes that are not UTF-8 become
// U+FFFD, as encoding/json does.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\t':
				b = append(b, '\\', 't')
			case '\r':
				b = append(b, '\\', 'r')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
