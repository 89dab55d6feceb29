package sessions_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/engine/script"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/tools"
)

// TestSubRunsInTheJournal journals a run that delegates to two agents at
// once and checks what the store makes of it: the replayed session and
// sub-runs, the meta (one run, the top-level run's model), the timeline
// (every step where it belongs, though parallel sub-runs interleave), the
// Markdown export (the sub-runs quoted, naming their agents), and a fork in
// the middle of a sub-run that continues without running anything twice.
func TestSubRunsInTheJournal(t *testing.T) {
	store, _ := sessions.Open(t.TempDir())
	top, err := scriptModel(`{"tool_calls":[{"name":"agent","arguments":{"agent":"calc","task":"what is 6*7?"}},{"name":"agent","arguments":{"agent":"keeper","task":"remember that the colour is teal"}}]},{"answer":"all done"}`)
	if err != nil {
		t.Fatal(err)
	}
	calc, _ := scriptModel(`{"tool_calls":[{"name":"calculator","arguments":{"expression":"6*7"}}]},{"answer":"42"}`)
	keeper, _ := scriptModel(`{"tool_calls":[{"name":"remember","arguments":{"key":"colour","value":"teal"}}]},{"answer":"noted"}`)
	cfg := engine.Config{Model: top, ModelName: "script", Tools: enginetest.Registry(t, tools.Builtins()...), Agents: []engine.Agent{
		{Name: "calc", Description: "arithmetic", Model: calc, ModelName: "script-calc"},
		{Name: "keeper", Description: "memory", Model: keeper},
	}}
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	live := engine.NewSession(j.ID)
	if res := engine.New(cfg).Run(context.Background(), live, "sum and remember", j); res.StopReason != engine.StopAnswered || res.Answer != "all done" {
		t.Fatalf("run: %+v", res)
	}
	j.Close()
	l, err := store.Load(j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m := l.Meta; m.Runs != 1 || m.Model != "script" || m.Interrupted || m.Title != "sum and remember" {
		t.Errorf("meta %+v", m)
	}
	if !reflect.DeepEqual(l.Session.History, live.History) || !reflect.DeepEqual(l.Session.Memory(), live.Memory()) {
		t.Errorf("replayed session differs")
	}
	if f := l.Session.Memory(); len(f) != 1 || f[0].Agent != "keeper" {
		t.Errorf("memory %+v", f)
	}
	steps := sessions.Timeline(l.Events)
	got := map[string]string{}
	for _, s := range steps {
		var tl []string
		for _, x := range s.Tools {
			tl = append(tl, x.Name+"="+string(x.Status))
		}
		got[s.Run+" "+s.Agent] += s.Decision + " [" + strings.Join(tl, ",") + "] " + s.Status + ";"
	}
	want := map[string]string{
		"run-1 ":                  "call agent, agent [agent=ok,agent=ok] ok;answer: all done [] ok;",
		"run-1/1/call_0_0 calc":   "call calculator [calculator=ok] ok;answer: 42 [] ok;",
		"run-1/1/call_0_1 keeper": "call remember [remember=ok] ok;answer: noted [] ok;",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("timeline:\n got %q\nwant %q", got, want)
	}
	md := sessions.Markdown(l)
	for _, w := range []string{"> **calc** was asked (`run-1/1/call_0_0`): what is 6*7?", "> **keeper** answered: noted", "## agentty\n\nall done"} {
		if !strings.Contains(md, w) {
			t.Errorf("markdown has no %q:\n%s", w, md)
		}
	}
	if strings.Count(md, "## You") != 1 {
		t.Errorf("a sub-run's task is shown as the person's:\n%s", md)
	}
	// A fork in the middle of the sub-runs, just after the first of their
	// tool calls finished (a fork keeps the journal up to the first event
	// of a later step): continuing it finishes them without running a
	// finished call again.
	first := 0
	for _, ev := range l.Events {
		first = max(first, ev.Step)
		if ev.ParentRun != "" && ev.Kind == engine.KindToolFinished {
			break
		}
	}
	fork, err := store.Fork(j.ID, first)
	if err != nil {
		t.Fatal(err)
	}
	fj, fl, err := store.OpenWriter(fork)
	if err != nil {
		t.Fatal(err)
	}
	if !fl.Session.Interrupted() {
		t.Fatalf("the fork at step %d is not interrupted", first)
	}
	done := map[string]bool{}
	for _, ev := range fl.Events {
		if d, ok := ev.Data.(*engine.ToolFinished); ok {
			done[ev.Run+" "+d.ID] = true
		}
	}
	if len(done) == 0 {
		t.Fatalf("the fork at step %d has no finished tool call", first)
	}
	rec := &enginetest.Recorder{}
	res := engine.New(cfg).Continue(context.Background(), fl.Session, engine.Sinks{fj, rec})
	fj.Close()
	if res.StopReason != engine.StopAnswered || res.Answer != "all done" {
		t.Fatalf("continued fork: %+v", res)
	}
	for _, ev := range rec.Of(engine.KindToolStarted) {
		if d := ev.Data.(*engine.ToolStarted); done[ev.Run+" "+d.ID] {
			b, _ := json.Marshal(ev)
			t.Errorf("a finished tool call ran again in the continued fork: %s", b)
		}
	}
	fl2, err := store.Load(fork)
	if err != nil || fl2.Session.Interrupted() || len(fl2.Session.Memory()) != 1 {
		t.Errorf("the continued fork: %v, interrupted %v, memory %v", err, fl2.Session.Interrupted(), fl2.Session.Memory())
	}
}

func scriptModel(turns string) (engine.Model, error) {
	return script.Parse("test", []byte(`{"turns":[`+turns+`]}`))
}

// TestExportSubRunLoadsNothing: a sub-run's tool result is exported as a
// top-level one is (a code span: an image, raw HTML, a terminal escape or
// backticks in it load and run nothing), not written raw.
func TestExportSubRunLoadsNothing(t *testing.T) {
	const hostile = "\x1b]8;;http://127.0.0.1:9/osc\x07link\x1b]8;;\x07 ![i](http://127.0.0.1:9/sub.png) <img src=http://127.0.0.1:9/html.png> `tick`"
	echo := engine.Tool{Name: "echo", Func: func(context.Context, *engine.Call) (string, error) { return hostile, nil }}
	top, err := scriptModel(`{"tool_calls":[{"name":"echo","arguments":{}}]},
		{"tool_calls":[{"name":"agent","arguments":{"agent":"echoer","task":"echo it"}}]},{"answer":"done"}`)
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := scriptModel(`{"tool_calls":[{"name":"echo","arguments":{}}]},{"answer":"echoed"}`)
	store, _ := sessions.Open(t.TempDir())
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.Config{Model: top, Tools: enginetest.Registry(t, echo), Agents: []engine.Agent{{Name: "echoer", Description: "echoes", Model: sub}}}
	if res := engine.New(cfg).Run(context.Background(), engine.NewSession(j.ID), "go", j); res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %+v", res)
	}
	j.Close()
	l, err := store.Load(j.ID)
	if err != nil {
		t.Fatal(err)
	}
	md := sessions.Markdown(l)
	var topLine, subLine string
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "- step ") && strings.Contains(line, "`echo` → ok: "):
			topLine = line
		case strings.HasPrefix(line, "> - echoer, step ") && strings.Contains(line, "`echo` → ok: "):
			subLine = line
		}
	}
	if topLine == "" || subLine == "" {
		t.Fatalf("no echo result at the top (%q) or in the sub-run (%q):\n%s", topLine, subLine, md)
	}
	_, want, _ := strings.Cut(topLine, "→ ok: ")
	_, got, _ := strings.Cut(subLine, "→ ok: ")
	if got != want || !strings.HasPrefix(want, "``") || !strings.HasSuffix(want, "``") {
		t.Errorf("the sub-run's result is exported as\n%q\nthe top-level one as\n%q\n(want the same code span)", got, want)
	}
}
