package console

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/ui"
)

// TestConsoleCommands: the session backend's slash commands on a real
// store: /model (an unusable name changes nothing), /agent (an unknown
// name lists none), /export to a file, /fork and /clear opening sessions
// of their own that run, /trust recorded, /compact journaled.
func TestConsoleCommands(t *testing.T) {
	env := consoleEnv(t)
	getenv := func(k string) string { return env[k] }
	ws := t.TempDir()
	o := app.Options{Model: "offline", MaxSteps: 5, Workspace: ws}
	st, err := app.Build(context.Background(), o, nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	store, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	con := &Console{Store: store, Setup: st, Opts: o, Getenv: getenv}
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	b := con.Open(j, engine.NewSession(j.ID))
	defer b.Close()
	drain := func(ch <-chan engine.Event) (kinds []engine.Kind) {
		for ev := range ch {
			kinds = append(kinds, ev.Kind)
		}
		return kinds
	}
	for _, task := range []string{"what is 17*23?", "remember that my name is Ada", "what is 2+2?"} {
		drain(b.Start(context.Background(), task))
	}

	if _, err := b.SetModel("nope"); err == nil || !strings.Contains(err.Error(), `model "nope"`) || b.ModelName() != "offline" {
		t.Fatalf("/model nope: %v, model %s", err, b.ModelName())
	}
	if _, err := b.SetAgent("critic"); err == nil || !strings.Contains(err.Error(), "there are no agents") {
		t.Fatalf("/agent critic with no agents: %v", err)
	}
	if kinds := drain(b.Compact(context.Background(), "the name")); len(kinds) == 0 || kinds[len(kinds)-1] != engine.KindContextCompacted {
		t.Fatalf("/compact sent %v", kinds)
	}
	if upto, _ := b.session.Compacted(); upto == 0 {
		t.Fatal("/compact compacted nothing")
	}

	out := filepath.Join(t.TempDir(), "talk.md")
	path, err := b.Export("md", out)
	if err != nil || path != out {
		t.Fatalf("/export md %s: %s, %v", out, path, err)
	}
	md, _ := os.ReadFile(out)
	if !strings.Contains(string(md), "remember that my name is Ada") {
		t.Fatalf("the export lacks the chat:\n%s", md)
	}

	fb, events, err := b.Fork(2)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	if fb.SessionID() == b.SessionID() || len(events) == 0 {
		t.Fatalf("/fork 2: session %s, %d events", fb.SessionID(), len(events))
	}
	if kinds := drain(fb.Start(context.Background(), "what is 6*7?")); kinds[len(kinds)-1] != engine.KindRunFinished {
		t.Fatalf("a run on the fork: %v", kinds)
	}

	cb, events, err := b.Clear()
	if err != nil || len(events) != 0 || cb.SessionID() == b.SessionID() {
		t.Fatalf("/clear: %v, %d events", err, len(events))
	}
	defer cb.Close()

	said, err := b.Trust()
	if err != nil || !strings.Contains(said, "Trusted") {
		t.Fatalf("/trust: %q, %v", said, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(env["AGENTTY_CONFIG"]), "trusted.json")); err != nil {
		t.Fatalf("/trust recorded nothing: %v", err)
	}
}

// TestConsoleWorkflow: the session backend carries out a workflow of the
// user's workflows folder (/workflow): an unknown name or a missing
// required input is an error naming what is wrong, and nothing runs; the
// offline example answers 391, its run framed by workflow_started and
// workflow_finished in the journal; a fork of it after its first step,
// opened, continues with the workflow's planner (ctrl+r), running none of
// the steps done before the fork again.
func TestConsoleWorkflow(t *testing.T) {
	env := consoleEnv(t)
	getenv := func(k string) string { return env[k] }
	dir := filepath.Join(filepath.Dir(env["AGENTTY_CONFIG"]), "workflows")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("..", "examples", "workflows", "arithmetic.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	needy := "name: needy\ninputs:\n  pr: {required: true}\nsteps:\n  - id: one\n    tool: calculator\n    args: {expression: \"1+1\"}\n"
	for name, body := range map[string]string{"arithmetic.yaml": string(src), "needy.yaml": needy} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := app.Options{Model: "offline", MaxSteps: 5, Workspace: t.TempDir()}
	st, err := app.Build(context.Background(), o, nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	store, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	con := &Console{Store: store, Setup: st, Opts: o, Getenv: getenv}
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	b := con.Open(j, engine.NewSession(j.ID))
	defer b.Close()

	ls, err := b.Workflows()
	if err != nil || len(ls) != 2 || ls[0].Name != "arithmetic" || ls[1].Inputs[0] != "pr (required)" {
		t.Fatalf("workflows: %+v, %v", ls, err)
	}
	if _, _, err := b.PrepareWorkflow("nope", nil); err == nil || !strings.Contains(err.Error(), `no workflow is called "nope"`) || !strings.Contains(err.Error(), "arithmetic") {
		t.Errorf("an unknown workflow: %v", err)
	}
	if _, _, err := b.PrepareWorkflow("needy", nil); err == nil || !strings.Contains(err.Error(), "pr") {
		t.Errorf("a missing input: %v", err)
	}
	if len(b.session.History) != 0 {
		t.Fatal("a refused workflow ran")
	}
	start, _, err := b.PrepareWorkflow("arithmetic", map[string]string{"a": "17"})
	if err != nil {
		t.Fatal(err)
	}
	var answer string
	kinds := map[engine.Kind]int{}
	for ev := range start(context.Background()) {
		kinds[ev.Kind]++
		if d, ok := ev.Data.(*engine.RunFinished); ok && ev.ParentRun == "" {
			answer = d.Answer
		}
		if ev.Workflow != "arithmetic" {
			t.Errorf("%s of %s does not name the workflow", ev.Kind, ev.Run)
		}
	}
	if !strings.Contains(answer, "391") || kinds[engine.KindWorkflowStarted] != 1 || kinds[engine.KindWorkflowStepFinished] != 4 || kinds[engine.KindWorkflowFinished] != 1 {
		t.Fatalf("the workflow answered %q with events %v", answer, kinds)
	}
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}

	// A fork after the first step (product): the run is interrupted there,
	// and opened, it continues with the planner.
	fb, events, err := b.Fork(1)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	f := fb.(*backend)
	if !f.session.Interrupted() || f.resume == nil || f.resumeErr != nil {
		t.Fatalf("the fork at step 1 (%d events): interrupted %v, workflow %v (%v)", len(events), f.session.Interrupted(), f.resume, f.resumeErr)
	}
	var steps []string
	answer = ""
	for ev := range f.Continue(context.Background()) {
		if d, ok := ev.Data.(*engine.ToolStarted); ok && ev.ParentRun == "" {
			steps = append(steps, ev.WorkflowStep)
			if ev.WorkflowStep == "product" {
				t.Errorf("the step done before the fork ran again: %s", d.ID)
			}
		}
		if d, ok := ev.Data.(*engine.RunFinished); ok && ev.ParentRun == "" {
			answer = d.Answer
		}
	}
	if !strings.Contains(answer, "391") || len(steps) != 3 {
		t.Errorf("the continued workflow ran steps %v and answered %q", steps, answer)
	}
}

// TestConsoleSearch: the console's search (the picker as ui.Searcher) on a
// real store and workspace: after a past offline session, the index is
// built and finds the session's fact at its step and the workspace's file
// at its lines; the scope filters; the hit's session opens.
func TestConsoleSearch(t *testing.T) {
	env := consoleEnv(t)
	getenv := func(k string) string { return env[k] }
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.md"), []byte("# Client\n\nthe retry policy of the client: five attempts\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := app.Options{Model: "offline", MaxSteps: 5, Workspace: ws}
	st, err := app.Build(context.Background(), o, nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	store, err := o.Store(getenv)
	if err != nil {
		t.Fatal(err)
	}
	con := &Console{Store: store, Setup: st, Opts: o, Getenv: getenv}
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	b := con.Open(j, engine.NewSession(j.ID))
	for range b.Start(context.Background(), "remember that the retry policy is five attempts") {
	}
	b.Close()

	p := picker{store: store, setup: st, con: con}
	var s ui.Searcher = p // as ui.New takes it from Config.Sessions
	if err := p.UpdateIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(context.Background(), "retry policy", "all", 10)
	if err != nil {
		t.Fatal(err)
	}
	var fact, file *ui.SearchHit
	for i, h := range hits {
		switch {
		case h.Session == j.ID && h.Kind == "memory":
			fact = &hits[i]
		case h.Path == "notes.md":
			file = &hits[i]
		}
	}
	if fact == nil || fact.Step != 1 || fact.Run == "" || !strings.Contains(fact.Text, "five attempts") {
		t.Fatalf("no hit of the session's fact at step 1 in %+v", hits)
	}
	if file == nil || file.Source != "workspace" || file.StartLine != 1 || !strings.Contains(file.Where, "notes.md:1-") {
		t.Fatalf("no hit of notes.md from line 1 in %+v", hits)
	}
	only, err := s.Search(context.Background(), "retry policy", "workspace", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range only {
		if h.Session != "" {
			t.Errorf("the workspace scope found a session's chunk: %+v", h)
		}
	}
	ob, events, err := p.Open(fact.Session)
	if err != nil || len(events) == 0 || ob.SessionID() != j.ID {
		t.Fatalf("the hit's session does not open: %v, %d events", err, len(events))
	}
	ob.Close()
}

// consoleEnv is an environment of folders of the test's own: no person's
// config, sessions or home.
func consoleEnv(t *testing.T) map[string]string {
	t.Helper()
	return map[string]string{"AGENTTY_HOME": t.TempDir(), "AGENTTY_CONFIG": filepath.Join(t.TempDir(), "config.json"), "HOME": t.TempDir()}
}
