package script_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/script"
)

func TestParseErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{`{"turns":[{}]}`, "turn 0 has neither answer, tool_calls nor error"},
		{`{"turns":[{"tool_calls":[{"arguments":{}}]}]}`, "turn 0, tool call 0 has no name"},
		{`{"turns":[{"answr":"x"}]}`, `unknown field "answr"`},
		{`{"turns":`, "unexpected EOF"},
	}
	for _, tt := range tests {
		if _, err := script.Parse("t.json", []byte(tt.src)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%s) = %v, want %q", tt.src, err, tt.want)
		}
	}
	if _, err := script.Load(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func TestTurnsFollowTheDecisionNumber(t *testing.T) {
	m, err := script.Parse("t", []byte(`{"turns":[
		{"tool_calls":[{"name":"calc","arguments":{"expression":"2+2"}},{"name":"raw","arguments":"{not json"}]},
		{"answer":"four words in stream","stream":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.Decide(context.Background(), &engine.Request{Turn: 0})
	if err != nil || len(d.ToolCalls) != 2 || string(d.ToolCalls[0].Args) != `{"expression":"2+2"}` || string(d.ToolCalls[1].Args) != "{not json" {
		t.Fatalf("turn 0 = %+v, %v", d, err)
	}
	d, err = m.Decide(context.Background(), &engine.Request{Turn: 1})
	if err != nil || d.Text != "four words in stream" {
		t.Fatalf("turn 1 = %+v, %v", d, err)
	}
	_, err = m.Decide(context.Background(), &engine.Request{Turn: 2})
	if err == nil || engine.IsRetryable(err) || !strings.Contains(err.Error(), "out of turns at decision 3 (it has 2)") {
		t.Errorf("turn 2: %v, want a permanent out-of-turns error", err)
	}
}
