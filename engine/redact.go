package engine

// Secrets in what the model sends. Config.Redact takes the secrets agentty
// holds (the API key, credentials of the config) out of the text the
// model streams and of tool results; a model may also put one in a tool
// call's arguments (remember {"value": KEY}), and from there into memory.
// The tool is handed the arguments as the model sent them; the journal,
// and so the history, the next request, --json, exports and the search
// index, keep them without the secret, and say so: Decided.Redacted names
// the calls, MemoryChanged.Redacted the facts.

import "encoding/json"

// decided is the payload of the decision dec, asked for in attempts
// attempts, with its calls' arguments as the journal keeps them.
func (r *run) decided(dec Decision, attempts int) Decided {
	d := Decided{Text: dec.Text, Reasoning: dec.Reasoning, ToolCalls: dec.ToolCalls, Attempts: attempts}
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
		return args
	case json.Valid([]byte(out)) || !json.Valid(args): // malformed ones stay text
		return json.RawMessage(out)
	}
	return json.RawMessage(`{"redacted":"the arguments held a secret"}`)
}

// redactFinished takes the secrets out of a tool's result and error, also
// those the engine wrote (a validation error quoting an argument).
func (r *run) redactFinished(fin *ToolFinished) {
	if redact := r.e.cfg.Redact; redact != nil {
		fin.Result, fin.Error = redact(fin.Result), redact(fin.Error)
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
