package eval

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
)

// outcomeFor is an outcome the assertions are checked against.
func outcomeFor() *outcome {
	return &outcome{
		Session: "s1", Task: "what is 17*23?", Answer: "17*23 = 391", Stop: engine.StopAnswered, Steps: 2,
		Calls: []engine.ToolCall{
			{Name: "remember", Args: json.RawMessage(`{"key":"name","value":"Ada"}`)},
			{Name: "calculator", Args: json.RawMessage(`{"expression":"17*23","precision":{"digits":2}}`)},
			{Name: "calculator", Args: json.RawMessage(`{"expression":"1+1"}`)},
		},
		Memory:   []engine.Fact{{Key: "name", Value: "Ada"}},
		Tokens:   1200,
		Usage:    engine.Usage{PromptTokens: 1000, CompletionTokens: 200, Cost: 0.012, Priced: 2, Calls: 2},
		Duration: 1500 * time.Millisecond,
	}
}

// assertionOf parses one assertion written in YAML.
func assertionOf(t *testing.T, text string) *assertion {
	t.Helper()
	s, err := parseSuite("t.yaml", []byte("cases:\n  - name: x\n    task: t\n    assert:\n      - "+text+"\n"))
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return s.Cases[0].Asserts[0]
}

// TestEvalAssertions: each assertion passing, and failing with a reason
// that says what was expected and what was got.
func TestEvalAssertions(t *testing.T) {
	tests := []struct {
		assert string
		pass   bool
		why    string // a part of the reason, when it fails
	}{
		{`answer_contains: "391"`, true, ""},
		{`answer_contains: "392"`, false, `the answer does not contain "392"; got "17*23 = 391"`},
		{`answer_equals: "17*23 = 391"`, true, ""},
		{`answer_equals: "391"`, false, `the answer is not "391"; got "17*23 = 391"`},
		{`answer_matches: '\d+\*\d+ = \d+'`, true, ""},
		{`answer_matches: '^391$'`, false, `does not match /^391$/; got "17*23 = 391"`},
		{`answer_json_schema: {type: object}`, false, `the answer is not JSON`},
		{`tool_called: calculator`, true, ""},
		{`tool_called: clock`, false, `clock was not called; calls: remember {"key":"name","value":"Ada"}, calculator`},
		{`tool_called: {name: calculator, args: {expression: "17*23"}}`, true, ""},
		{`tool_called: {name: calculator, args: {precision: {digits: 2}}}`, true, ""},
		{`tool_called: {name: calculator, args: {expression: "2*2"}}`, false, `calculator {"expression":"2*2"} was not called`},
		{`tool_called: {name: calculator, times: 2}`, true, ""},
		{`tool_called: {name: calculator, times: 1}`, false, `want calculator called 1 time, got 2`},
		{`tool_not_called: clock`, true, ""},
		{`tool_not_called: remember`, false, `remember was called 1 time`},
		{`tool_order: [remember, calculator]`, true, ""},
		{`tool_order: [calculator, remember]`, false, `do not include calculator → remember in that order; got remember → calculator → calculator`},
		{`max_steps: 2`, true, ""},
		{`max_steps: 1`, false, `want at most 1 steps, took 2`},
		{`stop_reason: answered`, true, ""},
		{`stop_reason: step_limit`, false, `want stop reason step_limit, got answered`},
		{`stop_reason: guardrail`, false, `want stop reason guardrail, got answered`},
		{`stop_reason: budget`, false, `want stop reason budget, got answered`},
		{`guardrail: no-refunds`, false, `want guardrail no-refunds to trip, got stop reason answered`},
		{`memory: {name: Ada}`, true, ""},
		{`memory: {name: Bob}`, false, `memory "name" is "Ada", want "Bob"`},
		{`memory: {city: Paris}`, false, `memory has no "city" (want "Paris"); memory: name=Ada`},
		{`max_tokens: 1200`, true, ""},
		{`max_tokens: 1000`, false, `want at most 1000 tokens, used 1200`},
		{`cost_below: 0.02`, true, ""},
		{`cost_below: "$0.01"`, false, `want a cost below $0.01, cost $0.012`},
		{`max_duration: 2s`, true, ""},
		{`max_duration: 1s`, false, `want at most 1s, took 1.5s`},
		{`not: {answer_contains: "392"}`, true, ""},
		{`not: {answer_contains: "391"}`, false, `want not answer_contains: "391", and it held`},
		{`not: {not: {tool_called: calculator}}`, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.assert, func(t *testing.T) {
			a := assertionOf(t, tt.assert)
			ok, why, err := a.check(context.Background(), outcomeFor(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.pass {
				t.Fatalf("passed %v, want %v (reason %q)", ok, tt.pass, why)
			}
			if !tt.pass && !strings.Contains(why, tt.why) {
				t.Errorf("reason %q\nwant it to contain %q", why, tt.why)
			}
		})
	}
}

func TestEvalJSONSchemaAssertion(t *testing.T) {
	a := assertionOf(t, `answer_json_schema: {type: object, required: [n], properties: {n: {type: integer, minimum: 300}}}`)
	for _, tt := range []struct {
		answer string
		pass   bool
		why    string
	}{
		{`{"n": 391}`, true, ""},
		{"```json\n{\"n\": 391}\n```", true, ""},
		{`{"n": 12}`, false, "does not fit the schema"},
		{`{"m": 391}`, false, "does not fit the schema"},
		{`391 apples`, false, "is not JSON"},
	} {
		o := outcomeFor()
		o.Answer = tt.answer
		ok, why, err := a.check(context.Background(), o, nil)
		if err != nil || ok != tt.pass || !strings.Contains(why, tt.why) {
			t.Errorf("answer %q: passed %v (%q, %v), want %v (%q)", tt.answer, ok, why, err, tt.pass, tt.why)
		}
	}
	// The schema may be JSON text, or YAML text, too.
	a = assertionOf(t, `answer_json_schema: '{"type": "array"}'`)
	if ok, _, _ := a.check(context.Background(), &outcome{Answer: "[1, 2]"}, nil); !ok {
		t.Error("a JSON text schema did not accept an array")
	}
	a = assertionOf(t, "answer_json_schema: |\n          type: object\n          required: [n]")
	if ok, _, _ := a.check(context.Background(), &outcome{Answer: `{"n": 1}`}, nil); !ok {
		t.Error("a YAML text schema did not accept an object")
	}
	if ok, _, _ := a.check(context.Background(), &outcome{Answer: `{}`}, nil); ok {
		t.Error("a YAML text schema accepted an object without its required field")
	}
}

func TestDistinctive(t *testing.T) {
	for _, tt := range []struct{ answer, task, want string }{
		{"17*23 = 391", "what is 17*23?", "391"},
		{"Your name is Ada.", "what is my name?", "Ada"},
		{"It is 12:30 UTC.", "what time is it?", "30"},
		{"ok", "ok", "ok"},
	} {
		if got := distinctive(tt.answer, tt.task); got != tt.want {
			t.Errorf("distinctive(%q, %q) = %q, want %q", tt.answer, tt.task, got, tt.want)
		}
	}
}

func TestParseVerdict(t *testing.T) {
	for _, tt := range []struct {
		reply  string
		pass   bool
		reason string
		err    bool
	}{
		{"PASS\nit adds up", true, "it adds up", false},
		{"**FAIL**: rude", false, "rude", false},
		{"fail - wrong number", false, "wrong number", false},
		{"PASS", true, "(no reason given)", false},
		{"Maybe", false, "", true},
	} {
		pass, reason, err := parseVerdict(tt.reply)
		if pass != tt.pass || reason != tt.reason || (err != nil) != tt.err {
			t.Errorf("parseVerdict(%q) = %v, %q, %v", tt.reply, pass, reason, err)
		}
	}
}
