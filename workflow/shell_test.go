package workflow_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/tools"
	"github.com/agentty/agentty/workflow"
)

// shell is the real run_shell in a temporary workspace, allowed without
// asking (the planner's run has no person to ask).
func shell(t *testing.T) engine.Tool {
	t.Helper()
	ws, err := tools.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	sh := ws.RunShell(10 * time.Second)
	sh.Policy = engine.PolicyAllow
	return sh
}

// A run_shell step's stdout, stderr and exit are data: foreach takes the
// lines of its stdout (not the text that begins "exit status 0"), its
// stderr and exit are apart, and .output is what it was.
func TestShellOutputAsData(t *testing.T) {
	w := parse(t, `
name: shell
steps:
  - id: log
    tool: run_shell
    args: {command: "printf 'fix a\n\nadd b\nadd c\n'; echo warned >&2; exit 2"}
  - id: each
    foreach: '{{ lines .steps.log.stdout }}'
    tool: echo
    args: {text: "<{{ .item }}>"}
  - id: parts
    needs: [log]
    foreach: '{{ split "," "x,y" }}'
    tool: echo
    args: {text: "{{ .item }}"}
  - id: sum
    needs: [each, parts]
    tool: echo
    args: {text: 'exit={{ .steps.log.exit }} err={{ trim .steps.log.stderr }} n={{ len (lines .steps.log.stdout) }} first={{ index (lines .steps.log.output) 0 }} list={{ toJSON (lines .steps.log.stdout) }}'}
output: '{{ .steps.each.output }} {{ .steps.parts.output }} {{ .steps.sum.output }}'
`)
	r := run(t, w, nil, nil, shell(t))
	if r.res.StopReason != engine.StopAnswered {
		t.Fatalf("%+v", r.res)
	}
	want := `["echo: \u003cfix a\u003e","echo: \u003cadd b\u003e","echo: \u003cadd c\u003e"] ["echo: x","echo: y"] echo: exit=2 err=warned n=3 first=exit status 2 list=["fix a","add b","add c"]`
	if r.res.Answer != want {
		t.Errorf("answer\n%s\nwant\n%s", r.res.Answer, want)
	}
	if got := stepEvents(r.events)["each"]; got.Items != 3 {
		t.Errorf("each: %+v", got)
	}
}

// The template functions on their own: lines skips blank lines and a
// trailing newline, split is strings.Split, trim trims, toJSON encodes.
func TestTextFunctions(t *testing.T) {
	for _, c := range []struct{ tmpl, want string }{
		{`{{ toJSON (lines "a\n\n  \nb\r\nc\n") }}`, `["a","b","c"]`},
		{`{{ toJSON (lines "") }}`, `[]`},
		{`{{ toJSON (split "," "a,b,") }}`, `["a","b",""]`},
		{`{{ trim "  a b \n" }}`, `a b`},
		{`{{ toJSON (fromJSON "{\"a\":[1,2]}") }}`, `{"a":[1,2]}`},
		{`{{ range lines "x\ny" }}[{{ . }}]{{ end }}`, `[x][y]`},
	} {
		w := parse(t, "name: f\nsteps:\n  - id: s\n    tool: echo\n    args: {text: '"+strings.ReplaceAll(c.tmpl, "'", "''")+"'}\n")
		r := run(t, w, nil, nil)
		if got := strings.TrimPrefix(r.res.Answer, "echo: "); got != c.want {
			t.Errorf("%s = %q, want %q", c.tmpl, got, c.want)
		}
	}
}

// A foreach over a text that is no list says how to make one; a step
// other than run_shell has no stdout (refused when the file is read); a
// run_shell step whose stdout was cut fails rather than hand a template
// part of it.
func TestShellDataRefusals(t *testing.T) {
	w := parse(t, `
name: notalist
steps:
  - id: log
    tool: run_shell
    args: {command: "echo a; echo b"}
  - id: each
    foreach: '{{ .steps.log.stdout }}'
    tool: echo
    args: {text: "{{ .item }}"}
`)
	if r := run(t, w, nil, nil, shell(t)); r.res.StopReason != engine.StopError || !strings.Contains(fmt.Sprint(r.res.Err), "want a list (a JSON list, or lines, split or fromJSON of a text)") {
		t.Errorf("a text for foreach: %+v", r.res)
	}
	_, err := workflow.Parse("wf.yaml", []byte("name: x\nsteps:\n  - id: a\n    tool: echo\n    args: {text: hi}\n  - id: b\n    tool: echo\n    args: {text: '{{ .steps.a.stdout }}'}\n"))
	if err == nil || !strings.Contains(err.Error(), "wf.yaml:6: steps.b: a template reads .steps.a.stdout: only a run_shell step has stdout, stderr and exit") {
		t.Errorf("stdout of an echo step: %v", err)
	}
	w = parse(t, `
name: long
steps:
  - id: log
    tool: run_shell
    args: {command: "yes line | head -n 20000"}
`)
	if r := run(t, w, nil, nil, shell(t)); r.res.StopReason != engine.StopError || !strings.Contains(fmt.Sprint(r.res.Err), "its stdout was cut at 32768 bytes (67232 more)") {
		t.Errorf("a cut stdout: %+v", r.res)
	}
	w = parse(t, "name: ok\nsteps:\n  - id: log\n    tool: run_shell\n    args: {command: 'echo fine'}\noutput: '{{ .steps.log.stdout }}'\n")
	if r := run(t, w, nil, nil, shell(t)); r.res.Answer != "fine\n" {
		t.Errorf("the next good workflow: %+v", r.res)
	}
}

// Hostile output: a command's lines that hold template actions (printed
// from octal escapes, as the workflow's own text is a template) are data,
// passed as .item as they are, and a command printing more lines than a
// foreach may fan out is refused, not cut; the next good workflow runs.
func TestHostileShellOutput(t *testing.T) {
	w := parse(t, `
name: hostile
steps:
  - id: log
    tool: run_shell
    args: {command: "printf '\\173\\173 .inputs \\175\\175\\n\\173\\173 range 1000000000 \\175\\175x\\173\\173 end \\175\\175\\n'"}
  - id: each
    foreach: '{{ lines .steps.log.stdout }}'
    tool: echo
    args: {text: "[{{ .item }}]"}
`)
	if r := run(t, w, nil, nil, shell(t)); r.res.Answer != `["echo: [{{ .inputs }}]","echo: [{{ range 1000000000 }}x{{ end }}]"]` {
		t.Errorf("template actions in the output: %+v", r.res)
	}
	w = parse(t, `
name: many
steps:
  - id: log
    tool: run_shell
    args: {command: "seq 150"}
  - id: each
    foreach: '{{ lines .steps.log.stdout }}'
    tool: echo
    args: {text: "{{ .item }}"}
`)
	if r := run(t, w, nil, nil, shell(t)); r.res.StopReason != engine.StopError || !strings.Contains(fmt.Sprint(r.res.Err), "150 items, more than 100") {
		t.Errorf("150 lines: %+v", r.res)
	}
	w = parse(t, "name: ok\nsteps:\n  - id: log\n    tool: run_shell\n    args: {command: 'seq 3'}\n  - id: each\n    foreach: '{{ lines .steps.log.stdout }}'\n    tool: echo\n    args: {text: '{{ .item }}'}\n")
	if r := run(t, w, nil, nil, shell(t)); r.res.Answer != `["echo: 1","echo: 2","echo: 3"]` {
		t.Errorf("the next good workflow: %+v", r.res)
	}
}
