package ui

import (
	"context"
	"encoding/json"
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
	"github.com/agentty/agentty/engine/script"
	"github.com/agentty/agentty/tools"
)

// agentStream builds a session's events by hand, as the engine emits them
// for many agents (the contract of issue 11): each event in the envelope of
// its run, sub-runs' events naming their agent, parent run and call.
type agentStream struct {
	evs []engine.Event
	at  time.Time
	cut int // the events of the scene "running": both sub-runs mid-way
}

// agentRun is one run of the stream: the top-level run, or a sub-run.
type agentRun struct {
	s                        *agentStream
	run, agent, parent, call string
}

func (s *agentStream) top(run, agent string) agentRun {
	return agentRun{s: s, run: run, agent: agent}
}

// sub is the sub-run that r's call id starts in step: its id is r's, the
// step's and the call's, joined by "/" (as the engine makes it).
func (r agentRun) sub(step int, call, agent string) agentRun {
	return agentRun{s: r.s, run: fmt.Sprintf("%s/%d/%s", r.run, step, call), agent: agent, parent: r.run, call: call}
}

// e appends an event of r's run, its kind and phase taken from data.
func (r agentRun) e(step int, data any) agentRun {
	kind, phase := eventKind(data)
	r.s.at = r.s.at.Add(10 * time.Millisecond)
	r.s.evs = append(r.s.evs, engine.Event{V: engine.SchemaVersion, Session: "0mx2agents01", Run: r.run, Agent: r.agent,
		ParentRun: r.parent, ParentCall: r.call, Step: step, Phase: phase, Kind: kind, Time: r.s.at, Data: data})
	return r
}

func eventKind(data any) (engine.Kind, engine.Phase) {
	switch d := data.(type) {
	case *engine.RunStarted:
		return engine.KindRunStarted, ""
	case *engine.StepStarted:
		return engine.KindStepStarted, engine.Perceive
	case *engine.ModelRequest:
		return engine.KindModelRequest, engine.Perceive
	case *engine.Decided:
		return engine.KindDecision, engine.Decide
	case *engine.UsageRecorded:
		return engine.KindUsage, engine.Decide
	case *engine.ToolStarted:
		return engine.KindToolStarted, engine.Act
	case *engine.ToolFinished:
		return engine.KindToolFinished, engine.Act
	case *engine.MemoryChanged:
		return engine.KindMemoryChanged, engine.Act
	case *engine.StepFinished:
		return engine.KindStepFinished, engine.Observe
	case *engine.Handoff:
		return engine.KindHandoff, engine.Observe
	case *engine.GatePaused:
		return engine.KindGatePaused, d.At
	case *engine.GateResumed:
		return engine.KindGateResumed, ""
	case *engine.RunFinished:
		return engine.KindRunFinished, ""
	}
	panic(fmt.Sprintf("no kind for %T", data))
}

func call(id, name, args string) engine.ToolCall {
	return engine.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

func started(i int, c engine.ToolCall) *engine.ToolStarted {
	return &engine.ToolStarted{Index: i, ID: c.ID, Name: c.Name, Args: c.Args}
}

func finished(i int, c engine.ToolCall, status engine.ToolStatus, result string) *engine.ToolFinished {
	return &engine.ToolFinished{Index: i, ID: c.ID, Name: c.Name, Status: status, Result: result, DurationMS: 40, Attempts: 1}
}

// parallelAgents is a session whose lead agent delegates to two agents in
// one decision; their sub-runs run in parallel, their events interleaved,
// their steps numbered from the session's counter (2, 4 and 3, 5), and one
// of them writes memory.
func parallelAgents() *agentStream {
	s := &agentStream{at: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	lead := s.top("run-1", "lead")
	goCall := call("call_1_0", "agent", `{"agent":"researcher","task":"Find how Go reports errors, with the sources for each claim"}`)
	rustCall := call("call_1_1", "agent", `{"agent":"critic","task":"Check what Rust's Result type gives a caller that Go's errors do not"}`)
	lead.e(0, &engine.RunStarted{Task: "Compare error handling in Go and Rust", Model: "script", MaxSteps: 25}).
		e(1, &engine.StepStarted{Turn: 0}).
		e(1, &engine.ModelRequest{Messages: 1, Tools: 3, Tokens: 400, Budget: 64000}).
		e(1, &engine.Decided{ToolCalls: []engine.ToolCall{goCall, rustCall}, Attempts: 1}).
		e(1, &engine.UsageRecorded{Usage: engine.Usage{PromptTokens: 400, CompletionTokens: 40}, SessionPrompt: 400, SessionCompletion: 40}).
		e(1, started(0, goCall)).
		e(1, started(1, rustCall))
	res := lead.sub(1, "call_1_0", "researcher")
	crit := lead.sub(1, "call_1_1", "critic")
	search := call("call_2_0", "search", `{"query":"go errors are values"}`)
	read := call("call_3_0", "read_file", `{"path":"notes/rust.md"}`)
	calc := call("call_3_1", "calculator", `{"expression":"2*21"}`)
	res.e(1, &engine.RunStarted{Task: "Find how Go reports errors, with the sources for each claim", MaxSteps: 10})
	crit.e(1, &engine.RunStarted{Task: "Check what Rust's Result type gives a caller that Go's errors do not", MaxSteps: 10})
	res.e(2, &engine.StepStarted{Turn: 0})
	crit.e(3, &engine.StepStarted{Turn: 0})
	res.e(2, &engine.ModelRequest{Messages: 1, Tools: 2, Tokens: 200, Budget: 64000})
	crit.e(3, &engine.ModelRequest{Messages: 1, Tools: 2, Tokens: 210, Budget: 64000})
	res.e(2, &engine.Decided{ToolCalls: []engine.ToolCall{search}, Attempts: 1})
	crit.e(3, &engine.Decided{ToolCalls: []engine.ToolCall{read, calc}, Attempts: 1})
	res.e(2, started(0, search))
	crit.e(3, started(0, read)).e(3, started(1, calc))
	crit.e(3, finished(0, read, engine.ToolOK, "Result<T, E> must be handled: the compiler says so.")).
		e(3, finished(1, calc, engine.ToolOK, "42"))
	res.e(2, finished(0, search, engine.ToolOK, "Go: errors are values (go.dev/blog/errors-are-values)")).
		e(2, &engine.MemoryChanged{Op: engine.MemorySet, Key: "go_errors", Value: "values, checked with if err != nil", Source: "tool"}).
		e(2, &engine.StepFinished{ToolCalls: 1})
	crit.e(3, &engine.StepFinished{ToolCalls: 2})
	res.e(4, &engine.StepStarted{Turn: 1})
	crit.e(5, &engine.StepStarted{Turn: 1})
	res.e(4, &engine.ModelRequest{Messages: 3, Tools: 2, Tokens: 260, Budget: 64000})
	s.cut = len(s.evs)
	crit.e(5, &engine.ModelRequest{Messages: 4, Tools: 2, Tokens: 300, Budget: 64000})
	res.e(4, &engine.Decided{Text: "Go returns errors as values; callers check them with if err != nil.", Attempts: 1}).
		e(4, &engine.RunFinished{StopReason: engine.StopAnswered, Answer: "Go returns errors as values; callers check them with if err != nil.", Steps: 2})
	crit.e(5, &engine.Decided{Text: "Rust's Result forces the caller to handle the error; ? passes it on.", Attempts: 1}).
		e(5, &engine.RunFinished{StopReason: engine.StopAnswered, Answer: "Rust's Result forces the caller to handle the error; ? passes it on.", Steps: 2})
	lead.e(1, finished(1, rustCall, engine.ToolOK, "Rust's Result forces the caller to handle the error; ? passes it on.")).
		e(1, finished(0, goCall, engine.ToolOK, "Go returns errors as values; callers check them with if err != nil.")).
		e(1, &engine.StepFinished{ToolCalls: 2}).
		e(6, &engine.StepStarted{Turn: 1}).
		e(6, &engine.ModelRequest{Messages: 4, Tools: 3, Tokens: 700, Budget: 64000}).
		e(6, &engine.Decided{Text: "Go makes errors values you check; Rust's Result makes the check a type.", Attempts: 1}).
		e(6, &engine.RunFinished{StopReason: engine.StopAnswered, Answer: "Go makes errors values you check; Rust's Result makes the check a type.", Steps: 2})
	return s
}

// agentConsole is a console fed the events, at w×h.
func agentConsole(t *testing.T, evs []engine.Event, w, h int) *Model {
	t.Helper()
	m := New(Config{Model: "script", Style: "notty", Backend: textBackend{}})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for _, ev := range evs {
		m.Update(engineEventMsg{ev})
	}
	return m
}

func press(m *Model, keys ...string) {
	for _, k := range keys {
		m.Update(keyNamed(k))
	}
}

// TestAgentFrames: the Timeline with two parallel sub-runs, while they run
// (unfolded), once done (folded), unfolded again with the fold key; the
// Chat's delegation lines collapsed and expanded (ctrl+x).
func TestAgentFrames(t *testing.T) {
	s := parallelAgents()
	timeline := []string{"tab", "tab"}
	scenes := []struct {
		name string
		evs  []engine.Event
		keys []string
	}{
		{"running", s.evs[:s.cut], timeline},
		{"folded", s.evs, timeline},
		// From the last row (■): the critic's call row is 4 up, the
		// researcher's 5 (they are folded); each is unfolded.
		{"unfolded", s.evs, append(slices.Clone(timeline), "up", "up", "up", "up", " ", "up", "z")},
		{"chat", s.evs, nil},
		{"chat-expanded", s.evs, []string{"ctrl+x"}},
	}
	for _, sz := range []struct{ w, h int }{{120, 40}, {80, 24}} {
		for _, sc := range scenes {
			t.Run(fmt.Sprintf("%s-%dx%d", sc.name, sz.w, sz.h), func(t *testing.T) {
				m := agentConsole(t, sc.evs, sz.w, sz.h)
				press(m, sc.keys...)
				frame := m.View()
				checkFrame(t, frame, sz.w, sz.h)
				golden.RequireEqual(t, []byte(frame)) // go test ./ui -run TestAgentFrames -update rewrites testdata
			})
		}
	}
}

// shownRows returns the Timeline's rows as shown (folded ones left out):
// run, depth and text, one string each.
func shownRows(m *Model) []string {
	var out []string
	for _, i := range m.tl.shown() {
		r := m.tl.rows[i]
		out = append(out, fmt.Sprintf("%s%s %d %s %s", strings.Repeat(">", r.depth), r.run, r.step, r.phase, m.tl.label(i)))
	}
	return out
}

// TestTimelineTree: rows of two sub-runs that come interleaved are shown
// each under its own call row, in the order they came within the sub-run;
// a done sub-run folds into its call row, which sums it up; the fold key
// unfolds it, on the call row or any row under it.
func TestTimelineTree(t *testing.T) {
	s := parallelAgents()
	m := agentConsole(t, s.evs[:s.cut], 160, 60)
	want := []string{
		"run-1 0  ▶ Compare error handling in Go and Rust",
		"run-1 1 perceive 1 msg, 400 tok",
		"run-1 1 decide call agent, agent",
		"run-1 1 act ▾ agent researcher",
		">run-1/1/call_1_0 1  ▶ Find how Go reports errors, with the sources for each claim",
		">run-1/1/call_1_0 2 perceive 1 msg, 200 tok",
		">run-1/1/call_1_0 2 decide call search",
		">run-1/1/call_1_0 2 act search",
		">run-1/1/call_1_0 2 observe 1 result",
		">run-1/1/call_1_0 4 perceive 3 msgs, 260 tok",
		">run-1/1/call_1_0 4 decide thinking",
		"run-1 1 act ▾ agent critic",
		">run-1/1/call_1_1 1  ▶ Check what Rust's Result type gives a caller that Go's erro…",
		">run-1/1/call_1_1 3 perceive 1 msg, 210 tok",
		">run-1/1/call_1_1 3 decide call read_file, calculator",
		">run-1/1/call_1_1 3 act read_file",
		">run-1/1/call_1_1 3 act calculator",
		">run-1/1/call_1_1 3 observe 2 results",
		">run-1/1/call_1_1 5 perceive ",
	}
	if got := shownRows(m); !slices.Equal(got, want) {
		t.Errorf("while the sub-runs run, the Timeline shows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, ev := range s.evs[s.cut:] {
		m.Update(engineEventMsg{ev})
	}
	want = []string{
		"run-1 0  ▶ Compare error handling in Go and Rust",
		"run-1 1 perceive 1 msg, 400 tok",
		"run-1 1 decide call agent, agent",
		"run-1 1 act ▸ agent researcher  2 steps, 1 tool",
		"run-1 1 act ▸ agent critic  2 steps, 2 tools",
		"run-1 1 observe 2 results",
		"run-1 6 perceive 4 msgs, 700 tok",
		"run-1 6 decide answer",
		"run-1 6  ■ answered",
	}
	if got := shownRows(m); !slices.Equal(got, want) {
		t.Errorf("once done, the Timeline shows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Unfold the critic, go down into its rows, fold it from there.
	m.Update(keyNamed("tab"))
	m.Update(keyNamed("tab"))
	press(m, "up", "up", "up", "up", "z")
	if got := m.tl.rows[m.tl.sel]; got.agent != "critic" || got.folded {
		t.Fatalf("z on the critic's row: the cursor is on %q, folded %v", m.tl.label(m.tl.sel), got.folded)
	}
	press(m, "down", "down")
	if got := m.tl.rows[m.tl.sel]; got.run != "run-1/1/call_1_1" {
		t.Fatalf("down twice from the critic's call row: on %q of %s, want a row of its sub-run", got.text, got.run)
	}
	press(m, " ")
	if got := m.tl.rows[m.tl.sel]; got.agent != "critic" || !got.folded || len(shownRows(m)) != len(want) {
		t.Errorf("space on a sub-run's row folds its call row and puts the cursor there: on %q, %d rows shown", m.tl.label(m.tl.sel), len(shownRows(m)))
	}
	// Enter on an agent call row opens its step's details, as on any row.
	press(m, "enter")
	if m.detail == nil || !strings.Contains(strings.Join(m.detail.lines, "\n"), "Step 1 of run-1 (agent lead)") {
		t.Errorf("enter on the call row: details %v", m.detail)
	}
	// And on a sub-run's row, that step's, which names the agent.
	press(m, "esc", "z", "down", "down", "enter")
	if m.detail == nil || !strings.Contains(strings.Join(m.detail.lines, "\n"), "Step 3 of run-1/1/call_1_1 (agent critic)") {
		t.Errorf("enter on the critic's perceive row: details %v", m.detail)
	}
}

// TestDelegationChat: a delegation is one line that sums up its sub-run;
// the sub-run's answer is not a message of the chat's own, its end is not
// the run's end; expanded, the line shows the sub-run's tool calls and
// answer, indented.
func TestDelegationChat(t *testing.T) {
	s := parallelAgents()
	m := agentConsole(t, s.evs[:s.cut+3], 160, 60) // the researcher has answered, the critic not
	if m.state == "idle" {
		t.Error("a sub-run's run_finished ended the console's run: state idle")
	}
	var lines []string
	for _, it := range m.chat.items {
		if it.kind == itemAssistant && strings.Contains(it.text, "Go returns errors as values") {
			t.Errorf("the researcher's answer is a message of the chat's own: %q", it.text)
		}
		if it.kind == itemTool {
			lines = append(lines, strings.Join(strings.Fields(delegationLines(it, 150, false)[0]), " "))
		}
	}
	want := []string{
		"⚙ agent researcher: Find how Go reports errors, with the sources for each claim → 2 steps, 1 tool …",
		"⚙ agent critic: Check what Rust's Result type gives a caller that Go's errors do not → 2 steps, 2 tools …",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("delegation lines:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, ev := range s.evs[s.cut+3:] {
		m.Update(engineEventMsg{ev})
	}
	if m.state != "idle" {
		t.Errorf("after the top-level run_finished: state %q, want idle", m.state)
	}
	var answers []string
	for _, it := range m.chat.items {
		if it.kind == itemAssistant {
			answers = append(answers, it.text)
		}
	}
	if want := []string{"Go makes errors values you check; Rust's Result makes the check a type."}; !slices.Equal(answers, want) {
		t.Errorf("the chat's answers: %q, want %q", answers, want)
	}
	researcher := m.chat.items[1]
	got := delegationLines(researcher, 60, true)
	for i := range got {
		got[i] = strings.TrimRight(got[i], " ")
	}
	want = []string{
		"⚙ agent researcher: Find how Go report…  → 2 steps, 1 tool ✓",
		`  ⚙ search query="go errors are values" → 53 B ✓`,
		"  answer:",
		"    Go returns errors as values; callers check them with if",
		"    err != nil.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("the researcher's delegation, expanded:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAgentsElsewhere: the status line names the active agent (a handoff
// changes it, and the chat says so), the Memory pane the agent that wrote
// a fact, and the pause bar the agent that waits.
func TestAgentsElsewhere(t *testing.T) {
	s := parallelAgents()
	m := agentConsole(t, s.evs, 160, 40)
	if frame := m.View(); !strings.Contains(frame, "agent lead") {
		t.Errorf("the status line does not name the agent lead:\n%s", frame)
	}
	if frame := m.View(); !strings.Contains(frame, "· researcher @2") {
		t.Errorf("the Memory pane does not say the researcher wrote go_errors:\n%s", frame)
	}
	lead := s.top("run-2", "lead")
	transfer := call("call_7_0", "transfer_to_billing", `{}`)
	n := len(s.evs)
	lead.e(0, &engine.RunStarted{Task: "I was charged twice"}).e(7, &engine.StepStarted{}).
		e(7, &engine.Decided{ToolCalls: []engine.ToolCall{transfer}}).e(7, started(0, transfer)).
		e(7, finished(0, transfer, engine.ToolOK, "transferred to billing")).e(7, &engine.StepFinished{ToolCalls: 1}).
		e(7, &engine.Handoff{From: "lead", To: "billing", Call: "call_7_0"})
	for _, ev := range s.evs[n:] {
		m.Update(engineEventMsg{ev})
	}
	frame := m.View()
	if !strings.Contains(frame, "agent billing") || !strings.Contains(frame, "⇄ handed off to billing") {
		t.Errorf("after the handoff, the status line and the chat:\n%s", frame)
	}

	// Two sub-runs pause at once: the pause bar names the first one's
	// agent, then, once answered, the second's.
	first := gateRequest{pending: engine.Pending{Run: "run-2/9/call_8_0", ParentRun: "run-2", Agent: "researcher", Step: 9, At: engine.Decide},
		reply: make(chan engine.Verdict, 1)}
	second := gateRequest{pending: engine.Pending{Run: "run-2/9/call_8_1", ParentRun: "run-2", Agent: "critic\x1b]0;x\x07", Step: 10, At: engine.Decide},
		reply: make(chan engine.Verdict, 1)}
	m.Update(gateMsg{first})
	m.Update(gateMsg{second})
	frame = m.View()
	checkFrame(t, frame, 160, 40)
	if !strings.Contains(frame, "Paused before deciding (step 9) · agent researcher") {
		t.Errorf("the pause bar does not name the researcher:\n%s", frame)
	}
	press(m, "enter")
	if v := <-first.reply; v.Action != engine.Proceed {
		t.Errorf("the first pause got %v", v)
	}
	frame = m.View()
	checkFrame(t, frame, 160, 40)
	if !strings.Contains(frame, "(step 10) · agent critic") {
		t.Errorf("the second pause is not shown after the first is answered:\n%s", frame)
	}
	press(m, "esc")
	if v := <-second.reply; v.Action != engine.Abort {
		t.Errorf("the second pause got %v", v)
	}
	if m.pause != nil {
		t.Errorf("a pause is left: %+v", m.pause.pending)
	}
}

// TestReleaseCoversSubRuns: c at a pause lets the top-level run and its
// sub-runs go on without step pauses, and no other run.
func TestReleaseCoversSubRuns(t *testing.T) {
	g := NewGate(true)
	g.Release("run-3")
	for run, stop := range map[string]bool{"run-3": false, "run-3/1/call_1_0": false, "run-3/1/call_1_0/4/call_4_1": false, "run-30": true, "run-4/1/call_1_0": true} {
		if got := g.Stop(engine.Pending{Run: run}); got != stop {
			t.Errorf("released run-3: Stop(%s) = %v, want %v", run, got, stop)
		}
	}
	// c pressed at a sub-run's pause releases the whole run.
	m := agentConsole(t, parallelAgents().evs[:10], 120, 40)
	m.gate.SetStep(true)
	req := gateRequest{pending: engine.Pending{Run: "run-1/1/call_1_1", ParentRun: "run-1", Agent: "critic", At: engine.Decide}, reply: make(chan engine.Verdict, 1)}
	m.Update(gateMsg{req})
	press(m, "c")
	<-req.reply
	if m.gate.Stop(engine.Pending{Run: "run-1/1/call_1_0"}) || m.gate.Stop(engine.Pending{Run: "run-1"}) {
		t.Error("c at the critic's pause did not release the run and its other sub-run")
	}
}

// TestAgentsJournal: testdata/journals/agents.jsonl, which FuzzConsole
// plays, is the parallelAgents session as the journal writes it
// (AGENTTY_WRITE_SEEDS=1 rewrites it).
func TestAgentsJournal(t *testing.T) {
	var b []byte
	for _, ev := range parallelAgents().evs {
		var err error
		if b, err = ev.AppendJSON(b); err != nil {
			t.Fatal(err)
		}
		b = append(b, '\n')
	}
	path := filepath.Join("testdata", "journals", "agents.jsonl")
	if os.Getenv("AGENTTY_WRITE_SEEDS") != "" {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(b) {
		t.Errorf("%s is not the parallelAgents session: AGENTTY_WRITE_SEEDS=1 go test -run TestAgentsJournal ./ui rewrites it", path)
	}
	evs, s, err := readJournal(got, path, "0mx2agents01")
	if err != nil || len(evs) != len(parallelAgents().evs) {
		t.Fatalf("%s reads back %d events: %v", path, len(evs), err)
	}
	if sub, ok := s.SubRun("run-1/1/call_1_1"); !ok || !sub.LastRun().Finished {
		t.Errorf("the critic's sub-run does not replay: %v", ok)
	}
}

// scripted is a script model (engine/script) of the turns given as JSON.
func scripted(t *testing.T, name, turns string) engine.Model {
	t.Helper()
	m, err := script.Parse(name, []byte(`{"turns":`+turns+`}`))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// agentEngine is the real engine with two agents that each use the
// calculator, and a lead model that delegates to both in one decision.
func agentEngine(t *testing.T, gate engine.Gate) *engine.Engine {
	t.Helper()
	reg, err := engine.NewRegistry(tools.Builtins()...)
	if err != nil {
		t.Fatal(err)
	}
	sub := func(expr string) engine.Model {
		return scripted(t, "sub", `[{"tool_calls":[{"name":"calculator","arguments":{"expression":"`+expr+`"}}]},{"answer":"it is `+expr+`"}]`)
	}
	e := engine.New(engine.Config{Gate: gate, Tools: reg, ModelName: "script",
		Model: scripted(t, "lead", `[{"tool_calls":[{"id":"c1","name":"agent","arguments":{"agent":"adder","task":"add 2 and 3"}},
			{"id":"c2","name":"agent","arguments":{"agent":"doubler","task":"double 21"}}]},{"answer":"both done"}]`),
		Agents: []engine.Agent{
			{Name: "adder", Description: "adds", Model: sub("2+3"), MaxSteps: 5},
			{Name: "doubler", Description: "doubles", Model: sub("2*21"), MaxSteps: 5},
		}})
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestRealEngineAgents: the engine's own events of two parallel sub-runs
// make the tree in the Timeline (every sub-run row under the call that
// started it) and two delegation lines in the Chat, whose answers are not
// the chat's own.
func TestRealEngineAgents(t *testing.T) {
	e := agentEngine(t, nil)
	var evs []engine.Event
	for ev := range e.Start(context.Background(), engine.NewSession("0mx2agents02"), "add and double", nil) {
		evs = append(evs, ev)
	}
	m := agentConsole(t, evs, 160, 60)
	subs := 0
	for i, r := range m.tl.rows {
		if r.run == "run-1" {
			continue
		}
		subs++
		p := r.parent
		for p >= 0 && m.tl.rows[p].depth >= r.depth {
			p = m.tl.rows[p].parent
		}
		if p < 0 || m.tl.rows[p].agent == "" || !strings.HasPrefix(r.run, m.tl.rows[p].run+"/") || !strings.HasSuffix(r.run, "/"+m.tl.rows[p].call.id) {
			t.Errorf("row %d (%s %q) is not under the call that started its run", i, r.run, r.text)
		}
	}
	if subs == 0 {
		t.Fatal("no sub-run rows: the engine ran no sub-run")
	}
	want := []string{"⚙ agent adder: add 2 and 3 → 2 steps, 1 tool ✓", "⚙ agent doubler: double 21 → 2 steps, 1 tool ✓"}
	var got, answers []string
	for _, it := range m.chat.items {
		switch it.kind {
		case itemTool:
			got = append(got, strings.Join(strings.Fields(delegationLines(it, 150, false)[0]), " "))
		case itemAssistant:
			answers = append(answers, it.text)
		}
	}
	if !slices.Equal(got, want) || !slices.Equal(answers, []string{"both done"}) {
		t.Errorf("the chat: delegations %q, answers %q; want %q and the lead's answer only", got, answers, want)
	}
	if m.state != "idle" {
		t.Errorf("state %q after the run", m.state)
	}
}

// TestRealEngineSubRunPauses: in step mode the engine's sub-runs pause at
// the console's gate; each pause reaches the pause bar naming its agent
// (one at a time, the others queued), enter answers it, and the run ends.
func TestRealEngineSubRunPauses(t *testing.T) {
	m := New(Config{Model: "script", Style: "notty", Backend: textBackend{}, Gate: NewGate(true)})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	e := agentEngine(t, m.gate)
	events := e.Start(context.Background(), engine.NewSession("0mx2agents03"), "add and double", nil)
	msgs := make(chan tea.Msg)
	listen := func(cmd tea.Cmd) {
		go func() { msgs <- cmd() }()
	}
	listen(waitForGate(m.gate))
	listen(waitForEvent(events))
	agents := map[string]int{}
	for done := false; !done; {
		switch msg := (<-msgs).(type) {
		case engineEventMsg:
			m.Update(msg)
			listen(waitForEvent(events))
		case runClosedMsg:
			done = true
		case gateMsg:
			_, cmd := m.Update(msg)
			listen(cmd) // the gate's next pause
		}
		for m.pause != nil {
			bar := strings.Join(m.pause.bar(160, true, 10), "\n")
			checkSafe(t, bar)
			if a := m.pause.pending.Agent; a != "" {
				agents[a]++
				if !strings.Contains(bar, "· agent "+a) {
					t.Errorf("the pause bar does not name the agent %s:\n%s", a, bar)
				}
			}
			m.Update(keyNamed("enter"))
		}
	}
	if agents["adder"] == 0 || agents["doubler"] == 0 {
		t.Errorf("pauses by agent: %v, want some of each sub-run", agents)
	}
	if last := m.sess.LastRun(); !last.Finished || last.Stop != engine.StopAnswered || last.Answer != "both done" {
		t.Errorf("the run: %+v", last)
	}
}

// TestTimelineKeepsAnEditedRequest: a decision asked with a request the
// person edited says so on its row once it has come, not only while it
// is awaited; one that was not edited does not.
func TestTimelineKeepsAnEditedRequest(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	ev := func(step int, phase engine.Phase, kind engine.Kind, data any) engine.Event {
		return engine.Event{V: engine.SchemaVersion, Session: "s", Run: "run-1", Step: step, Phase: phase, Kind: kind, Time: at, Data: data}
	}
	note := "be brief"
	evs := []engine.Event{
		ev(0, "", engine.KindRunStarted, &engine.RunStarted{Task: "go"}),
		ev(1, engine.Perceive, engine.KindStepStarted, &engine.StepStarted{}),
		ev(1, engine.Perceive, engine.KindModelRequest, &engine.ModelRequest{Messages: 1, Tokens: 40}),
		ev(1, engine.Decide, engine.KindRequestEdited, &engine.RequestEdited{RequestEdit: engine.RequestEdit{Note: note}, Tokens: 44}),
		ev(1, engine.Decide, engine.KindDecision, &engine.Decided{ToolCalls: []engine.ToolCall{{ID: "c1", Name: "calculator", Args: []byte(`{"expression":"1+1"}`)}}}),
		ev(2, engine.Perceive, engine.KindStepStarted, &engine.StepStarted{}),
		ev(2, engine.Perceive, engine.KindModelRequest, &engine.ModelRequest{Messages: 3, Tokens: 60}),
		ev(2, engine.Decide, engine.KindDecision, &engine.Decided{Text: "2"}),
	}
	rows := shownRows(agentConsole(t, evs, 160, 40))
	if !slices.Contains(rows, "run-1 1 decide call calculator · edited") || !slices.Contains(rows, "run-1 2 decide answer") {
		t.Errorf("the Timeline shows\n%s", strings.Join(rows, "\n"))
	}
}

// TestJudgeFoldsInTheTimeline: a guardrail's judge, a sub-run that no tool
// call started, hangs under a row of its own among the judged run's rows,
// named for the judge, and folds when it has judged: its own calls are
// there, under it.
func TestJudgeFoldsInTheTimeline(t *testing.T) {
	reg, err := engine.NewRegistry(tools.Builtins()...)
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Config{Tools: reg, ModelName: "script", Agent: "worker",
		Model: scripted(t, "worker", `[{"answer":"done"}]`),
		Agents: []engine.Agent{
			{Name: "worker", Description: "works", Guardrails: engine.Guardrails{Input: []engine.Guardrail{{Name: "sane", Agent: "judge"}}}},
			{Name: "judge", Description: "judges", Model: scripted(t, "judge", `[{"tool_calls":[{"name":"calculator","arguments":{"expression":"1+1"}}]},{"answer":"pass"}]`)},
		}})
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	var evs []engine.Event
	for ev := range e.Start(context.Background(), engine.NewSession("0mx2judge001"), "add things", nil) {
		evs = append(evs, ev)
	}
	m := agentConsole(t, evs, 160, 40)
	judge := -1
	for i, r := range m.tl.rows {
		if r.judge {
			judge = i
		}
	}
	if judge < 0 {
		t.Fatal("no row of the judge")
	}
	under := 0
	for _, r := range m.tl.rows {
		if strings.Contains(r.run, "/guard_in_0") {
			under++
			if r.parent != judge {
				t.Errorf("the judge's row %q hangs under %d, not the judge's row %d", r.text, r.parent, judge)
			}
		}
	}
	r := m.tl.rows[judge]
	if under == 0 || !r.folded || r.status != "ok" || !strings.HasPrefix(m.tl.label(judge), "▸ judge judge  2 steps, 1 tool") {
		t.Errorf("the judge's row: %q folded %v status %q, %d rows under it", m.tl.label(judge), r.folded, r.status, under)
	}
	if v := m.View(); !strings.Contains(v, "⚖ ▸ judge judge  2 steps, 1 tool") {
		t.Errorf("the Timeline does not show the judge:\n%s", v)
	}
}
