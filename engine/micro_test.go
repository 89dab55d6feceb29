package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/agentty/agentty/engine/enginetest"
)

func BenchmarkValidate(b *testing.B) {
	r := enginetest.Registry(b, instantTool())
	args := json.RawMessage(`{"text":"x"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Validate("echo", args); err != nil {
			b.Fatal(err)
		}
	}
}
