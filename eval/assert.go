package eval

// Checking a run against a case's assertions.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// outcome is what a case's run (all its turns) did, as the assertions see
// it.
type outcome struct {
	Session string
	Task    string // the last turn
	Answer  string // the last run's answer
	Stop    engine.StopReason
	Err     string
	// Guardrail names the guardrail that stopped the last run, if one did.
	Guardrail string
	Steps     int // steps of all turns
	Calls     []engine.ToolCall
	Memory    []engine.Fact
	Tokens    int // the session's usage, prompt and completion
	Usage     engine.Usage
	Duration  time.Duration
}

// checkSpent checks an assertion on what the case spent: tokens, cost,
// time.
func (a *assertion) checkSpent(o *outcome) (bool, string) {
	switch a.Kind {
	case "max_tokens":
		return o.Tokens <= a.n, fmt.Sprintf("want at most %d tokens, used %d", a.n, o.Tokens)
	case "cost_below":
		// A cost not known is no pass: the case's spending cannot be told.
		if o.Usage.Priced < o.Usage.Calls {
			return false, fmt.Sprintf("want a cost below $%g, and the cost is %s (give the model's price in the config)", a.usd, o.Usage.CostString())
		}
		return o.Usage.Charged() < a.usd, fmt.Sprintf("want a cost below $%g, cost %s", a.usd, o.Usage.CostString())
	}
	return o.Duration <= a.dur, fmt.Sprintf("want at most %s, took %s", a.dur, o.Duration.Round(time.Millisecond))
}

// checkStop checks an assertion on how the run ended: its stop reason, or
// the guardrail that stopped it.
func (a *assertion) checkStop(o *outcome) (bool, string) {
	if a.Kind == "guardrail" {
		got := "stop reason " + string(o.Stop)
		if o.Guardrail != "" {
			got = "guardrail " + o.Guardrail + " tripped"
		}
		return o.Guardrail == a.str, fmt.Sprintf("want guardrail %s to trip, got %s", a.str, got)
	}
	got := string(o.Stop)
	if o.Err != "" {
		got += " (" + engine.OneLine(o.Err, 120) + ")"
	}
	return string(o.Stop) == a.str, fmt.Sprintf("want stop reason %s, got %s", a.str, got)
}

// JudgeFunc grades an answer against a rubric: pass or fail with the
// judge's reason.
type JudgeFunc func(ctx context.Context, o *outcome, rubric string) (bool, string, error)

// clip shortens a text for a reason.
func clip(s string) string { return strconv.Quote(engine.OneLine(s, 80)) }

// check reports whether o meets a, and why not ("" when it does; when
// negated, why it does). err is a failure to check (the judge failed).
func (a *assertion) check(ctx context.Context, o *outcome, judge JudgeFunc) (ok bool, why string, err error) {
	switch a.Kind {
	case "answer_contains":
		return strings.Contains(o.Answer, a.str), fmt.Sprintf("the answer does not contain %s; got %s", clip(a.str), clip(o.Answer)), nil
	case "answer_equals":
		return strings.TrimSpace(o.Answer) == strings.TrimSpace(a.str), fmt.Sprintf("the answer is not %s; got %s", clip(a.str), clip(o.Answer)), nil
	case "answer_matches":
		return a.re.MatchString(o.Answer), fmt.Sprintf("the answer does not match /%s/; got %s", a.re, clip(o.Answer)), nil
	case "answer_json_schema":
		var v any
		if err := json.Unmarshal([]byte(unfence(o.Answer)), &v); err != nil {
			return false, fmt.Sprintf("the answer is not JSON (%v); got %s", err, clip(o.Answer)), nil
		}
		if err := a.schema.Validate(v); err != nil {
			return false, fmt.Sprintf("the answer does not fit the schema: %s; got %s", oneLineErr(err), clip(o.Answer)), nil
		}
		return true, "", nil
	case "tool_called", "tool_not_called":
		n := a.tool.count(o.Calls)
		called := n > 0
		if a.tool.Times >= 0 {
			called = n == a.tool.Times
		}
		want := a.tool.String()
		if a.Kind == "tool_not_called" {
			return n == 0, fmt.Sprintf("%s was called %d %s; calls: %s", want, n, engine.Plural(n, "time"), callList(o.Calls)), nil
		}
		if a.tool.Times >= 0 {
			return called, fmt.Sprintf("want %s called %d %s, got %d; calls: %s", want, a.tool.Times, engine.Plural(a.tool.Times, "time"), n, callList(o.Calls)), nil
		}
		return called, fmt.Sprintf("%s was not called; calls: %s", want, callList(o.Calls)), nil
	case "tool_order":
		names := make([]string, len(o.Calls))
		for i, c := range o.Calls {
			names[i] = c.Name
		}
		return isSubsequence(a.names, names), fmt.Sprintf("the calls do not include %s in that order; got %s", strings.Join(a.names, " → "), orNone(strings.Join(names, " → "))), nil
	case "max_steps":
		return o.Steps <= a.n, fmt.Sprintf("want at most %d steps, took %d", a.n, o.Steps), nil
	case "stop_reason", "guardrail":
		ok, why := a.checkStop(o)
		return ok, why, nil
	case "memory":
		for _, f := range a.facts {
			v, found := recall(o.Memory, f.Key)
			if !found {
				return false, fmt.Sprintf("memory has no %q (want %s); memory: %s", f.Key, clip(f.Value), factList(o.Memory)), nil
			}
			if v != f.Value {
				return false, fmt.Sprintf("memory %q is %s, want %s", f.Key, clip(v), clip(f.Value)), nil
			}
		}
		return true, "", nil
	case "max_tokens", "cost_below", "max_duration":
		ok, why := a.checkSpent(o)
		return ok, why, nil
	case "judge":
		if judge == nil {
			return false, "", errors.New("judge needs --judge-model")
		}
		pass, reason, err := judge(ctx, o, a.str)
		if err != nil {
			return false, "", err
		}
		return pass, "the judge says FAIL: " + engine.OneLine(reason, 200), nil
	case "not":
		ok, _, err := a.not.check(ctx, o, judge)
		if err != nil {
			return false, "", err
		}
		return !ok, fmt.Sprintf("want not %s, and it held", a.not.Text), nil
	}
	return false, "", fmt.Errorf("unknown assertion %s", a.Kind)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (m toolMatch) String() string {
	if len(m.Args) == 0 {
		return m.Name
	}
	b, _ := json.Marshal(m.Args)
	return m.Name + " " + string(b)
}

// count counts the calls that match.
func (m toolMatch) count(calls []engine.ToolCall) int {
	n := 0
	for _, c := range calls {
		if c.Name != m.Name {
			continue
		}
		if len(m.Args) > 0 {
			var got any
			if json.Unmarshal(c.Args, &got) != nil || !subset(m.Args, got) {
				continue
			}
		}
		n++
	}
	return n
}

// subset reports whether got has everything want has: every key of a
// mapping (recursively), lists and other values equal.
func subset(want, got any) bool {
	if w, ok := want.(map[string]any); ok {
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !subset(wv, gv) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(want, got)
}

func isSubsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

func callList(calls []engine.ToolCall) string {
	if len(calls) == 0 {
		return "none"
	}
	var parts []string
	for _, c := range calls {
		parts = append(parts, c.Name+" "+engine.OneLine(string(c.Args), 60))
	}
	return engine.OneLine(strings.Join(parts, ", "), 200)
}

func recall(facts []engine.Fact, key string) (string, bool) {
	for _, f := range facts {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

func factList(facts []engine.Fact) string {
	if len(facts) == 0 {
		return "empty"
	}
	var parts []string
	for _, f := range facts {
		parts = append(parts, f.Key+"="+f.Value)
	}
	return engine.OneLine(strings.Join(parts, ", "), 160)
}

// unfence takes the JSON out of a Markdown code fence, if the answer is
// one.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:] // the fence's language
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
}
