package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/eval"
	"github.com/agentty/agentty/sessions"
)

// writeSuite writes a suite file and returns its path.
func writeSuite(t *testing.T, yamlText string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "suite.yaml")
	if err := os.WriteFile(p, []byte(yamlText), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEvalExampleSuitePasses(t *testing.T) {
	env := agentEnv(t)
	code, out, errs := runCLI(t, context.Background(), env, "eval", filepath.Join("..", "examples", "evals.yaml"))
	if code != 0 {
		t.Fatalf("examples/evals.yaml: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "5 passed, 0 failed") {
		t.Errorf("summary missing:\n%s", out)
	}
	// Every run is a journaled session whose title names the suite and case.
	store, _ := sessions.Open(env["AGENTTY_HOME"])
	list, _ := store.List()
	if len(list) != 9 { // four cases and five repeats
		t.Errorf("%d sessions, want 9", len(list))
	}
	for _, l := range list {
		if !strings.HasPrefix(l.Title, "eval: evals / ") {
			t.Errorf("session %s is titled %q", l.ID, l.Title)
		}
	}
}

// TestEvalFailureReported: a failing case exits 1, and the summary gives
// each reason and the session to open.
func TestEvalFailureReported(t *testing.T) {
	env := agentEnv(t)
	suite := writeSuite(t, `
cases:
  - name: wrong sum
    task: "what is 17*23?"
    assert:
      - answer_contains: "392"
      - tool_called: clock
  - name: right sum
    task: "what is 17*23?"
    assert:
      - answer_contains: "391"
`)
	code, out, errs := runCLI(t, context.Background(), env, "eval", suite)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"FAIL   wrong sum", "PASS   right sum", "FAILED: wrong sum",
		`answer_contains: "392" (line 6): the answer does not contain "392"; got "17*23 = 391"`,
		"tool_called: clock (line 7): clock was not called; calls: calculator",
		"open it: agentty --resume ", "1 passed, 1 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	id := regexp.MustCompile(`agentty --resume (\S+)`).FindStringSubmatch(out)[1]
	store, _ := sessions.Open(env["AGENTTY_HOME"])
	if m, err := store.Meta(id); err != nil || m.Title != "eval: suite / wrong sum" {
		t.Errorf("the failure's session %s: %+v, %v", id, m, err)
	}
}

// TestEvalStopReason: a run that does not answer fails unless the case
// asserts its stop reason.
func TestEvalStopReason(t *testing.T) {
	never := writeScript(t, `{"turns":[`+strings.Repeat(`{"tool_calls":[{"name":"clock"}]},`, 5)+`{"answer":"late"}]}`)
	suite := writeSuite(t, `
model: script:`+never+`
max_steps: 2
cases:
  - name: silent
    task: go
  - name: limited
    task: go
    assert:
      - stop_reason: step_limit
      - tool_called: {name: clock, times: 2}
`)
	code, out, _ := runCLI(t, context.Background(), agentEnv(t), "eval", suite)
	if code != 1 || !strings.Contains(out, "FAIL   silent") || !strings.Contains(out, "the run did not answer (step_limit)") || !strings.Contains(out, "PASS   limited") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// alternating is a model server that answers "yes" to its odd requests
// and "no" to its even ones.
func alternating(t *testing.T) *enginetest.Server {
	return enginetest.NewServerFunc(t, func(n int, _ enginetest.Request) enginetest.Reply {
		if n%2 == 1 {
			return enginetest.Reply{Body: enginetest.Answer("yes")}
		}
		return enginetest.Reply{Body: enginetest.Answer("no")}
	})
}

// TestEvalRepeatMinPass: with repeats, a case passes when at least
// min_pass of its runs do; one with passes and failures is flaky either
// way.
func TestEvalRepeatMinPass(t *testing.T) {
	suite := writeSuite(t, `
cases:
  - name: coin
    task: "heads?"
    repeat: 4
    min_pass: 0.5
    assert:
      - answer_equals: "yes"
`)
	env := agentEnv(t)
	srv := alternating(t)
	jsonOut := filepath.Join(t.TempDir(), "out.json")
	code, out, errs := runCLI(t, context.Background(), env, "eval", suite, "--model", "gpt-4o", "--base-url", srv.URL(), "--concurrency", "1", "--json", jsonOut)
	if code != 0 || !strings.Contains(out, "PASS   coin  2/4 passed (min 0.5)  flaky") || !strings.Contains(out, "FLAKY (passed): coin") || !strings.Contains(out, "1 flaky") {
		t.Fatalf("min_pass 0.5: exit %d\n%s%s", code, out, errs)
	}
	var rep eval.Report
	b, _ := os.ReadFile(jsonOut)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Passed != 1 || rep.Flaky != 1 || len(rep.Cases) != 1 || len(rep.Cases[0].Runs) != 4 || rep.Cases[0].Passed != 2 {
		t.Errorf("--json: %s", b)
	}
	for _, r := range rep.Cases[0].Runs { // each run's cost, priced
		if r.Cost == nil || *r.Cost <= 0 || r.CostUnknown {
			t.Errorf("--json: a run's cost %v (unknown %v): %s", r.Cost, r.CostUnknown, b)
			break
		}
	}

	// --repeat overrides the case's; the default min_pass is 1.0.
	suite = writeSuite(t, "cases:\n  - name: coin\n    task: heads?\n    assert: [answer_equals: \"yes\"]\n")
	code, out, _ = runCLI(t, context.Background(), env, "eval", suite, "--model", "gpt-4o", "--base-url", alternating(t).URL(), "--concurrency", "1", "--repeat", "3")
	if code != 1 || !strings.Contains(out, "FAIL   coin  2/3 passed (min 1)  flaky") || !strings.Contains(out, "FAILED: coin (2 of 3 runs passed, min_pass 1)") ||
		!strings.Contains(out, "run 2:") || !strings.Contains(out, `the answer is not "yes"; got "no"`) {
		t.Errorf("--repeat 3: exit %d\n%s", code, out)
	}
}

// TestEvalConcurrency: the cases' runs overlap in time, as their journals
// tell, up to --concurrency at once, and one at a time with 1.
func TestEvalConcurrency(t *testing.T) {
	slow := writeScript(t, `{"turns":[{"answer":"done","delay_ms":400}]}`)
	var cases strings.Builder
	for i := range 4 {
		fmt.Fprintf(&cases, "  - name: c%d\n    task: go\n    assert: [answer_contains: done]\n", i)
	}
	suite := writeSuite(t, "model: script:"+slow+"\ncases:\n"+cases.String())
	for _, tt := range []struct {
		concurrency string
		check       func(most int) bool
		want        string
	}{
		{"4", func(most int) bool { return most >= 2 }, "at least 2 at once"},
		{"1", func(most int) bool { return most == 1 }, "one at a time"},
	} {
		env := agentEnv(t)
		code, out, errs := runCLI(t, context.Background(), env, "eval", suite, "--concurrency", tt.concurrency)
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out, errs)
		}
		store, _ := sessions.Open(env["AGENTTY_HOME"])
		list, _ := store.List()
		type span struct{ from, to time.Time }
		var spans []span
		for _, l := range list {
			ld, err := store.Load(l.ID)
			if err != nil {
				t.Fatal(err)
			}
			var sp span
			for _, ev := range ld.Events {
				switch ev.Kind {
				case engine.KindRunStarted:
					sp.from = ev.Time
				case engine.KindRunFinished:
					sp.to = ev.Time
				}
			}
			spans = append(spans, sp)
		}
		if len(spans) != 4 {
			t.Fatalf("%d sessions, want 4", len(spans))
		}
		most := 0 // the most runs going on at one run's start
		for _, a := range spans {
			n := 0
			for _, b := range spans {
				if !b.from.After(a.from) && b.to.After(a.from) {
					n++
				}
			}
			most = max(most, n)
		}
		if !tt.check(most) {
			t.Errorf("--concurrency %s: at most %d runs at once, want %s", tt.concurrency, most, tt.want)
		}
	}
}

// TestEvalJUnit: the JUnit XML parses, has the structure JUnit consumers
// read (testsuites > testsuite > testcase, with failure, error and skipped
// elements and their counts) and the right counts.
func TestEvalJUnit(t *testing.T) {
	suite := writeSuite(t, `
cases:
  - name: passes
    task: "what is 2+2?"
    assert: [answer_contains: "4"]
  - name: fails
    task: "what is 2+2?"
    assert: [answer_contains: "5"]
  - name: "escapes <&> \"quotes\""
    task: "what is 3+3?"
    assert: [answer_contains: "6"]
`)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, out, errs := runCLI(t, context.Background(), agentEnv(t), "eval", suite, "--junit", junit)
	if code != 1 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    string   `xml:"tests,attr"`
		Failures string   `xml:"failures,attr"`
		Suites   []struct {
			Name      string `xml:"name,attr"`
			Tests     string `xml:"tests,attr"`
			Failures  string `xml:"failures,attr"`
			Errors    string `xml:"errors,attr"`
			Skipped   string `xml:"skipped,attr"`
			Time      string `xml:"time,attr"`
			Timestamp string `xml:"timestamp,attr"`
			Cases     []struct {
				Name      string     `xml:"name,attr"`
				Classname string     `xml:"classname,attr"`
				Time      string     `xml:"time,attr"`
				Failure   []result   `xml:"failure"`
				Error     []result   `xml:"error"`
				Skipped   []result   `xml:"skipped"`
				SystemOut string     `xml:"system-out"`
				Any       []xml.Name `xml:",any"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	dec := xml.NewDecoder(strings.NewReader(string(b)))
	dec.Strict = true
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("the JUnit XML does not parse: %v\n%s", err, b)
	}
	if !strings.HasPrefix(string(b), "<?xml") || doc.Tests != "3" || doc.Failures != "1" || len(doc.Suites) != 1 {
		t.Fatalf("testsuites: %s", b)
	}
	s := doc.Suites[0]
	if s.Name != "suite" || s.Tests != "3" || s.Failures != "1" || s.Errors != "0" || s.Skipped != "0" || len(s.Cases) != 3 {
		t.Errorf("testsuite %+v", s)
	}
	if _, err := strconv.ParseFloat(s.Time, 64); err != nil {
		t.Errorf("testsuite time %q", s.Time)
	}
	if _, err := time.Parse("2006-01-02T15:04:05", s.Timestamp); err != nil {
		t.Errorf("testsuite timestamp %q", s.Timestamp)
	}
	failures := 0
	for _, c := range s.Cases {
		if c.Classname != "suite" || c.Name == "" || len(c.Any) != 0 {
			t.Errorf("testcase %+v", c)
		}
		if _, err := strconv.ParseFloat(c.Time, 64); err != nil {
			t.Errorf("testcase %s time %q", c.Name, c.Time)
		}
		failures += len(c.Failure)
		if c.Name == "fails" && (len(c.Failure) != 1 || c.Failure[0].Type != "assertion" ||
			!strings.Contains(c.Failure[0].Message, `the answer does not contain "5"`) || !strings.Contains(c.SystemOut, "agentty --resume")) {
			t.Errorf("the failing testcase: %+v", c)
		}
	}
	if failures != 1 || s.Cases[2].Name != `escapes <&> "quotes"` {
		t.Errorf("%d failures, names %q", failures, s.Cases[2].Name)
	}
}

// TestEvalFailFast: after a failure no more runs start; the rest are
// skipped, in the summary and the JUnit XML.
func TestEvalFailFast(t *testing.T) {
	suite := writeSuite(t, `
cases:
  - name: first fails
    task: "what is 2+2?"
    assert: [answer_contains: "5"]
  - name: second
    task: "what is 2+2?"
  - name: third
    task: "what is 2+2?"
`)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, out, _ := runCLI(t, context.Background(), agentEnv(t), "eval", suite, "--fail-fast", "--concurrency", "1", "--junit", junit)
	if code != 1 || !strings.Contains(out, "0 passed, 1 failed, 2 skipped") {
		t.Errorf("exit %d\n%s", code, out)
	}
	b, _ := os.ReadFile(junit)
	if !strings.Contains(string(b), `skipped="2"`) || strings.Count(string(b), "<skipped ") != 2 {
		t.Errorf("JUnit:\n%s", b)
	}
}

// TestEvalUsage: exit 2 for bad usage, before anything runs.
func TestEvalUsage(t *testing.T) {
	suite := writeSuite(t, "cases:\n  - name: a\n    task: hi\n")
	judged := writeSuite(t, "cases:\n  - name: a\n    task: hi\n    assert:\n      - not: {judge: is polite}\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"eval"}, "want one suite file"},
		{[]string{"eval", suite, suite}, "want one suite file"},
		{[]string{"eval", "--frobnicate", suite}, "unknown flag: --frobnicate"},
		{[]string{"eval", suite, "--filter", "("}, "--filter: bad regexp"},
		{[]string{"eval", suite, "--filter", "zzz"}, "no case of"},
		{[]string{"eval", suite, "--concurrency", "0"}, "--concurrency must be at least 1"},
		{[]string{"eval", suite, "--record", "a", "--replay", "b"}, "--record and --replay go apart"},
		{[]string{"eval", suite, "--replay", filepath.Join(t.TempDir(), "none")}, "is not a folder of recordings"},
		{[]string{"eval", filepath.Join(t.TempDir(), "missing.yaml")}, "no such file"},
		{[]string{"eval", judged}, judged + ":5: cases[0].assert[0].not.judge: judge needs --judge-model"},
		{[]string{"eval", suite, "--model", "gpt-4o"}, "needs OPENAI_API_KEY"},
	}
	for _, tt := range tests {
		env := agentEnv(t)
		code, out, errs := runCLI(t, context.Background(), env, tt.args...)
		if code != 2 || !strings.Contains(errs, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2, %q", tt.args, code, errs, tt.want)
		}
		if list, _ := os.ReadDir(filepath.Join(env["AGENTTY_HOME"], "sessions")); len(list) != 0 {
			t.Errorf("%q: %d sessions made; want none before a usage error", tt.args, len(list))
		}
		_ = out
	}
}

// TestEvalBadFiles: each kind of mistake in a suite file is an error that
// names the file, the line and the field, and nothing runs.
func TestEvalBadFiles(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"syntax", "description: x\n model: y\n", ":2: mapping values are not allowed in this context"},
		{"not a mapping", "- a\n- b\n", ":1: want a suite"},
		{"unknown top key", "descripton: x\ncases:\n  - {name: a, task: b}\n", ":1: descripton: unknown field (known: description, model, agent, max_steps, max_tokens, max_cost, answers, workspace, cases)"},
		{"no cases", "model: offline\n", ":1: cases: missing"},
		{"cases not a list", "cases: {name: a}\n", ":1: cases: want a list of cases"},
		{"bad max_steps", "max_steps: lots\ncases:\n  - {name: a, task: b}\n", `:1: max_steps: want a whole number of at least 1, got "lots"`},
		{"unknown case key", "cases:\n  - name: a\n    task: b\n    asert: []\n", ":4: cases[0].asert: unknown field"},
		{"no name", "cases:\n  - task: b\n", ":2: cases[0].name: missing"},
		{"duplicate name", "cases:\n  - {name: a, task: b}\n  - {name: a, task: c}\n", `:3: cases[1].name: "a" is the name of another case (line 2)`},
		{"no task", "cases:\n  - name: a\n", ":2: cases[0].task: missing"},
		{"task and turns", "cases:\n  - name: a\n    task: b\n    turns: [c]\n", ":4: cases[0].turns: a case has a task or turns, not both"},
		{"bad turns", "cases:\n  - name: a\n    turns: x\n", ":3: cases[0].turns: want a list of tasks"},
		{"bad repeat", "cases:\n  - {name: a, task: b, repeat: 0}\n", ":2: cases[0].repeat: want a whole number of at least 1"},
		{"bad min_pass", "cases:\n  - name: a\n    task: b\n    min_pass: 80\n", ":4: cases[0].min_pass: want a fraction"},
		{"bad memory", "cases:\n  - name: a\n    task: b\n    memory: [x]\n", ":4: cases[0].memory: want facts"},
		{"unknown assertion", "cases:\n  - name: a\n    task: b\n    assert:\n      - answer_has: x\n", ":5: cases[0].assert[0].answer_has: unknown assertion (known: answer_contains"},
		{"two keys", "cases:\n  - name: a\n    task: b\n    assert:\n      - {answer_contains: x, max_steps: 2}\n", ":5: cases[0].assert[0]: an assertion is one key and its value (answer_contains: \"391\"), got 2 keys (answer_contains, max_steps)"},
		{"bad regexp", "cases:\n  - name: a\n    task: b\n    assert:\n      - answer_matches: \"(\"\n", ":5: cases[0].assert[0].answer_matches: bad regexp: missing closing )"},
		{"bad schema", "cases:\n  - name: a\n    task: b\n    assert:\n      - answer_json_schema: {type: 12}\n", ":5: cases[0].assert[0].answer_json_schema: bad JSON schema"},
		{"bad schema JSON", "cases:\n  - name: a\n    task: b\n    assert:\n      - answer_json_schema: \"{nope\"\n", ":5: cases[0].assert[0].answer_json_schema: want a JSON Schema"},
		{"bad tool_called", "cases:\n  - name: a\n    task: b\n    assert:\n      - tool_called: {args: {x: 1}}\n", ":5: cases[0].assert[0].tool_called.name: missing"},
		{"bad times", "cases:\n  - name: a\n    task: b\n    assert:\n      - tool_called: {name: x, times: many}\n", ":5: cases[0].assert[0].tool_called.times: want a whole number"},
		{"times on not called", "cases:\n  - name: a\n    task: b\n    assert:\n      - tool_not_called: {name: x, times: 1}\n", ":5: cases[0].assert[0].tool_not_called.times: unknown field"},
		{"bad tool_order", "cases:\n  - name: a\n    task: b\n    assert:\n      - tool_order: calculator\n", ":5: cases[0].assert[0].tool_order: want a list of tool names"},
		{"bad stop_reason", "cases:\n  - name: a\n    task: b\n    assert:\n      - stop_reason: done\n", `:5: cases[0].assert[0].stop_reason: want one of answered, step_limit, cancelled, error, guardrail, budget, got "done"`},
		{"bad duration", "cases:\n  - name: a\n    task: b\n    assert:\n      - max_duration: soon\n", `:5: cases[0].assert[0].max_duration: want a duration such as 30s or 2m, got "soon"`},
		{"bad negation", "cases:\n  - name: a\n    task: b\n    assert:\n      - not: {answer_matches: \"[\"}\n", ":5: cases[0].assert[0].not.answer_matches: bad regexp"},
		{"empty judge", "cases:\n  - name: a\n    task: b\n    assert:\n      - judge: \"\"\n", ":5: cases[0].assert[0].judge: the rubric is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suite := writeSuite(t, tt.yaml)
			env := agentEnv(t)
			code, _, errs := runCLI(t, context.Background(), env, "eval", suite)
			if code != 2 || !strings.Contains(errs, "agentty eval: "+suite+tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant 2 and %q", code, errs, suite+tt.want)
			}
			if list, _ := os.ReadDir(filepath.Join(env["AGENTTY_HOME"], "sessions")); len(list) != 0 {
				t.Errorf("%d sessions made; want none for a bad file", len(list))
			}
		})
	}
	// Every error of a file is told at once.
	suite := writeSuite(t, "cases:\n  - name: a\n    tsk: b\n    assert:\n      - answer_matches: \"(\"\n")
	_, _, errs := runCLI(t, context.Background(), agentEnv(t), "eval", suite)
	if strings.Count(errs, "agentty eval: "+suite) != 3 {
		t.Errorf("want three errors (tsk, answer_matches, no task):\n%s", errs)
	}
}

// TestEvalJudge: a judge model grades the rubric; its reason is the
// failure's.
func TestEvalJudge(t *testing.T) {
	suite := writeSuite(t, "cases:\n  - name: polite\n    task: \"what is 2+2?\"\n    assert:\n      - judge: the answer is polite\n")
	pass := writeScript(t, `{"turns":[{"answer":"**PASS** - it is polite enough"}]}`)
	failing := writeScript(t, `{"turns":[{"answer":"FAIL: it never says please"}]}`)
	mumble := writeScript(t, `{"turns":[{"answer":"I think so"}]}`)
	code, out, _ := runCLI(t, context.Background(), agentEnv(t), "eval", suite, "--judge-model", "script:"+pass)
	if code != 0 {
		t.Errorf("PASS judge: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, context.Background(), agentEnv(t), "eval", suite, "--judge-model", "script:"+failing)
	if code != 1 || !strings.Contains(out, "judge: the answer is polite (line 5): the judge says FAIL: it never says please") {
		t.Errorf("FAIL judge: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, context.Background(), agentEnv(t), "eval", suite, "--judge-model", "script:"+mumble)
	if code != 1 || !strings.Contains(out, "could not check: judge: the reply does not start with PASS or FAIL") {
		t.Errorf("mumbling judge: exit %d\n%s", code, out)
	}
}

// TestEvalRecordReplay: a suite recorded with --record replays with
// --replay without a model call (its model is a server that counts
// requests) and passes; a case whose task changed, or that has no
// recording, needs a new recording and is no pass.
func TestEvalRecordReplay(t *testing.T) {
	env := agentEnv(t)
	rec := filepath.Join(t.TempDir(), "rec")
	suite := filepath.Join("..", "examples", "evals.yaml")
	code, out, errs := runCLI(t, context.Background(), env, "eval", suite, "--record", rec)
	if code != 0 {
		t.Fatalf("record: exit %d\n%s%s", code, out, errs)
	}
	files, _ := filepath.Glob(filepath.Join(rec, "*.jsonl"))
	if len(files) != 9 {
		t.Errorf("%d recordings, want 9: %v", len(files), files)
	}
	srv := enginetest.NewServer(t) // any request is a model call
	code, out, errs = runCLI(t, context.Background(), env, "eval", suite, "--replay", rec, "--model", "gpt-4o", "--base-url", srv.URL())
	if code != 0 || !strings.Contains(out, "5 passed, 0 failed") {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errs)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the replay sent %d requests to a model server", n)
	}

	changed := writeSuite(t, `
cases:
  - name: multiplies
    task: "what is 17*24?"
    assert: [answer_contains: "391"]
  - name: never recorded
    task: "what is 1+1?"
`)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, out, _ = runCLI(t, context.Background(), env, "eval", changed, "--replay", rec, "--junit", junit)
	for _, want := range []string{"STALE  multiplies  needs a new recording", "NEEDS A NEW RECORDING: multiplies",
		"the request changed since it was recorded", "NEEDS A NEW RECORDING: never recorded", "no recording at ", "0 passed, 0 failed, 2 need a new recording"} {
		if !strings.Contains(out, want) {
			t.Errorf("changed suite: output lacks %q", want)
		}
	}
	b, _ := os.ReadFile(junit)
	if code != 1 || !strings.Contains(string(b), `errors="2"`) || strings.Count(string(b), `type="needs_recording"`) != 2 {
		t.Errorf("changed suite: exit %d\n%s\n%s", code, out, b)
	}
}

// TestEvalFromSession: a session becomes a case that, pasted into a
// suite, passes.
func TestEvalFromSession(t *testing.T) {
	env := agentEnv(t)
	if code, out, errs := runCLI(t, context.Background(), env, "eval", filepath.Join("..", "examples", "evals.yaml"), "--filter", "remembers|starts"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	store, _ := sessions.Open(env["AGENTTY_HOME"])
	list, _ := store.List()
	var texts []string
	for _, l := range list {
		code, out, errs := runCLI(t, context.Background(), env, "eval", "--from-session", l.ID)
		if code != 0 {
			t.Fatalf("--from-session %s: exit %d: %s", l.ID, code, errs)
		}
		texts = append(texts, out)
	}
	joined := strings.Join(texts, "")
	for _, want := range []string{"turns:", "- remember that my name is Ada", `answer_contains: "Ada"`, "tool_called: recall", "max_steps: 4",
		"memory: {city: Paris}", `answer_contains: "Paris"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("the cases lack %q:\n%s", want, joined)
		}
	}
	var suite strings.Builder // the cases pasted under cases: as they are printed
	suite.WriteString("cases:\n")
	for _, text := range texts {
		suite.WriteString(text)
	}
	code, out, errs := runCLI(t, context.Background(), agentEnv(t), "eval", writeSuite(t, suite.String()))
	if code != 0 || !strings.Contains(out, "2 passed, 0 failed") {
		t.Errorf("the pasted cases: exit %d\n%s%s\n%s", code, out, errs, suite.String())
	}

	code, _, errs = runCLI(t, context.Background(), env, "eval", "--from-session", "nosuchsession")
	if code != 1 || !strings.Contains(errs, "no such session") {
		t.Errorf("unknown session: exit %d, %s", code, errs)
	}
}
