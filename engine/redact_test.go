package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

const testKey = "sk-test-0123456789abcdef"

func redactKey(s string) string { return strings.ReplaceAll(s, testKey, "[redacted KEY]") }

// journalOf is every event of rec as the journal writes it.
func journalOf(t *testing.T, rec *enginetest.Recorder) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range rec.Events() {
		line, err := ev.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// A secret the model streams is held back while it may be cut between
// two pieces, and never handed on whole: not in a text_delta, not in the
// decision. Text without a secret is handed on as it comes, but for the
// held tail.
func TestRedactStreamedText(t *testing.T) {
	pieces := []string{"the key is sk-te", "st-0123456789", "abcdef, keep it", " safe"}
	m := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		for _, p := range pieces {
			req.Delta(p, false)
		}
		return engine.Decision{Text: strings.Join(pieces, "")}, nil
	})
	rec := &enginetest.Recorder{}
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t), Redact: redactKey, RedactHold: len(testKey) - 1})
	res := e.Run(context.Background(), engine.NewSession("s"), "what is the key?", rec)
	if res.Answer != "the key is [redacted KEY], keep it safe" {
		t.Errorf("answer %q", res.Answer)
	}
	var streamed strings.Builder
	for _, ev := range rec.Of(engine.KindTextDelta) {
		streamed.WriteString(ev.Data.(*engine.TextDelta).Text)
	}
	if streamed.String() != res.Answer {
		t.Errorf("streamed %q, want the answer whole and redacted", streamed.String())
	}
	if j := journalOf(t, rec); strings.Contains(j, "0123456789abcdef") {
		t.Errorf("the journal holds the key:\n%s", j)
	}
}

// A secret in a tool call's arguments reaches the tool as the model sent
// it, and the journal (tool_started, the decision, memory_changed, the
// history the next request carries) without it, saying which calls were
// redacted.
func TestRedactToolArgumentsAndMemory(t *testing.T) {
	var mu sync.Mutex // the echo calls run in parallel
	var got string
	echo := enginetest.EchoTool()
	f := echo.Func
	echo.Func = func(ctx context.Context, c *engine.Call) (string, error) {
		mu.Lock()
		got += string(c.Args)
		mu.Unlock()
		return f(ctx, c)
	}
	remember := engine.Tool{Name: "remember", Schema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"},"value":{"type":"string"}},"required":["key","value"]}`),
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Key, Value string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			c.Memory.Set(in.Key, in.Value)
			return "remembered", nil
		}}
	var second *engine.Request
	n := 0
	m := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		n++
		if n == 1 {
			return engine.Decision{ToolCalls: []engine.ToolCall{
				{ID: "c1", Name: "echo", Args: json.RawMessage(`{"text":"` + testKey + `"}`)},
				{ID: "c2", Name: "remember", Args: json.RawMessage(`{"key":"apikey","value":"` + testKey + `"}`)},
				{ID: "c3", Name: "echo", Args: json.RawMessage(`{"text":"plain"}`)},
			}}, nil
		}
		second = req
		return engine.Decision{Text: "done"}, nil
	})
	rec := &enginetest.Recorder{}
	s := engine.NewSession("s")
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, echo, remember), Redact: redactKey, RedactHold: len(testKey) - 1})
	if res := e.Run(context.Background(), s, "go", rec); res.StopReason != engine.StopAnswered {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(got, testKey) {
		t.Errorf("the tool got %s, want the arguments as sent", got)
	}
	if j := journalOf(t, rec); strings.Contains(j, testKey) {
		t.Errorf("the journal holds the key:\n%s", j)
	}
	dec := rec.Of(engine.KindDecision)[0].Data.(*engine.Decided)
	if strings.Join(dec.Redacted, ",") != "c1,c2" {
		t.Errorf("redacted calls %v, want c1,c2", dec.Redacted)
	}
	mem := rec.Of(engine.KindMemoryChanged)[0].Data.(*engine.MemoryChanged)
	if !mem.Redacted || mem.Value != "[redacted KEY]" {
		t.Errorf("memory_changed %+v", mem)
	}
	for _, msg := range second.Messages {
		for _, c := range msg.ToolCalls {
			if strings.Contains(string(c.Args), testKey) {
				t.Errorf("the next request carries the key in %s", c.Args)
			}
		}
	}
	for _, f := range second.Memory {
		if strings.Contains(f.Value, testKey) {
			t.Errorf("memory holds the key: %+v", f)
		}
	}
}
