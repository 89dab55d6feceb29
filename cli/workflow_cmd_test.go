package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/sessions"
)

// TestOfflineWorkflowExample: the shipped example runs end to end with the
// offline model and no key, its steps framed in the journal.
func TestOfflineWorkflowExample(t *testing.T) {
	env := agentEnv(t)
	code, out, errs := runCLI(t, context.Background(), env, "workflow", "run", filepath.Join("..", "examples", "workflows", "arithmetic.yaml"), "--model", "offline", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	evs := jsonEvents(t, out)
	steps := map[string]string{}
	var final *engine.WorkflowFinished
	for _, ev := range evs {
		if ev.Workflow != "arithmetic" {
			t.Fatalf("an event without its workflow: %+v", ev)
		}
		switch d := ev.Data.(type) {
		case *engine.WorkflowStepFinished:
			steps[d.Step] = d.Status
		case *engine.WorkflowFinished:
			final = d
		}
	}
	if fmt.Sprint(steps) != "map[check:ok product:ok recall:ok remember:ok]" || final == nil || final.Status != "ok" ||
		!strings.Contains(final.Output, "- product: 17*23 = 391\n- checked: 23*17 = 391") || !strings.Contains(final.Output, "product is 17*23 = 391") {
		t.Errorf("steps %v, finished %+v", steps, final)
	}
	code, _, errs = runCLI(t, context.Background(), env, "workflow", "run", filepath.Join("..", "examples", "workflows", "arithmetic.yaml"), "--input", "c=1")
	if code != 2 || !strings.Contains(errs, "has no input c") {
		t.Errorf("an unknown input: exit %d: %s", code, errs)
	}
}

// TestWorkflowsList: agentty workflows lists the workspace's and the
// user's, the workspace's winning a name, and the files that failed.
func TestWorkflowsList(t *testing.T) {
	env := agentEnv(t)
	ws := t.TempDir()
	writeAgent(t, filepath.Join(ws, ".agentty", "workflows"), "a.yaml", "name: a\ndescription: from the workspace\nsteps:\n  - id: s\n    tool: clock\n")
	writeAgent(t, filepath.Join(ws, ".agentty", "workflows"), "bad.yaml", "name: bad\nsteps:\n  - id: s\n    tool: clock\n    needs: [t]\n")
	writeAgent(t, filepath.Join(filepath.Dir(env["AGENTTY_CONFIG"]), "workflows"), "a.yaml", "name: a\ndescription: the user's\nsteps:\n  - id: s\n    tool: clock\n")
	writeAgent(t, filepath.Join(filepath.Dir(env["AGENTTY_CONFIG"]), "workflows"), "b.yaml", "name: b\nsteps:\n  - id: s\n    tool: clock\n")
	code, out, _ := runCLI(t, context.Background(), env, "workflows", "--json", "--workspace", ws)
	var got struct {
		Workflows []struct{ Name, Description, Scope string }
		Errors    []string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err, out)
	}
	if code != 1 || len(got.Workflows) != 2 || got.Workflows[0].Description != "from the workspace" || got.Workflows[1].Name != "b" ||
		len(got.Errors) != 1 || !strings.Contains(got.Errors[0], `bad.yaml:3: steps.s.needs: no step is called "t"`) {
		t.Errorf("exit %d: %+v", code, got)
	}
	code, out, errs := runCLI(t, context.Background(), env, "workflow", "run", "b", "--workspace", ws, "--model", "offline")
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Errorf("workflow run b: exit %d %q %s", code, out, errs)
	}
}

// TestKillInsideAWorkflow kills a child carrying out a workflow (scripted
// agents, slow) at random points with SIGKILL, and checks that
// --continue --yes finishes it with no step run twice.
func TestKillInsideAWorkflow(t *testing.T) {
	bin := buildBinary(t)
	env := agentEnv(t)
	slow := func(answer string) string {
		return `{"turns":[{"delay_ms":20,"tool_calls":[{"name":"remember","arguments":{"key":"` + answer + `","value":"1"}}]},{"delay_ms":20,"answer":"` + answer + `"}]}`
	}
	scriptAgents(t, env, map[string]string{"a": slow("A"), "b": slow("B"), "c": slow("C")})
	wf := filepath.Join(t.TempDir(), "wf.yaml")
	os.WriteFile(wf, []byte(`name: chain
steps:
  - id: one
    agent: a
    task: first
  - id: two
    agent: b
    task: "after {{ .steps.one.output }}"
  - id: three
    needs: [one]
    agent: c
    task: beside
output: "{{ .steps.two.output }}{{ .steps.three.output }}"
`), 0o600)
	ws := t.TempDir()
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 3))
	t.Logf("seed %d", seed)
	const points = 12
	continued := 0
	for i := range points {
		home := t.TempDir()
		cmd := exec.Command(bin, "workflow", "run", wf, "--workspace", ws, "--data-dir", home, "--json", "--model", "offline")
		cmd.Env = append(os.Environ(), "AGENTTY_CONFIG="+env["AGENTTY_CONFIG"], "HOME="+env["HOME"])
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		if !sc.Scan() {
			t.Fatalf("point %d: nothing printed", i)
		}
		var ev engine.Event
		json.Unmarshal(sc.Bytes(), &ev)
		go func() {
			for sc.Scan() {
			}
		}()
		time.Sleep(time.Duration(rng.IntN(int(90 * time.Millisecond))))
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		store, _ := sessions.Open(home)
		l, err := store.Load(ev.Session)
		if err != nil {
			t.Fatalf("point %d: %v", i, err)
		}
		if !l.Session.Interrupted() {
			continue
		}
		continued++
		c := exec.Command(bin, "run", "--workspace", ws, "--data-dir", home, "--session", ev.Session, "--continue", "--yes")
		c.Env = cmd.Env
		out, err := c.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "BC") {
			t.Fatalf("point %d (killed after %d events): --continue: %v\n%s", i, len(l.Events), err, out)
		}
		final, _ := store.Load(ev.Session)
		started := map[string]int{}
		done := map[string]int{}
		for _, e := range final.Events {
			if e.Kind == engine.KindRunStarted && e.ParentRun != "" {
				started[e.Agent]++
			}
			if d, ok := e.Data.(*engine.ToolFinished); ok {
				if done[e.Run+" "+d.ID]++; done[e.Run+" "+d.ID] > 1 {
					t.Errorf("point %d: call %s %s ran twice", i, e.Run, d.ID)
				}
			}
		}
		if started["a"] != 1 || started["b"] != 1 || started["c"] != 1 || len(final.Session.Memory()) != 3 {
			t.Errorf("point %d: steps started %v, memory %v", i, started, final.Session.Memory())
		}
	}
	t.Logf("%d kill points, %d continued", points, continued)
	if continued < points/3 {
		t.Errorf("only %d of %d kills landed mid-workflow", continued, points)
	}
}

// TestWorkflowsInTheCurrentFolder: with no --workspace, the current
// folder's workflows are found (a relative path is no way out of it), and
// an untrusted folder's task step may not pick its own model, however the
// file is named.
func TestWorkflowsInTheCurrentFolder(t *testing.T) {
	env := agentEnv(t)
	ws := t.TempDir()
	writeAgent(t, filepath.Join(ws, ".agentty", "workflows"), "w.yaml", "name: w\nsteps:\n  - id: s\n    task: what is 2+2?\n    model: gpt-4-expensive\n")
	t.Chdir(ws)
	code, out, errs := runCLI(t, context.Background(), env, "workflows")
	if code != 0 || !strings.Contains(out, "w ") {
		t.Fatalf("workflows: exit %d\n%s%s", code, out, errs)
	}
	for _, target := range []string{"w", ".agentty/workflows/w.yaml", filepath.Join(ws, ".agentty", "workflows", "w.yaml")} {
		code, out, errs = runCLI(t, context.Background(), env, "workflow", "run", target, "--model", "offline")
		if code != 0 || !strings.Contains(out, "2+2 = 4") || !strings.Contains(errs, `refused "gpt-4-expensive": the workspace is not trusted`) {
			t.Errorf("workflow run %s: exit %d\n%s%s", target, code, out, errs)
		}
	}
}

// TestWorkflowFansOutPastTheCallCap: a foreach of 80 items is 80 calls in
// one of the planner's decisions; the cap on a model's calls per decision
// (64) does not cut it.
func TestWorkflowFansOutPastTheCallCap(t *testing.T) {
	var items []string
	for i := 1; i <= 80; i++ {
		items = append(items, fmt.Sprint(i))
	}
	file := filepath.Join(t.TempDir(), "fan.yaml")
	os.WriteFile(file, []byte(`name: fan
steps:
  - id: double
    foreach: '[`+strings.Join(items, ",")+`]'
    tool: calculator
    args: {expression: "{{ .item }}*2"}
`), 0o600)
	code, out, errs := runCLI(t, context.Background(), agentEnv(t), "workflow", "run", file, "--model", "offline")
	if code != 0 || !strings.Contains(out, "160") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
}

// TestWorkflowStepOutputSchema: a step's output_schema fails an output
// that does not meet it (and retry: asks again); the next step's template
// reads the valid output's fields.
func TestWorkflowStepOutputSchema(t *testing.T) {
	srv := enginetest.NewServer(t,
		enginetest.Reply{Body: enginetest.Answer("it is urgent")},
		enginetest.Reply{Body: enginetest.Answer(`{"priority": "high"}`)},
		enginetest.Reply{Body: enginetest.Answer("noted")})
	file := filepath.Join(t.TempDir(), "triage.yaml")
	os.WriteFile(file, []byte(`name: triage
steps:
  - id: triage
    task: sort the ticket
    retry: 1
    output_schema:
      type: object
      properties: {priority: {enum: [low, high]}}
      required: [priority]
  - id: say
    needs: [triage]
    task: "the priority is {{ .steps.triage.output.priority }}"
`), 0o600)
	env := agentEnv(t)
	env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"] = srv.URL(), "k"
	code, out, errs := runCLI(t, context.Background(), env, "workflow", "run", file, "--model", "gpt-test")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	reqs := srv.Requests()
	var bodies []string
	for _, r := range reqs {
		b, _ := json.Marshal(r.Body)
		bodies = append(bodies, string(b))
	}
	if len(reqs) != 3 || !strings.Contains(bodies[2], "the priority is high") {
		t.Errorf("%d requests:\n%s", len(reqs), strings.Join(bodies, "\n---\n"))
	}
}

// TestWorkflowWithAnUnknownAgentIsRefused: a step naming an agent (or a
// tool) that is not here is refused when the workflow is read: agentty
// workflows lists it as an error with its file, line and the name meant,
// and workflow run refuses it before its first step runs; the next good
// workflow runs (issue 54, 3).
func TestWorkflowWithAnUnknownAgentIsRefused(t *testing.T) {
	env := agentEnv(t)
	ws := t.TempDir()
	writeAgent(t, filepath.Join(ws, ".agentty", "agents"), "mathematician.md", agentFile("mathematician", "tools: [calculator]\n", "You do sums."))
	dir := filepath.Join(ws, ".agentty", "workflows")
	writeAgent(t, dir, "w.yaml", "name: w\nsteps:\n  - id: first\n    tool: calculator\n    args: {expression: \"1+1\"}\n  - id: sums\n    agent: mathematican\n    task: what is 6*7?\n    needs: [first]\n  - id: late\n    tool: clok\n    needs: [sums]\n")
	writeAgent(t, dir, "ok.yaml", "name: ok\nsteps:\n  - id: s\n    agent: mathematician\n    task: what is 6*7?\n")
	code, out, errs := runCLI(t, context.Background(), env, "workflows", "--workspace", ws)
	all := out + errs
	if code != 1 || !strings.Contains(all, `w.yaml:6: steps.sums.agent: no agent "mathematican" here (did you mean "mathematician"?)`) ||
		!strings.Contains(all, `w.yaml:10: steps.late.tool: no tool "clok" here (did you mean "clock"?)`) || !strings.Contains(out, "ok ") {
		t.Errorf("workflows: exit %d\n%s", code, all)
	}
	code, out, errs = runCLI(t, context.Background(), env, "workflow", "run", "w", "--workspace", ws, "--model", "offline")
	if code == 0 || !strings.Contains(errs, `steps.sums.agent: no agent "mathematican"`) || strings.Contains(out+errs, "1+1 = 2") {
		t.Errorf("workflow run w: exit %d\n%s%s", code, out, errs)
	}
	store, _ := sessions.Open(env["AGENTTY_HOME"])
	list, _ := store.List()
	for _, l := range list {
		if s, _ := store.Load(l.ID); s != nil && len(s.Events) > 0 {
			t.Errorf("the refused workflow left session %s with %d events", l.ID, len(s.Events))
		}
	}
	code, out, errs = runCLI(t, context.Background(), env, "workflow", "run", "ok", "--workspace", ws, "--model", "offline")
	if code != 0 || !strings.Contains(out, "42") {
		t.Errorf("the next good workflow: exit %d\n%s%s", code, out, errs)
	}
}
