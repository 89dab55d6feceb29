package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/tools"
	"github.com/agentty/agentty/workflow"
)

// workflowEvents are the events of testdata/journals/NAME, a real journal
// of `agentty workflow run --json` with the offline model: the workflow
// release (a tool step, a task step and a tool step beside it, then a tool
// step and a step whose if is false, skipped); workflow-failed.jsonl is
// the same run with its read_file step failing twice (retry 1), which
// stops the workflow. Times are spaced 10ms apart so that durations read
// the same in every frame.
func workflowEvents(t testing.TB, name string) []engine.Event {
	t.Helper()
	path := filepath.Join("testdata", "journals", name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := readJournal(b, path, "0mx2workflow")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := range evs {
		evs[i].Time = at.Add(time.Duration(i) * 10 * time.Millisecond)
	}
	return evs
}

// cutAt returns the events before the first of kind in the workflow step.
func cutAt(evs []engine.Event, kind engine.Kind, wfStep string) []engine.Event {
	for i, ev := range evs {
		if ev.Kind == kind && ev.WorkflowStep == wfStep {
			return evs[:i]
		}
	}
	return evs
}

// TestWorkflowFrames: golden frames of a workflow in the Timeline while it
// runs (a task step's sub-run under its step's row, the status line's
// steps done) and once finished (a row per step with its status and
// duration, the skipped step), of one that failed, and of the Chat's step
// lines, collapsed and expanded (ctrl+x).
func TestWorkflowFrames(t *testing.T) {
	evs := workflowEvents(t, "workflow.jsonl")
	running := cutAt(evs, engine.KindToolFinished, "check")
	failed := workflowEvents(t, "workflow-failed.jsonl")
	timeline := []string{"tab", "tab"}
	scenes := []struct {
		name    string
		evs     []engine.Event
		running bool
		keys    []string
	}{
		{"running", running, true, timeline},
		{"finished", evs, false, timeline},
		{"failed", failed, false, timeline},
		{"chat", evs, false, nil},
		{"chat-expanded", evs, false, []string{"ctrl+x"}},
	}
	for _, sz := range []struct{ w, h int }{{120, 40}, {80, 24}} {
		for _, sc := range scenes {
			t.Run(fmt.Sprintf("%s-%dx%d", sc.name, sz.w, sz.h), func(t *testing.T) {
				m := agentConsole(t, sc.evs, sz.w, sz.h)
				m.running = sc.running
				press(m, sc.keys...)
				frame := m.View()
				checkFrame(t, frame, sz.w, sz.h)
				golden.RequireEqual(t, []byte(frame)) // go test ./ui -run TestWorkflowFrames -update rewrites testdata
			})
		}
	}
}

// TestWorkflowTimeline: each step has a row, its calls (and a task step's
// sub-run, under its agent call) under it; the row is running while its
// calls go, then says how the step ended and how long it took; a skipped
// step has a row saying so, and a failed step its attempts.
func TestWorkflowTimeline(t *testing.T) {
	evs := workflowEvents(t, "workflow.jsonl")
	m := agentConsole(t, cutAt(evs, engine.KindToolFinished, "check"), 120, 40)
	rows := strings.Join(shownRows(m), "\n")
	for _, want := range []string{
		"run-1 1  ▾ step product\n>run-1 1 act calculator",
		"run-1 2  ▾ step check\n>run-1 2 act ▾ agent wf-task-check\n>>run-1/2/wf-check-1 2  ▶ what is 23*17?",
		"run-1 2  ▾ step notes\n>run-1 2 act read_file",
	} {
		if !strings.Contains(rows, want) {
			t.Errorf("the rows lack\n%s\nin\n%s", want, rows)
		}
	}
	status := func(m *Model, step string) (string, time.Duration) {
		i, ok := m.tl.steps[step]
		if !ok {
			return "", 0
		}
		return m.tl.rows[i].status, m.tl.rows[i].dur
	}
	if s, d := status(m, "product"); s != "ok" || d <= 0 {
		t.Errorf("product: %s in %v, want ok with a duration", s, d)
	}
	if s, _ := status(m, "check"); s != "running" {
		t.Errorf("check while its sub-run goes: %s, want running", s)
	}
	if _, ok := m.tl.steps["fix"]; ok {
		t.Error("fix has a row before it was called or skipped")
	}
	m.running = true
	if line := m.statusLine(); !strings.Contains(line, "workflow release · step 1/5") {
		t.Errorf("status line while it runs: %q", line)
	}

	m = agentConsole(t, evs, 120, 40)
	for step, want := range map[string]string{"product": "ok", "check": "ok", "notes": "ok", "remember": "ok", "fix": "skipped"} {
		if s, _ := status(m, step); s != want {
			t.Errorf("%s: %q, want %q", step, s, want)
		}
	}
	if line := m.statusLine(); strings.Contains(line, "workflow release · step") {
		t.Errorf("status line once it ended: %q", line)
	}
	// Enter on a step's row: its details, with its output.
	press(m, "tab", "tab")
	for m.tl.rows[m.tl.sel].wf == nil || m.tl.rows[m.tl.sel].wf.name != "check" {
		before := m.tl.sel
		press(m, "up")
		if m.tl.sel == before {
			t.Fatal("no row of step check")
		}
	}
	press(m, "enter")
	if m.detail == nil || !strings.Contains(strings.Join(m.detail.lines, "\n"), "Workflow step check: ok") ||
		!strings.Contains(strings.Join(m.detail.lines, "\n"), "23*17 = 391") {
		t.Errorf("details of step check: %v", m.detail)
	}

	m = agentConsole(t, workflowEvents(t, "workflow-failed.jsonl"), 120, 40)
	if s, _ := status(m, "notes"); s != "error" {
		t.Errorf("notes, failed twice: %q", s)
	}
	if s, _ := status(m, "fix"); s != "not run" {
		t.Errorf("fix, after the workflow failed: %q", s)
	}
	i := m.tl.steps["notes"]
	if l := m.tl.label(i); !strings.Contains(l, "(2 attempts)") || len(m.tl.children[i]) != 2 {
		t.Errorf("notes: %q with %d calls, want 2 attempts under it", l, len(m.tl.children[i]))
	}
}

// TestWorkflowChat: each step is one line in the Chat with its output (its
// calls drawn inside it, not as lines of their own), and the answer is the
// workflow's output.
func TestWorkflowChat(t *testing.T) {
	m := agentConsole(t, workflowEvents(t, "workflow.jsonl"), 120, 40)
	var steps []string
	for _, it := range m.chat.items {
		switch it.kind {
		case itemStep:
			steps = append(steps, it.step.name)
		case itemTool:
			t.Errorf("a step's call %s is a line of its own", it.name)
		}
	}
	if want := []string{"product", "check", "notes", "remember", "fix"}; !slices.Equal(steps, want) {
		t.Errorf("step lines %v, want %v", steps, want)
	}
	frame := m.View()
	for _, want := range []string{"▣ step product: 17*23 = 391 ✓", "▣ step fix: skipped", "17*23 = 391; checked: 23*17 = 391"} {
		if !strings.Contains(frame, want) {
			t.Errorf("the Chat lacks %q:\n%s", want, frame)
		}
	}
	press(m, "ctrl+x")
	if frame := m.View(); !strings.Contains(frame, "⚙ agent wf-task-check") || !strings.Contains(frame, "output:") {
		t.Errorf("expanded, the steps do not show their calls and output:\n%s", frame)
	}
}

// stepWorkflow is a workflow of a task step and a tool step, for the real
// engine in step mode.
const stepWorkflow = `name: steps
steps:
  - id: draft
    task: "what is 2+3?"
  - id: sum
    tool: calculator
    args: {expression: "6*7"}
output: "{{ .steps.draft.output }}; {{ .steps.sum.output }}"
`

// TestWorkflowStepMode: the real engine carries out a workflow in step
// mode at the console's gate: the pause bar names the workflow step of
// each call (and of its sub-run's pauses), e edits a task step's
// {"agent","task"} before it runs, and the step's output is the edited
// task's.
func TestWorkflowStepMode(t *testing.T) {
	w, err := workflow.Parse("steps.yaml", []byte(stepWorkflow))
	if err != nil {
		t.Fatal(err)
	}
	in, err := w.CheckInputs(nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.NewRegistry(tools.Builtins()...)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Config{Model: "offline", Style: "notty", Backend: textBackend{}, Gate: NewGate(true)})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	e := engine.New(engine.Config{Gate: m.gate, Tools: reg, ModelName: "workflow steps", Model: workflow.Planner{W: w, Inputs: in},
		Agents: []engine.Agent{{Name: workflow.TaskAgent("draft"), Description: "the task of draft", Model: offline.Model{}, ModelName: offline.Name}}})
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	sink := &workflow.Sink{W: w, Inputs: in, Next: engine.SinkFunc(func(engine.Event) error { return nil })}
	events := e.Start(context.Background(), engine.NewSession("0mx2wfsteps"), "workflow steps", sink)
	msgs := make(chan tea.Msg)
	listen := func(cmd tea.Cmd) { go func() { msgs <- cmd() }() }
	listen(waitForGate(m.gate))
	listen(waitForEvent(events))
	named := map[string]int{}
	edited := false
	for done := false; !done; {
		switch msg := (<-msgs).(type) {
		case engineEventMsg:
			m.Update(msg)
			listen(waitForEvent(events))
		case runClosedMsg:
			done = true
		case gateMsg:
			_, cmd := m.Update(msg)
			listen(cmd)
		}
		for m.pause != nil {
			bar := strings.Join(m.pause.bar(160, true, 10), "\n")
			checkSafe(t, bar)
			p := m.pause.pending
			want := ""
			switch {
			case p.ParentRun != "":
				want = "draft"
			case p.ToolCall != nil && p.ToolCall.Name == agentTool:
				want = "draft"
			case p.ToolCall != nil:
				want = "sum"
			}
			if want != "" {
				named[want]++
				if !strings.Contains(bar, "· step "+want) {
					t.Errorf("the pause bar does not name step %s:\n%s", want, bar)
				}
			}
			if p.ToolCall != nil && p.ToolCall.Name == agentTool && !edited {
				m.Update(keyNamed("e"))
				if m.argsEditor == nil {
					t.Fatal("e opened no editor on the step's call")
				}
				if !strings.Contains(m.argsEditor.Value(), `"task": "what is 2+3?"`) {
					t.Errorf("the editor has %q, want the step's agent and task", m.argsEditor.Value())
				}
				m.argsEditor.SetValue(`{"agent": "wf-task-draft", "task": "what is 4*5?"}`)
				m.Update(keyNamed("ctrl+s"))
				edited = true
				continue
			}
			m.Update(keyNamed("enter"))
		}
	}
	if !edited || named["draft"] < 2 || named["sum"] == 0 {
		t.Errorf("pauses named by step: %v (edited %v)", named, edited)
	}
	last := m.sess.LastRun()
	if !last.Finished || last.Stop != engine.StopAnswered || !strings.Contains(last.Answer, "4*5 = 20") || !strings.Contains(last.Answer, "6*7 = 42") {
		t.Errorf("the run: %+v, want the edited task's answer", last)
	}
	if it := m.chat.steps["draft"]; it == nil || it.step.end == nil || !strings.Contains(it.step.end.Output, "20") {
		t.Errorf("the Chat's step draft: %+v", it)
	}
}

// forkBackend is a session whose Fork records the step and opens a fork.
type forkBackend struct {
	textBackend
	forked *[]int
}

func (b forkBackend) Compact(context.Context, string) <-chan engine.Event { return nil }
func (b forkBackend) SetModel(string) (engine.Event, error)               { return engine.Event{}, errors.New("no") }
func (b forkBackend) SetAgent(string) (engine.Event, error)               { return engine.Event{}, errors.New("no") }
func (b forkBackend) Fork(step int) (Backend, []engine.Event, error) {
	*b.forked = append(*b.forked, step)
	return forkedBackend{}, nil, nil
}
func (b forkBackend) Clear() (Backend, []engine.Event, error) { return nil, nil, errors.New("no") }
func (b forkBackend) Export(string, string) (string, error)   { return "", errors.New("no") }
func (b forkBackend) Trust() (string, error)                  { return "", errors.New("no") }
func (b forkBackend) ModelName() string                       { return "offline" }

type forkedBackend struct{ textBackend }

func (forkedBackend) SessionID() string { return "0mx2forked01" }

// TestForkKey: f, then enter, on a Timeline row forks the session at that
// row's step (as /fork STEP) and opens the fork; with no rows it says so.
func TestForkKey(t *testing.T) {
	var forked []int
	m := New(Config{Model: "offline", Style: "notty", Backend: forkBackend{forked: &forked}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	press(m, "tab", "tab", "f", "enter")
	if len(forked) != 0 || !strings.Contains(m.note, "no step") {
		t.Errorf("f on an empty Timeline: forked %v, note %q", forked, m.note)
	}
	for _, ev := range workflowEvents(t, "workflow.jsonl") {
		m.Update(engineEventMsg{ev})
	}
	press(m, "up", "up", "up") // from ■ answered: the rows of step 6, then step 5's observe row
	r, _ := m.tl.selected()
	if _, cmd := m.Update(keyNamed("f")); noClock(cmd) != nil || !strings.Contains(m.note, "enter forks") {
		t.Fatalf("f: a command %v, note %q; want it to ask for enter", cmd != nil, m.note)
	}
	_, cmd := m.Update(keyNamed("enter"))
	if cmd == nil {
		t.Fatal("f, enter did nothing")
	}
	m.Update(cmd())
	if !slices.Equal(forked, []int{r.step}) {
		t.Errorf("forked at %v, want the row's step %d", forked, r.step)
	}
	if m.backend.SessionID() != "0mx2forked01" {
		t.Errorf("the fork is not open: %s", m.backend.SessionID())
	}
	if frame := m.View(); !strings.Contains(frame, fmt.Sprintf("A fork of 0mx2text0001 at step %d.", r.step)) {
		t.Errorf("no word of the fork:\n%s", frame)
	}
}

// TestPickerShowsFork: the picker says which session a fork was forked
// from, and at which step.
func TestPickerShowsFork(t *testing.T) {
	it := pickItem{SessionInfo{ID: "0mx2fork0002", Title: "what is 2+2? (fork of 0mx2orig0001 at…", ForkOf: "0mx2orig0001", ForkStep: 3}}
	if d := it.Description(); !strings.HasPrefix(d, "fork of 0mx2orig0001 at step 3 · 0mx2fork0002") {
		t.Errorf("description %q", d)
	}
	if d := (pickItem{SessionInfo{ID: "0mx2orig0001"}}).Description(); strings.Contains(d, "fork") {
		t.Errorf("a session that is no fork: %q", d)
	}
}

// workflowBackend runs the recorded release workflow for /workflow.
type workflowBackend struct {
	textBackend
	started *[]map[string]string
	evs     []engine.Event
}

func (b workflowBackend) Compact(context.Context, string) <-chan engine.Event { return nil }
func (b workflowBackend) SetModel(string) (engine.Event, error) {
	return engine.Event{}, errors.New("no")
}
func (b workflowBackend) SetAgent(string) (engine.Event, error) {
	return engine.Event{}, errors.New("no")
}
func (b workflowBackend) Fork(int) (Backend, []engine.Event, error) {
	return nil, nil, errors.New("no")
}
func (b workflowBackend) Clear() (Backend, []engine.Event, error) { return nil, nil, errors.New("no") }
func (b workflowBackend) Export(string, string) (string, error)   { return "", errors.New("no") }
func (b workflowBackend) Trust() (string, error)                  { return "", errors.New("no") }
func (b workflowBackend) ModelName() string                       { return "offline" }

func (b workflowBackend) Workflows() ([]WorkflowInfo, error) {
	return []WorkflowInfo{{Name: "release", Description: "a product, checked", Inputs: []string{"a", "b"}},
		{Name: "review", Inputs: []string{"pr (required)"}}}, nil
}

func (b workflowBackend) PrepareWorkflow(name string, in map[string]string) (func(context.Context) <-chan engine.Event, string, error) {
	switch {
	case name == "review" && in["pr"] == "":
		return nil, "", errors.New("review.yaml:3: inputs.pr: required, and not given (--input pr=VALUE)")
	case name != "release":
		return nil, "", fmt.Errorf("no workflow is called %q; the workflows are: release, review", name)
	}
	*b.started = append(*b.started, in)
	return func(context.Context) <-chan engine.Event {
		ch := make(chan engine.Event, len(b.evs))
		for _, ev := range b.evs {
			ch <- ev
		}
		close(ch)
		return ch
	}, "", nil
}

// play runs cmd and the commands its messages return, as Bubble Tea
// would, up to the end of a run it starts (blinks and ticks left out).
func play(m *Model, cmd tea.Cmd) {
	for cmds := []tea.Cmd{cmd}; len(cmds) > 0; {
		c := cmds[0]
		cmds = cmds[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case tea.BatchMsg:
			cmds = append(cmds, msg...)
		case engineEventMsg, runClosedMsg, commandDoneMsg, workflowsListedMsg:
			_, next := m.Update(msg)
			cmds = append(cmds, next)
		}
	}
}

// TestWorkflowCommand: /workflow NAME k=v runs the workflow in the session
// as a run; an unknown workflow, a missing input or a bad argument is one
// line, and nothing runs; /workflow alone lists them; tab completes a
// workflow's name.
func TestWorkflowCommand(t *testing.T) {
	var started []map[string]string
	b := &workflowBackend{started: &started, evs: workflowEvents(t, "workflow.jsonl")}
	m := New(Config{Model: "offline", Style: "notty", Backend: b})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	play(m, listWorkflows(b)) // as Init does
	if !slices.Equal(m.wfNames, []string{"release", "review"}) {
		t.Fatalf("names for completion: %v", m.wfNames)
	}
	send := func(line string) {
		m.setInput(line)
		_, cmd := m.Update(keyNamed("enter"))
		play(m, cmd)
	}
	notes := func() []string {
		var out []string
		for _, it := range m.chat.items {
			if it.kind == itemNote {
				out = append(out, it.text)
			}
		}
		return out
	}
	for _, c := range []struct{ line, want string }{
		{"/workflow nope", `/workflow: no workflow is called "nope"`},
		{"/workflow review", "/workflow: review.yaml:3: inputs.pr: required"},
		{"/workflow release a", `/workflow release: want INPUT=VALUE, not "a".`},
		{`/workflow release a="17`, "/workflow: a quote is not closed"},
	} {
		before := len(notes())
		send(c.line)
		got := notes()
		if len(got) != before+1 || !strings.HasPrefix(got[len(got)-1], c.want) || strings.Contains(got[len(got)-1], "\n") {
			t.Errorf("%s: notes %q, want one line %q", c.line, got[before:], c.want)
		}
	}
	if len(started) != 0 || m.sess.LastRun().ID != "" {
		t.Fatalf("a bad /workflow ran: %v", started)
	}
	send("/workflow")
	if got := notes(); !strings.Contains(got[len(got)-1], "release: a product, checked (inputs: a, b)") {
		t.Errorf("/workflow lists: %q", got[len(got)-1])
	}
	m.setInput("/workflow rel")
	m.Update(keyNamed("tab"))
	if v := m.input.Value(); v != "/workflow release " {
		t.Errorf("tab completed %q", v)
	}
	send(`/workflow release a=17 b="23"`)
	if len(started) != 1 || started[0]["a"] != "17" || started[0]["b"] != "23" {
		t.Fatalf("started %v", started)
	}
	if last := m.sess.LastRun(); !last.Finished || !strings.Contains(last.Answer, "391") || m.running {
		t.Errorf("the workflow's run: %+v (running %v)", last, m.running)
	}
	if _, ok := m.tl.steps["fix"]; !ok {
		t.Error("the workflow's steps are not in the Timeline")
	}
}

// TestTypingOnTheTimelineForksNothing: words typed while the Timeline has
// the focus ("fix", "bug") go to the input whole; nothing is forked and no
// breakpoint is set.
func TestTypingOnTheTimelineForksNothing(t *testing.T) {
	var forked []int
	m := New(Config{Model: "offline", Style: "notty", Backend: forkBackend{forked: &forked}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for _, ev := range workflowEvents(t, "workflow.jsonl") {
		m.Update(engineEventMsg{ev})
	}
	press(m, "tab", "tab", "up")
	for _, r := range "fix" {
		if _, cmd := m.Update(keyNamed(string(r))); cmd != nil {
			if msg := cmd(); msg != nil {
				m.Update(msg)
			}
		}
	}
	press(m, " ", "tab", "tab", "up")
	for _, r := range "bug" {
		m.Update(keyNamed(string(r)))
	}
	press(m, "tab", "tab", "up")
	for _, r := range "ffmpeg" { // a word that begins with the letter twice
		m.Update(keyNamed(string(r)))
	}
	if v := m.input.Value(); len(forked) != 0 || !strings.HasPrefix(v, "fix") || !strings.HasSuffix(v, "bugffmpeg") || len(m.gate.Breaks()) != 0 {
		t.Errorf("typing on the Timeline: forked %v, input %q, breakpoints %v", forked, m.input.Value(), m.gate.Breaks())
	}
}
