package engine_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
)

// A prompt hash is a string in JSON (jq and JavaScript round a number
// above 2^53), in model_request and in prompt, and a journal written when
// it was a number still reads exactly.
func TestPromptHashIsExactInJSON(t *testing.T) {
	const h = engine.Hash(1<<63 + 12345) // 9223372036854788153: a float64 makes it ...776000
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, ev := range []engine.Event{
		{V: engine.SchemaVersion, Session: "s", Run: "run-1", Kind: engine.KindModelRequest, Time: at, Data: &engine.ModelRequest{Messages: 1, PromptHash: h}},
		{V: engine.SchemaVersion, Session: "s", Run: "run-1", Kind: engine.KindPrompt, Time: at, Data: &engine.Prompt{Hash: h, System: "be brief"}},
	} {
		line, err := ev.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		var loose map[string]any // as jq or JavaScript would read it
		if err := json.Unmarshal(line, &loose); err != nil {
			t.Fatal(err)
		}
		data := loose["data"].(map[string]any)
		if got := data["prompt_hash"]; ev.Kind == engine.KindModelRequest && got != "9223372036854788153" {
			t.Errorf("model_request's prompt_hash reads as %#v: %s", got, line)
		}
		if got := data["hash"]; ev.Kind == engine.KindPrompt && got != "9223372036854788153" {
			t.Errorf("prompt's hash reads as %#v: %s", got, line)
		}
		back, err := engine.DecodeEvent(line)
		if err != nil {
			t.Fatal(err)
		}
		old, err := engine.DecodeEvent([]byte(strings.Replace(string(line), `"9223372036854788153"`, `9223372036854788153`, 1)))
		if err != nil {
			t.Fatalf("a journal of before (a number): %v", err)
		}
		for _, e := range []engine.Event{back, old} {
			switch d := e.Data.(type) {
			case *engine.ModelRequest:
				if d.PromptHash != h {
					t.Errorf("read back %d, want %d", d.PromptHash, h)
				}
			case *engine.Prompt:
				if d.Hash != h {
					t.Errorf("read back %d, want %d", d.Hash, h)
				}
			}
		}
	}
	if _, err := engine.DecodeEvent([]byte(`{"v":1,"session":"s","run":"r","kind":"prompt","time":"2026-01-02T03:04:05Z","data":{"hash":"x1"}}`)); err == nil {
		t.Error("a hash that is no number was read")
	}
}
