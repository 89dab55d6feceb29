package engine

import (
	"bytes"
	"encoding/json"
	"testing"

	gjs "github.com/google/jsonschema-go/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validatorCases are tool schemas shaped like ours (the harness's echo, the
// calculator, read_file, edit_file, remember) with arguments that pass.
var validatorCases = []struct{ name, schema, args string }{
	{"echo", `{"type":"object","properties":{"i":{"type":"number"}},"required":["i"]}`, `{"i":17}`},
	{"calculator", `{"type":"object","properties":{"expression":{"type":"string","minLength":1,"maxLength":200}},"required":["expression"],"additionalProperties":false}`, `{"expression":"(17*23) + sqrt(16)"}`},
	{"read_file", `{"type":"object","properties":{"path":{"type":"string","minLength":1},"start_line":{"type":"integer","minimum":1},"end_line":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`, `{"path":"README.md","start_line":1,"end_line":40}`},
	{"edit_file", `{"type":"object","properties":{"path":{"type":"string","minLength":1},"old":{"type":"string","minLength":1},"new":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["path","old","new"],"additionalProperties":false}`, `{"path":"main.go","old":"foo","new":"bar"}`},
	{"remember", `{"type":"object","properties":{"key":{"type":"string","minLength":1},"value":{"type":"string"}},"required":["key","value"],"additionalProperties":false}`, `{"key":"name","value":"Ada"}`},
}

// BenchmarkValidators compares the two maintained JSON Schema validators at
// hand on our tools' schemas: santhosh-tekuri/jsonschema (the engine's) and
// google/jsonschema-go (the MCP SDK's), each given the same decoded value;
// decode is the decoding both need.
func BenchmarkValidators(b *testing.B) {
	for _, c := range validatorCases {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(c.schema)))
		if err != nil {
			b.Fatal(err)
		}
		comp := jsonschema.NewCompiler()
		if err := comp.AddResource("tool:x", doc); err != nil {
			b.Fatal(err)
		}
		st, err := comp.Compile("tool:x")
		if err != nil {
			b.Fatal(err)
		}
		var gs gjs.Schema
		if err := json.Unmarshal([]byte(c.schema), &gs); err != nil {
			b.Fatal(err)
		}
		gr, err := gs.Resolve(nil)
		if err != nil {
			b.Fatal(err)
		}
		var inst any
		if err := json.Unmarshal([]byte(c.args), &inst); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := json.Unmarshal([]byte(c.args), &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/santhosh", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := st.Validate(inst); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/google", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := gr.Validate(inst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
