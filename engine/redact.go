package engine

// Secrets in what the model sends. Config.Redact takes the secrets agentty
// holds (the API key, credentials of the config) out of the text the
// model streams and of tool results; a model may also put one in a tool
// call's arguments (remember {"value": KEY}), and from there into memory.
// The tool is handed the arguments as the model sent them; the journal,
// and so the history, the next request, --json, exports and the search
// index, keep them without the secret, and say so: Decided.Redacted names
// the calls, MemoryChanged.Redacted the facts.

import (
	"bytes"
	"encoding/json"
)

// secretArgsCall answers a call whose arguments held a secret when a run
// is continued after the process that asked for it died (run.secretArgs):
// the journal has its arguments without the secret, so it is not run.
const secretArgsCall = "error: this tool call was not run: its arguments held a secret, which the journal does not keep, and the process that started it stopped; ask for it again"

// decided is the payload of the decision dec, asked for in attempts
// attempts, with its calls' arguments as the journal keeps them.
func (r *run) decided(dec Decision, attempts int) Decided {
	d := Decided{Text: dec.Text, Reasoning: dec.Reasoning, ToolCalls: dec.ToolCalls, Attempts: attempts, Model: dec.Model}
	if r.e.cfg.Redact == nil {
		return d
	}
	for i, c := range dec.ToolCalls {
		args := r.journaledArgs(c.Args)
		if string(args) == string(c.Args) {
			continue
		}
		if d.Redacted == nil { // the calls run with dec's: journal a copy
			d.ToolCalls = append([]ToolCall(nil), dec.ToolCalls...)
		}
		d.ToolCalls[i].Args = args
		d.Redacted = append(d.Redacted, c.ID)
	}
	return d
}

// journaledArgs are a call's arguments as the journal keeps them: without
// the secrets Config.Redact finds.
func (r *run) journaledArgs(args json.RawMessage) json.RawMessage {
	redact := r.e.cfg.Redact
	if redact == nil || len(args) == 0 {
		return args
	}
	out := redact(string(args))
	switch {
	case out == string(args):
		return redactDecoded(args, redact) // a secret spelled with JSON escapes
	case json.Valid([]byte(out)) || !json.Valid(args): // malformed ones stay text
		return json.RawMessage(out)
	}
	return json.RawMessage(`{"redacted":"the arguments held a secret"}`)
}

// redactDecoded redacts the strings of the JSON value args as decoded, so
// that a secret written with escapes (\u0073k-…) is found too; args as
// they are when none held one.
func redactDecoded(args json.RawMessage, redact func(string) string) json.RawMessage {
	if bytes.IndexByte(args, '\\') < 0 {
		return args // no escapes: the text was what was decoded
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return args
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if out := redact(x); out != x {
				changed = true
				return out
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
				if out := redact(k); out != k {
					changed = true
					x[out] = x[k]
					delete(x, k)
				}
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return args
	}
	out, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`{"redacted":"the arguments held a secret"}`)
	}
	return out
}

// redactFinished takes the secrets out of a tool's result and error, also
// those the engine wrote (a validation error quoting an argument).
func (r *run) redactFinished(fin *ToolFinished) {
	if redact := r.e.cfg.Redact; redact != nil {
		fin.Result, fin.Error = redact(fin.Result), redact(fin.Error)
		if len(fin.Structured) > 0 {
			fin.Structured = redactJSON(fin.Structured, redact)
		}
	}
}

// redactMemory takes the secrets out of a fact a tool wrote.
func (r *run) redactMemory(c *MemoryChanged) {
	if redact := r.e.cfg.Redact; redact != nil {
		if v := redact(c.Value); v != c.Value {
			c.Value, c.Redacted = v, true
		}
	}
}

// redactJSON takes the secrets out of every string of a JSON value (keys
// and values), so that what is left is still JSON.
func redactJSON(raw json.RawMessage, redact func(string) string) json.RawMessage {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil // not JSON: not kept
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			return redact(x)
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[redact(k)] = walk(e)
			}
			return out
		}
		return v
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		return nil
	}
	return b
}
