package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/workflow"
)

func parse(t *testing.T, src string) *workflow.Workflow {
	t.Helper()
	w, err := workflow.Parse("wf.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// agentModel answers a sub-run's task with f(task), after delay.
func agentModel(delay time.Duration, f func(task string) string) engine.Model {
	return enginetest.ModelFunc(func(ctx context.Context, req *engine.Request) (engine.Decision, error) {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return engine.Decision{}, ctx.Err()
		}
		return engine.Decision{Text: f(req.Messages[req.LastUser()].Content)}, nil
	})
}

type runResult struct {
	res    engine.Result
	events []engine.Event
	s      *engine.Session
}

// run carries out w with the given agents and tools, through the Sink.
func run(t *testing.T, w *workflow.Workflow, inputs map[string]string, agents []engine.Agent, tools ...engine.Tool) runResult {
	t.Helper()
	in, err := w.CheckInputs(inputs)
	if err != nil {
		t.Fatal(err)
	}
	rec := &enginetest.Recorder{}
	e := engine.New(engine.Config{Model: workflow.Planner{W: w, Inputs: in}, Agents: agents, Tools: enginetest.Registry(t, append(tools, enginetest.EchoTool())...)})
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	s := engine.NewSession("s")
	res := e.Run(context.Background(), s, "workflow "+w.Name, &workflow.Sink{W: w, Inputs: in, Next: rec})
	return runResult{res, rec.Events(), s}
}

func stepEvents(evs []engine.Event) map[string]*engine.WorkflowStepFinished {
	out := map[string]*engine.WorkflowStepFinished{}
	for _, ev := range evs {
		if d, ok := ev.Data.(*engine.WorkflowStepFinished); ok {
			out[d.Step] = d
		}
	}
	return out
}

func TestLinearWorkflow(t *testing.T) {
	w := parse(t, `
name: notes
inputs:
  version: {description: the version, required: true}
steps:
  - id: changes
    agent: researcher
    task: "List the changes in {{ .inputs.version }}"
  - id: draft
    agent: writer
    task: "Write notes from: {{ .steps.changes.output }}"
output: "NOTES: {{ .steps.draft.output }}"
`)
	agents := []engine.Agent{
		{Name: "researcher", Description: "r", Model: agentModel(0, func(task string) string { return "changes of " + strings.TrimPrefix(task, "List the changes in ") })},
		{Name: "writer", Description: "w", Model: agentModel(0, func(task string) string { return "[" + task + "]" })},
	}
	r := run(t, w, map[string]string{"version": "1.2"}, agents)
	if r.res.StopReason != engine.StopAnswered || r.res.Answer != "NOTES: [Write notes from: changes of 1.2]" {
		t.Fatalf("%+v", r.res)
	}
	kinds := []string{}
	for _, ev := range r.events {
		if ev.Workflow != "notes" {
			t.Errorf("an event without the workflow: %+v", ev)
		}
		if ev.ParentRun != "" && ev.WorkflowStep == "" {
			t.Errorf("a step's event without its step: %+v", ev)
		}
		switch ev.Kind {
		case engine.KindWorkflowStarted, engine.KindWorkflowStepFinished, engine.KindWorkflowFinished:
			kinds = append(kinds, string(ev.Kind)+":"+ev.WorkflowStep)
		}
	}
	if got := strings.Join(kinds, " "); got != "workflow_started: workflow_step_finished:changes workflow_step_finished:draft workflow_finished:" {
		t.Errorf("framing events: %s", got)
	}
	if _, err := w.CheckInputs(nil); err == nil || !strings.Contains(err.Error(), "needs the input version") {
		t.Errorf("missing input: %v", err)
	}
}

func TestParallelBranchesIfForeachAndTools(t *testing.T) {
	w := parse(t, `
name: fan
steps:
  - id: a
    agent: slow
    task: "alpha"
  - id: b
    needs: []
    agent: slow
    task: "beta"
  - id: files
    needs: [a, b]
    tool: raw
    args: {text: '["x.go","y.go"]'}
  - id: per_file
    foreach: '{{ .steps.files.json }}'
    tool: echo
    args: {text: "read {{ .item }}"}
  - id: check
    if: '{{ contains .steps.a.output "TODO" }}'
    agent: slow
    task: "fix"
  - id: publish
    if: '{{ contains .steps.b.output "beta" }}'
    tool: echo
    args: {text: "published {{ .steps.per_file.output }}"}
`)
	raw := engine.Tool{Name: "raw", Func: func(_ context.Context, c *engine.Call) (string, error) {
		var a struct{ Text string }
		err := c.Bind(&a)
		return a.Text, err
	}}
	agents := []engine.Agent{{Name: "slow", Description: "s", Model: agentModel(300*time.Millisecond, func(task string) string { return "did " + task })}}
	r := run(t, w, nil, agents, raw)
	if r.res.StopReason != engine.StopAnswered {
		t.Fatalf("%+v", r.res)
	}
	// a and b overlap.
	spans := map[string][2]time.Time{}
	for _, ev := range r.events {
		if ev.ParentRun == "" || (ev.Kind != engine.KindRunStarted && ev.Kind != engine.KindRunFinished) {
			continue
		}
		sp := spans[ev.WorkflowStep]
		if ev.Kind == engine.KindRunStarted {
			sp[0] = ev.Time
		} else {
			sp[1] = ev.Time
		}
		spans[ev.WorkflowStep] = sp
	}
	if a, b := spans["a"], spans["b"]; !a[0].Before(b[1]) || !b[0].Before(a[1]) {
		t.Errorf("steps a and b did not run in parallel: %v %v", a, b)
	}
	steps := stepEvents(r.events)
	if steps["check"].Status != "skipped" || steps["publish"].Status != "ok" || steps["per_file"].Items != 2 {
		t.Errorf("steps: check %+v, publish %+v, per_file %+v", steps["check"], steps["publish"], steps["per_file"])
	}
	if !strings.Contains(r.res.Answer, `published ["echo: read x.go","echo: read y.go"]`) {
		t.Errorf("answer %q", r.res.Answer)
	}
}

func TestRetryOfAFailingStep(t *testing.T) {
	var calls atomic.Int32
	flaky := engine.Tool{Name: "flaky", Func: func(context.Context, *engine.Call) (string, error) {
		if calls.Add(1) < 3 {
			return "", errors.New("not yet")
		}
		return "third time", nil
	}}
	w := parse(t, "name: r\nsteps:\n  - id: f\n    tool: flaky\n    retry: 2\n")
	r := run(t, w, nil, nil, flaky)
	if r.res.Answer != "third time" || stepEvents(r.events)["f"].Attempts != 3 {
		t.Errorf("%+v, %+v", r.res, stepEvents(r.events)["f"])
	}
	calls.Store(-10)
	w = parse(t, "name: r\nsteps:\n  - id: f\n    tool: flaky\n    retry: 1\n  - id: after\n    tool: echo\n    args: {text: x}\n")
	r = run(t, w, nil, nil, flaky)
	if r.res.StopReason != engine.StopError || !strings.Contains(r.res.Err.Error(), "step f failed after 2 attempts") {
		t.Errorf("%+v", r.res)
	}
	if s := stepEvents(r.events); s["f"].Status != "error" || s["after"].Status != "not run" {
		t.Errorf("steps %+v %+v", s["f"], s["after"])
	}
}

func TestBadWorkflowFiles(t *testing.T) {
	for src, want := range map[string]string{
		"name: x\nsteps:\n  - id: a\n    tool: echo\n    agent: b\n":                          `wf.yaml:3: steps[0].agent: a step is one of agent, tool or task`,
		"name: x\nsteps:\n  - id: a\n    weird: 1\n":                                          `wf.yaml:4: steps[0].weird: not a field of a step`,
		"name: x\nsteps:\n  - id: a\n    frobnicate: y\n    tool: t\n":                        `not a field of a step`,
		"name: x\nsteps:\n  - id: a\n    task: hi\n    needs: [nope]\n":                       `wf.yaml:3: steps.a.needs: no step is called "nope"`,
		"name: x\nsteps:\n  - id: a\n    task: hi\n    needs: [b]\n  - id: b\n    task: hi\n": `a cycle: a → b → a`,
		"name: x\nsteps:\n  - id: a\n    task: \"{{ .inputs.v \"\n":                           `wf.yaml:4: steps.a.task: the template does not parse`,
		"name: x\nsteps:\n  - id: a\n    agent: r\n":                                          `wf.yaml:3: steps.a.task: required for an agent step`,
		"name: x\nsteps: []\n":                                        `steps: want a list of at least one step`,
		"steps:\n  - id: a\n    task: hi\n":                           `name: required`,
		"name: x\nsteps:\n  - id: 9a\n    task: hi\n":                 `want an id of letters`,
		"name: x\nsteps:\n  - id: a\n    task: hi\n    retry: many\n": `wf.yaml:5: steps[0].retry: want a number of retries`,
		"name: x\nsteps:\n  - id: a\n    task: hi\n  - id: b\n    needs: []\n    task: hi\n  - id: c\n    needs: [a]\n    if: '{{ .steps.b.output }}'\n    task: hi\n": `wf.yaml:8: steps.c.needs: a template refers to step b, which this step does not need`,
		"name: x\nsteps:\n  - id: a\n    task: '{{ .steps.zz.output }}'\n":                                                                                             `a template refers to step zz, and there is none`,
		"name: x\nsteps:\n  - id: a\n    task: hi\n  - id: b\n    task: '{{ .steps.a.outptu }}'\n":                                                                     `wf.yaml:5: steps.b: a template reads .steps.a.outptu: a step has output, json and status`,
		"name: x\nsteps:\n  - id: a\n    task: '{{ .inputs.version }}'\n":                                                                                              `wf.yaml:3: steps.a: a template reads the input version, and the workflow declares none`,
		"name: x\nsteps:\n  - id: a\n    task: hi\noutput: '{{ .steps.b.output }}'\n":                                                                                  `output: the output refers to step b, and there is none`,
	} {
		_, err := workflow.Parse("wf.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

// TestContinueRunsNoStepTwice cuts a workflow's journal in the middle of
// its second step (a sub-run) and continues it: the first step is not run
// again.
func TestContinueRunsNoStepTwice(t *testing.T) {
	var mu sync.Mutex
	ran := map[string]int{}
	count := func(name string) engine.Model {
		return agentModel(0, func(task string) string {
			mu.Lock()
			defer mu.Unlock()
			ran[name]++
			return name + " done"
		})
	}
	w := parse(t, "name: c\nsteps:\n  - id: one\n    agent: a1\n    task: go\n  - id: two\n    agent: a2\n    task: 'then {{ .steps.one.output }}'\n")
	agents := []engine.Agent{{Name: "a1", Description: "1", Model: count("a1")}, {Name: "a2", Description: "2", Model: count("a2")}}
	r := run(t, w, nil, agents)
	if r.res.Answer != "a2 done" {
		t.Fatalf("%+v", r.res)
	}
	var cut []engine.Event
	for _, ev := range r.events {
		cut = append(cut, ev)
		if ev.Kind == engine.KindRunStarted && ev.WorkflowStep == "two" {
			break
		}
	}
	s := engine.NewSession("s")
	for _, ev := range cut {
		if err := s.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	ran = map[string]int{}
	e := engine.New(engine.Config{Model: workflow.Planner{W: w}, Agents: agents})
	sink := &workflow.Sink{W: w, Next: &enginetest.Recorder{}}
	sink.Prime(cut)
	res := e.Continue(context.Background(), s, sink)
	if res.Answer != "a2 done" || ran["a1"] != 0 || ran["a2"] != 1 {
		t.Errorf("continued: %+v, ran %v", res, ran)
	}
}

// TestStepModeBetweenSteps: a gate pauses before each step's call, and an
// edited task is what the step runs.
func TestStepModeBetweenSteps(t *testing.T) {
	w := parse(t, "name: s\nsteps:\n  - id: one\n    agent: a\n    task: original\n")
	g := &editGate{}
	e := engine.New(engine.Config{Model: workflow.Planner{W: w}, Gate: g,
		Agents: []engine.Agent{{Name: "a", Description: "a", Model: agentModel(0, func(task string) string { return "ran " + task })}}})
	res := e.Run(context.Background(), engine.NewSession("s"), "wf", nil)
	if res.Answer != "ran edited" || g.paused == 0 {
		t.Errorf("%+v, paused %d", res, g.paused)
	}
}

type editGate struct{ paused int }

func (g *editGate) Stop(p engine.Pending) bool { return p.ParentRun == "" && p.ToolCall != nil }
func (g *editGate) Wait(_ context.Context, p engine.Pending) (engine.Verdict, error) {
	g.paused++
	var a map[string]string
	json.Unmarshal(p.ToolCall.Args, &a)
	a["task"] = "edited"
	b, _ := json.Marshal(a)
	return engine.Verdict{Action: engine.Proceed, Args: b}, nil
}

// TestTemplateOutputIsCapped: a step whose template would render without
// bound (2 MB here, all memory with larger output) fails naming the
// step, and the next workflow runs.
func TestTemplateOutputIsCapped(t *testing.T) {
	w := parse(t, "name: big\nsteps:\n  - id: blowup\n    tool: echo\n    args: {text: \"{{range 1000}}{{range 1000}}xx{{end}}{{end}}\"}\n")
	r := run(t, w, nil, nil)
	if r.res.StopReason != engine.StopError || !strings.Contains(r.res.Err.Error(), "blowup") || !strings.Contains(r.res.Err.Error(), "rendered more than") {
		t.Errorf("%+v; want an error naming the step and the cap", r.res)
	}
	w = parse(t, "name: small\nsteps:\n  - id: ok\n    tool: echo\n    args: {text: \"{{range 3}}x{{end}}\"}\n")
	if r := run(t, w, nil, nil); r.res.StopReason != engine.StopAnswered || !strings.Contains(r.res.Answer, "xxx") {
		t.Errorf("the next workflow: %+v", r.res)
	}
}

// TestTemplatesCannotSpin: a doubling loop that writes nothing until the
// end fails at the cap, and ranges over numbers too large are refused when
// the file is read.
func TestTemplatesCannotSpin(t *testing.T) {
	w := parse(t, "name: d\nsteps:\n  - id: double\n    tool: echo\n    args: {text: '{{$a := \"x\"}}{{range 40}}{{$a = printf \"%s%s\" $a $a}}{{end}}{{$a}}'}\n")
	r := run(t, w, nil, nil)
	if r.res.StopReason != engine.StopError || !strings.Contains(r.res.Err.Error(), "rendered more than") {
		t.Errorf("a doubling loop: %+v", r.res)
	}
	for _, src := range []string{
		"name: s\nsteps:\n  - id: spin\n    tool: echo\n    args: {text: '{{range 1000000000}}{{end}}'}\n",
		"name: s\nsteps:\n  - id: spin\n    task: '{{range 2000}}{{range 2000}}x{{end}}{{end}}'\n",
	} {
		if _, err := workflow.Parse("wf.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "would run") {
			t.Errorf("%q: %v; want a refusal of its ranges", src, err)
		}
	}
	parse(t, "name: ok\nsteps:\n  - id: fine\n    tool: echo\n    args: {text: '{{range 100}}{{range 100}}x{{end}}{{end}}'}\n")
}
