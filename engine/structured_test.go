package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// A tool's structured result (Call.SetStructured) is in its tool_finished
// and in the history's message, survives the journal's JSON, is redacted
// as the text is, is dropped when the call fails, and is never what the
// model reads: the next request's message is the text alone. Both ways a
// call runs (inline on the run's goroutine, isolated on its own) keep it.
func TestStructuredResult(t *testing.T) {
	for _, inline := range []bool{true, false} {
		tool := engine.Tool{Name: "split", Inline: inline, Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Text string }
			c.Bind(&in)
			if err := c.SetStructured(map[string]any{"words": strings.Fields(in.Text)}); err != nil {
				return "", err
			}
			if in.Text == "fail" {
				return "", errors.New("failed")
			}
			return "split it", nil
		}}
		var next *engine.Request
		model := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
			if req.Turn == 0 {
				return engine.Decision{ToolCalls: []engine.ToolCall{
					{ID: "a", Name: "split", Args: json.RawMessage(`{"text":"one SECRET two"}`)},
					{ID: "b", Name: "split", Args: json.RawMessage(`{"text":"fail"}`)},
				}}, nil
			}
			cp := *req
			cp.Messages = append([]engine.Message(nil), req.Messages...)
			next = &cp
			return engine.Decision{Text: "done"}, nil
		})
		e := engine.New(engine.Config{Model: model, Tools: enginetest.Registry(t, tool),
			Redact: func(s string) string { return strings.ReplaceAll(s, "SECRET", "[redacted]") }})
		rec := &enginetest.Recorder{}
		if res := e.Run(context.Background(), engine.NewSession("s"), "go", rec); res.StopReason != engine.StopAnswered {
			t.Fatalf("inline %v: %+v", inline, res)
		}
		const want = `{"words":["one","[redacted]","two"]}`
		byID := map[string]string{} // in the order they finished, which is not the calls'
		for _, f := range rec.Finished() {
			byID[f.ID] = string(f.Structured)
		}
		if len(byID) != 2 || byID["a"] != want || byID["b"] != "" {
			t.Fatalf("inline %v: tool_finished: %q", inline, byID)
		}
		folded := engine.NewSession("s")
		for _, ev := range rec.Events() {
			b, err := ev.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			back, err := engine.DecodeEvent(b)
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if err := folded.Apply(back); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		for _, m := range folded.History {
			if m.Role == engine.RoleTool {
				got = append(got, string(m.Structured))
			}
		}
		if len(got) != 2 || got[0] != want || got[1] != "" {
			t.Errorf("inline %v: the history folded from the journal holds %q", inline, got)
		}
		for _, m := range next.Messages {
			b, _ := json.Marshal(m)
			if m.Role == engine.RoleTool && (strings.Contains(string(b), "words") || strings.Contains(m.Content, "words")) {
				t.Errorf("inline %v: the model is sent the structured result: %s", inline, b)
			}
		}
	}
}
