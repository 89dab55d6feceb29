package openai_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/engine/openai"
)

// An answer's schema is sent as response_format: an object's as it is; a
// list's (OpenAI's structured outputs take nothing but an object at the
// root) inside an object's one required field, answer, and the answer
// taken out of it again, so that the run's answer is the list.
func TestResponseFormatOfAListIsWrapped(t *testing.T) {
	const list = `{"type":"array","items":{"type":"string"}}`
	const object = `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`
	for _, c := range []struct{ schema, answer, want, sent string }{
		{list, `{"answer": ["fix", "feat"]}`, `["fix","feat"]`,
			`{"additionalProperties":false,"properties":{"answer":{"items":{"type":"string"},"type":"array"}},"required":["answer"],"type":"object"}`},
		{object, `{"a": "b"}`, `{"a": "b"}`, object},
		{list, `["not","wrapped"]`, `["not","wrapped"]`, ""}, // left for the engine's check
	} {
		f := enginetest.NewServer(t, enginetest.Reply{Body: enginetest.Answer(c.answer)})
		req := &engine.Request{Messages: []engine.Message{{Role: engine.RoleUser, Content: "sort them"}}, OutputSchema: json.RawMessage(c.schema), Attempt: 1}
		d, err := newModel(f, nil).Decide(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if d.Text != c.want {
			t.Errorf("%s: answer %q, want %q", c.schema, d.Text, c.want)
		}
		rf, _ := f.Requests()[0].Body["response_format"].(map[string]any)
		js, _ := rf["json_schema"].(map[string]any)
		sent, _ := json.Marshal(js["schema"])
		var want any
		json.Unmarshal([]byte(c.sent), &want)
		wantB, _ := json.Marshal(want)
		if rf["type"] != "json_schema" || (c.sent != "" && string(sent) != string(wantB)) {
			t.Errorf("%s: response_format %v", c.schema, rf)
		}
	}
	f := enginetest.NewServer(t, enginetest.Reply{Body: enginetest.Answer(`{"answer":["x"]}`)})
	m := newModel(f, func(c *openai.Config) { c.NoStructuredOutput = true })
	d, _ := m.Decide(context.Background(), &engine.Request{Messages: []engine.Message{{Role: engine.RoleUser, Content: "x"}}, OutputSchema: json.RawMessage(list), Attempt: 1})
	if _, sent := f.Requests()[0].Body["response_format"]; sent || d.Text != `{"answer":["x"]}` {
		t.Errorf("NoStructuredOutput: response_format sent %v, answer %q", sent, d.Text)
	}
}
