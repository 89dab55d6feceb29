package workflow_test

import (
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
)

const triageFlow = `
name: triage
inputs:
  messages: {description: a JSON list of messages, required: true}
steps:
  - id: classify
    foreach: '{{ .inputs.messages }}'
    agent: triager
    task: "classify: {{ .item }}"
    output_schema:
      type: object
      properties: {priority: {type: string, enum: [high, low]}}
      required: [priority]
  - id: summary
    agent: writer
    task: "{{ range .steps.classify.output }}{{ .priority }};{{ end }} {{ range fromJSON .inputs.messages }}[{{ . }}]{{ end }}"
output: "{{ .steps.summary.output }}"
`

// A JSON list given as an input fans out (no workaround), each item's
// output is checked against the step's output_schema, and the step's
// .output is the list of parsed objects, which the next step ranges over;
// fromJSON parses a JSON text in a template.
func TestTypedFanIn(t *testing.T) {
	w := parse(t, triageFlow)
	agents := []engine.Agent{
		{Name: "triager", Description: "t", Model: agentModel(0, func(task string) string {
			if strings.Contains(task, "refund") {
				return `{"priority":"high"}`
			}
			return `{"priority":"low"}`
		})},
		{Name: "writer", Description: "w", Model: agentModel(0, func(task string) string { return task })},
	}
	r := run(t, w, map[string]string{"messages": `["I want a refund", "thanks!"]`}, agents)
	if r.res.StopReason != engine.StopAnswered || r.res.Answer != "high;low; [I want a refund][thanks!]" {
		t.Fatalf("%s %q %v", r.res.StopReason, r.res.Answer, r.res.Err)
	}
}

// An item whose output does not meet the schema fails the step, naming
// the item; the others' are not the reason.
func TestFanInItemAgainstItsSchema(t *testing.T) {
	w := parse(t, triageFlow)
	agents := []engine.Agent{
		{Name: "triager", Description: "t", Model: agentModel(0, func(task string) string {
			if strings.Contains(task, "thanks") {
				return `{"priority":"whenever"}`
			}
			return `{"priority":"high"}`
		})},
		{Name: "writer", Description: "w", Model: agentModel(0, func(task string) string { return task })},
	}
	r := run(t, w, map[string]string{"messages": `["I want a refund", "thanks!"]`}, agents)
	if r.res.StopReason != engine.StopError || r.res.Err == nil || !strings.Contains(r.res.Err.Error(), "item 1's output does not meet its output_schema") {
		t.Fatalf("%s %v", r.res.StopReason, r.res.Err)
	}
}

// A field of a step's .json when its output is not JSON is the
// workflow's error at run time, naming the step and saying what it got,
// not a Go template's nil pointer labelled as a model's.
func TestForeachOfNoJSONSaysWhy(t *testing.T) {
	w := parse(t, `
name: notes
steps:
  - id: changes
    agent: writer
    task: "list the changed files"
  - id: per_file
    foreach: '{{ .steps.changes.json.files }}'
    tool: echo
    args: {text: "{{ .item }}"}
`)
	r := run(t, w, nil, []engine.Agent{{Name: "writer", Description: "w", Model: agentModel(0, func(string) string { return "a.go and b.go" })}})
	msg := ""
	if r.res.Err != nil {
		msg = r.res.Err.Error()
	}
	if r.res.StopReason != engine.StopError || !strings.HasPrefix(msg, "workflow notes, step per_file: foreach") ||
		!strings.Contains(msg, "a step's .json is empty when its output is not JSON") || strings.Contains(msg, "model:") {
		t.Errorf("%s: %q", r.res.StopReason, msg)
	}
}
