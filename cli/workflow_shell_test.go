package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// gitRepo makes a git repository with a commit for each subject, oldest
// first.
func gitRepo(t *testing.T, subjects ...string) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	for i, s := range subjects {
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte(fmt.Sprint(i)), 0o600)
		git("add", "f.txt")
		git("commit", "-q", "-m", s)
	}
	return dir
}

// TestWorkflowForeachOverShellLines: through agentty workflow run, a
// run_shell step's git log fans out with foreach over lines of its
// stdout, one item a commit, one at a time in the log's order
// (max_parallel: 1), each a task step's sub-run; its stderr and exit are
// apart (issue 54, 4).
func TestWorkflowForeachOverShellLines(t *testing.T) {
	repo := gitRepo(t, "fix: a crash", "feat: a flag", "docs: a page")
	wf := filepath.Join(t.TempDir(), "wf.yaml")
	os.WriteFile(wf, []byte(`name: commits
steps:
  - id: log
    tool: run_shell
    args: {command: "git log --format=%s; echo done >&2"}
  - id: each
    foreach: '{{ lines .steps.log.stdout }}'
    max_parallel: 1
    task: "kind of: {{ .item }}"
output: 'exit {{ .steps.log.exit }}, stderr {{ trim .steps.log.stderr }}: {{ len (fromJSON .steps.each.output) }} items'
`), 0o600)
	env := agentEnv(t)
	code, out, errs := runCLI(t, context.Background(), env, "workflow", "run", wf, "--workspace", repo, "--allow-shell", "--yes", "--model", "offline", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var tasks []string
	var final *engine.WorkflowFinished
	for _, ev := range jsonEvents(t, out) {
		switch d := ev.Data.(type) {
		case *engine.RunStarted:
			if ev.WorkflowStep == "each" {
				tasks = append(tasks, d.Task)
			}
		case *engine.WorkflowFinished:
			final = d
		}
	}
	if strings.Join(tasks, "|") != "kind of: docs: a page|kind of: feat: a flag|kind of: fix: a crash" {
		t.Errorf("the items' tasks, in the order they ran: %q", tasks)
	}
	if final == nil || final.Output != "exit 0, stderr done: 3 items" {
		t.Errorf("finished %+v", final)
	}
}

// TestWorkflowTaskToolsNarrow: a task step's tools: is all its model is
// offered, and a call of another tool is refused (the tool does not run)
// while the step goes on; a name that is no tool is refused when the
// workflow is read, with the name meant (issue 54, 4).
func TestWorkflowTaskToolsNarrow(t *testing.T) {
	srv := enginetest.NewServer(t,
		enginetest.Reply{Body: enginetest.ToolCallStream("c1", "remember", `{"key":"k","value":"v"}`, 2)},
		enginetest.Reply{Body: enginetest.ToolCallStream("c2", "calculator", `{"expression":"6*7"}`, 2)},
		enginetest.Reply{Body: enginetest.Answer("42")})
	ws := t.TempDir()
	dir := filepath.Join(ws, ".agentty", "workflows")
	writeAgent(t, dir, "w.yaml", "name: w\nsteps:\n  - id: sums\n    task: what is 6*7?\n    tools: [calculator]\n")
	writeAgent(t, dir, "typo.yaml", "name: typo\nsteps:\n  - id: sums\n    task: what is 6*7?\n    tools: [calculater]\n")
	env := agentEnv(t)
	env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"] = srv.URL(), "k"
	code, out, errs := runCLI(t, context.Background(), env, "workflow", "run", "w", "--workspace", ws, "--model", "gpt-test", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var refused, calc string
	for _, ev := range jsonEvents(t, out) {
		switch d := ev.Data.(type) {
		case *engine.ToolFinished:
			switch d.Name {
			case "remember":
				refused = d.Result
			case "calculator":
				calc = d.Result
			}
		case *engine.MemoryChanged:
			t.Errorf("the refused tool ran: %+v", d)
		}
	}
	if !strings.Contains(refused, `unknown tool "remember"; the tools are: calculator`) || !strings.Contains(calc, "42") {
		t.Errorf("remember: %q; calculator: %q", refused, calc)
	}
	for i, r := range srv.Requests() {
		tools, _ := json.Marshal(r.Body["tools"])
		if strings.Count(string(tools), `"name"`) != 1 || !strings.Contains(string(tools), `"calculator"`) {
			t.Errorf("request %d offered %s", i, tools)
		}
	}
	code, out, errs = runCLI(t, context.Background(), env, "workflows", "--workspace", ws)
	if code != 1 || !strings.Contains(out+errs, `typo.yaml:3: steps.sums.tools: no tool "calculater" here (did you mean "calculator"?)`) {
		t.Errorf("workflows: exit %d\n%s%s", code, out, errs)
	}
}

// TestWorkflowTaskListSchema: a task step's output_schema is what its
// model is asked for; a list's is sent as response_format inside an
// object (OpenAI's structured outputs take an object at the root), the
// answer taken out of it, and the step's output is the list (issue 54).
func TestWorkflowTaskListSchema(t *testing.T) {
	srv := enginetest.NewServer(t,
		enginetest.Reply{Body: enginetest.Answer(`{"answer":["fix","feat"]}`)},
		enginetest.Reply{Body: enginetest.Answer("two kinds")})
	wf := filepath.Join(t.TempDir(), "wf.yaml")
	os.WriteFile(wf, []byte(`name: kinds
steps:
  - id: kinds
    task: the kinds of change
    output_schema:
      type: array
      items: {type: string}
  - id: say
    task: 'say {{ join .steps.kinds.output "+" }}'
`), 0o600)
	env := agentEnv(t)
	env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"] = srv.URL(), "k"
	code, out, errs := runCLI(t, context.Background(), env, "workflow", "run", wf, "--model", "gpt-test")
	if code != 0 || !strings.Contains(out, "two kinds") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	reqs := srv.Requests()
	rf, _ := json.Marshal(reqs[0].Body["response_format"])
	if !strings.Contains(string(rf), `"json_schema"`) || !strings.Contains(string(rf), `"properties":{"answer":{"items":{"type":"string"},"type":"array"}}`) {
		t.Errorf("the step's request: response_format %s", rf)
	}
	if b, _ := json.Marshal(reqs[1].Body); len(reqs) != 2 || !strings.Contains(string(b), "say fix+feat") {
		t.Errorf("%d requests; the second %s", len(reqs), b)
	}
	if _, sent := reqs[1].Body["response_format"]; sent {
		t.Errorf("a step without a schema was sent one")
	}
}
