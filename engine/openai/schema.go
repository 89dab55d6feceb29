package openai

import (
	"bytes"
	"encoding/json"
	"strings"
)

// wrapKey is the one field of the object in which an answer is asked for
// when its schema is not an object's.
const wrapKey = "answer"

// responseSchema is the schema sent as response_format for an answer's
// schema: the schema itself when it is an object's; otherwise (a list, a
// string) an object with one required field, answer, that holds it, since
// OpenAI's structured outputs take nothing but an object at the root.
// wrapped says which; the answer is then unwrapped (unwrapAnswer).
func responseSchema(schema json.RawMessage) (out json.RawMessage, wrapped bool) {
	var root struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(schema, &root) == nil && root.Type == "object" {
		return schema, false
	}
	b, err := json.Marshal(map[string]any{
		"type":                 "object",
		"properties":           map[string]json.RawMessage{wrapKey: schema},
		"required":             []string{wrapKey},
		"additionalProperties": false,
	})
	if err != nil { // schema is not JSON: sent as it is, and refused there
		return schema, false
	}
	return b, true
}

// unwrapAnswer is what an answer asked for inside {"answer": …} holds, as
// JSON text; an answer that is not such an object is left as it is (the
// engine's check of the answer says what is wrong with it).
func unwrapAnswer(text string) string {
	t := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(t, "```"); ok { // a fence, as the engine's check allows
		t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(rest, "json")), "```"))
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(t), &obj) != nil || len(obj) != 1 {
		return text
	}
	v, ok := obj[wrapKey]
	if !ok {
		return text
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return text
	}
	return b.String()
}
