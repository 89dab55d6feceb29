package engine

import (
	"context"
	"encoding/json"
	"testing"
)

var flatSchemas = []string{
	`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`,
	`{"type":"object","properties":{"expression":{"type":"string","description":"e"}},"required":["expression"]}`,
	`{"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"},"ok":{"type":"boolean"},"mode":{"type":"string","enum":["a","b\"c"]}},"required":["n","mode"],"additionalProperties":false}`,
	`{"type":"object","properties":{}}`,
}

// slowValid is the JSON Schema validator's verdict, without the flat path.
func slowValid(t testing.TB, schema string, args []byte) bool {
	t.Helper()
	reg, err := NewRegistry(Tool{Name: "t", Schema: json.RawMessage(schema), Func: func(context.Context, *Call) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	set := reg.set()
	var inst any
	if json.Unmarshal(args, &inst) != nil {
		return false
	}
	return set.tools[0].schema.Validate(inst) == nil
}

func TestFlatSchemas(t *testing.T) {
	for _, s := range flatSchemas {
		if compileFlat(json.RawMessage(s)) == nil {
			t.Errorf("not flat: %s", s)
		}
	}
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string","minLength":1}}}`,
		`{"type":"object","properties":{"a":{"type":"array"}}}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`,
		`{"properties":{"a":{"type":"string"}}}`,
		`{"type":"object","oneOf":[]}`,
	} {
		if compileFlat(json.RawMessage(s)) != nil {
			t.Errorf("flat: %s", s)
		}
	}
	f := compileFlat(json.RawMessage(flatSchemas[2]))
	for args, want := range map[string]bool{
		`{"n":1,"mode":"a"}`: true,
		` { "n" : -12 , "x": 1.5e-3, "ok": false, "mode" : "a" } `: true,
		`{"n":1.0,"mode":"a"}`:         false, // unsure: left to the validator
		`{"n":1,"mode":"c"}`:           false,
		`{"n":1,"mode":"b\"c"}`:        false, // an escape: left to the validator
		`{"n":1}`:                      false,
		`{"n":1,"mode":"a","other":1}`: false,
		`{"n":01,"mode":"a"}`:          false,
		`{"n":1,"mode":"a"} x`:         false,
		`{"n":1,"mode":"a",}`:          false,
		`{"n":"1","mode":"a"}`:         false,
		`{"n":1,"mode":"a","ok":null}`: false,
	} {
		if got := f.valid([]byte(args)); got != want {
			t.Errorf("%s: valid %v, want %v", args, got, want)
		}
		if f.valid([]byte(args)) && !slowValid(t, flatSchemas[2], []byte(args)) {
			t.Errorf("%s: the flat path accepts what the validator refuses", args)
		}
	}
}

// FuzzFlatSchema holds the flat path to its promise: whatever it calls
// valid, the JSON Schema validator accepts.
func FuzzFlatSchema(f *testing.F) {
	for _, s := range []string{`{"text":"hi"}`, `{"n":1,"mode":"a","x":2.5,"ok":true}`, `{"expression":"6*7"}`, `{}`, `{"text":"a\u00e9\n"}`} {
		for i := range flatSchemas {
			f.Add(i, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, i int, args []byte) {
		if i < 0 {
			i = -i
		}
		schema := flatSchemas[i%len(flatSchemas)]
		if compileFlat(json.RawMessage(schema)).valid(args) && !slowValid(t, schema, args) {
			t.Fatalf("schema %s: the flat path accepts %q, which the validator refuses", schema, args)
		}
	})
}
