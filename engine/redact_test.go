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

// keyless says where, in what the journal keeps of rec, the key is: in
// any event as written, and in any call's arguments as decoded (a key
// written with JSON escapes is still the key).
func keyless(t *testing.T, rec *enginetest.Recorder) {
	t.Helper()
	if j := journalOf(t, rec); strings.Contains(j, testKey) {
		t.Errorf("the journal holds the key:\n%s", j)
	}
	for _, ev := range rec.Events() {
		var args []json.RawMessage
		switch d := ev.Data.(type) {
		case *engine.Decided:
			for _, c := range d.ToolCalls {
				args = append(args, c.Args)
			}
		case *engine.ToolStarted:
			args = append(args, d.Args)
		case *engine.GatePaused:
			if d.ToolCall != nil {
				args = append(args, d.ToolCall.Args)
			}
		}
		for _, a := range args {
			var v any
			json.Unmarshal(a, &v)
			if b, _ := json.Marshal(v); strings.Contains(string(b), testKey) {
				t.Errorf("%s holds the key, decoded: %s", ev.Kind, a)
			}
		}
	}
}

// The key spelled with JSON escapes, a delegated task that holds it, and
// a call the gate is asked to approve: each is journaled (and shown at the
// pause) without it.
func TestRedactEscapedDelegatedAndPaused(t *testing.T) {
	escaped := `\u0073k-test-0123456789abcdef`
	ask := enginetest.EchoTool()
	ask.Policy = engine.PolicyAsk
	var gateSaw []string
	gate := gateFunc(func(p engine.Pending) engine.Verdict {
		if p.ToolCall != nil {
			gateSaw = append(gateSaw, string(p.ToolCall.Args))
		}
		return engine.Verdict{Action: engine.Proceed}
	})
	var subTask string
	lead := 0
	m := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		if req.System == "You help." {
			subTask = req.Messages[0].Content
			return engine.Decision{Text: "helped"}, nil
		}
		lead++
		if lead == 1 {
			return engine.Decision{ToolCalls: []engine.ToolCall{
				{ID: "c1", Name: "echo", Args: json.RawMessage(`{"text":"` + escaped + `"}`)},
				{ID: "c2", Name: "agent", Args: json.RawMessage(`{"agent":"helper","task":"use ` + testKey + `"}`)},
			}}, nil
		}
		return engine.Decision{Text: "done"}, nil
	})
	rec := &enginetest.Recorder{}
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, ask), Gate: gate, Redact: redactKey, RedactHold: len(testKey) - 1,
		Agents: []engine.Agent{{Name: "helper", Description: "helps", System: "You help."}}})
	if res := e.Run(context.Background(), engine.NewSession("s"), "go", rec); res.StopReason != engine.StopAnswered {
		t.Fatalf("result %+v", res)
	}
	keyless(t, rec)
	if strings.Contains(subTask, testKey) {
		t.Errorf("the sub-run's task holds the key: %q", subTask)
	}
	if len(gateSaw) == 0 || strings.Contains(strings.Join(gateSaw, " "), "0123456789abcdef") {
		t.Errorf("the gate was shown %q", gateSaw)
	}
	dec := rec.Of(engine.KindDecision)[0].Data.(*engine.Decided)
	if strings.Join(dec.Redacted, ",") != "c1,c2" {
		t.Errorf("redacted calls %v", dec.Redacted)
	}
}

// A call whose arguments held a secret, left unfinished by a process that
// died, is not run by the continued run: the journal has its arguments
// without the secret, and running it so would act on a placeholder.
func TestContinueDoesNotRunRedactedArguments(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	echo := enginetest.EchoTool()
	f := echo.Func
	echo.Func = func(ctx context.Context, c *engine.Call) (string, error) {
		mu.Lock()
		ran = append(ran, string(c.Args))
		mu.Unlock()
		return f(ctx, c)
	}
	turns := func() engine.Model {
		n := 0
		return enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
			n++
			if n == 1 {
				return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c1", Name: "echo", Args: json.RawMessage(`{"text":"` + testKey + `"}`)}}}, nil
			}
			return engine.Decision{Text: "done"}, nil
		})
	}
	cfg := engine.Config{Model: turns(), Tools: enginetest.Registry(t, echo), Redact: redactKey, RedactHold: len(testKey) - 1}
	rec := &enginetest.Recorder{}
	engine.New(cfg).Run(context.Background(), engine.NewSession("s"), "go", rec)
	s := engine.NewSession("s")
	for _, ev := range rec.Events() { // the process died after tool_started
		if err := s.Apply(ev); err != nil {
			t.Fatal(err)
		}
		if ev.Kind == engine.KindToolStarted {
			break
		}
	}
	ran = nil
	cfg.Model = turns()
	cfg.Gate = gateFunc(func(engine.Pending) engine.Verdict { return engine.Verdict{Action: engine.Proceed} })
	res := engine.New(cfg).Continue(context.Background(), s, nil)
	if res.StopReason != engine.StopAnswered || len(ran) != 0 {
		t.Fatalf("continue: %+v; ran %q", res, ran)
	}
	for _, msg := range s.History {
		if msg.Role == engine.RoleTool && !strings.Contains(msg.Content, "its arguments held a secret") {
			t.Errorf("the call's result: %q", msg.Content)
		}
	}
}

// gateFunc is a Gate that stops at every pause and answers with f.
type gateFunc func(engine.Pending) engine.Verdict

func (g gateFunc) Stop(engine.Pending) bool { return true }
func (g gateFunc) Wait(_ context.Context, p engine.Pending) (engine.Verdict, error) {
	return g(p), nil
}

func TestPropertyOrder(t *testing.T) {
	got := engine.PropertyOrder(json.RawMessage(`{"type":"object","required":["path"],"properties":{"path":{"type":"string"},"content":{"type":"string","description":"{\"x\":1}"},"mode":{}},"additionalProperties":false}`))
	if strings.Join(got, ",") != "path,content,mode" {
		t.Errorf("PropertyOrder = %v", got)
	}
	if got := engine.PropertyOrder(json.RawMessage(`[1]`)); got != nil {
		t.Errorf("not an object: %v", got)
	}
}

// TestRedactInstructions: project instructions are a file of the workspace
// a model may have written the key into (AGENTS.md): the request, the
// journal's prompt and so the console's request inspector have them
// without it.
func TestRedactInstructions(t *testing.T) {
	var got string
	m := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		got = req.Instructions
		return engine.Decision{Text: "done"}, nil
	})
	in := func() engine.Instructions {
		return engine.Instructions{Text: "Use the key " + testKey + " for the API.", Sources: []string{"AGENTS.md"}}
	}
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t), Redact: redactKey, RedactHold: len(testKey) - 1, Instructions: in})
	rec := &enginetest.Recorder{}
	if res := e.Run(context.Background(), engine.NewSession("s"), "go", rec); res.StopReason != engine.StopAnswered {
		t.Fatal(res.Err)
	}
	if strings.Contains(got, testKey) || !strings.Contains(got, "[redacted KEY]") {
		t.Errorf("the request's instructions: %q", got)
	}
	if j := journalOf(t, rec); strings.Contains(j, testKey) || !strings.Contains(j, "[redacted KEY]") {
		t.Errorf("the journal has the key, or no instructions:\n%s", j)
	}
}
