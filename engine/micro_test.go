package engine_test

import (
	"encoding/json"
	"testing"
)

func BenchmarkValidate(b *testing.B) {
	r := registry(b, instantTool())
	args := json.RawMessage(`{"text":"x"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Validate("echo", args); err != nil {
			b.Fatal(err)
		}
	}
}
