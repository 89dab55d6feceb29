package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/engine/replay"
	"github.com/agentty/agentty/engine/script"
)

func record(t *testing.T, cfg engine.Config, tasks ...string) []engine.Event {
	t.Helper()
	rec := &enginetest.Recorder{}
	s := engine.NewSession("s")
	e := engine.New(cfg)
	for _, task := range tasks {
		if res := e.Run(context.Background(), s, task, rec); res.StopReason != engine.StopAnswered {
			t.Fatalf("%q: %+v", task, res)
		}
	}
	return rec.Events()
}

// TestReplayPlaysTheRecording: the same runs replayed give the same
// decisions and tool results; the recording's counts and tasks are read.
func TestReplayPlaysTheRecording(t *testing.T) {
	m, _ := script.Parse("t", []byte(`{"turns":[{"tool_calls":[{"name":"echo","arguments":{"text":"hi"}}]},{"answer":"said hi"}]}`))
	cfg := engine.Config{Model: m, Tools: enginetest.Registry(t, enginetest.EchoTool()), System: "be brief"}
	events := record(t, cfg, "say hi", "say hi again")
	rec := replay.FromEvents(events)
	if rec.Decisions() != 4 || len(rec.Tasks) != 2 || rec.Results[replay.Call{Run: "run-1", ID: "call_0_0"}].Text != "echo: hi" {
		t.Fatalf("recording: %d decisions, tasks %v, results %v", rec.Decisions(), rec.Tasks, rec.Results)
	}
	cfg.Model = replay.NewModel(rec)
	again := record(t, cfg, rec.Tasks...)
	if got, want := answers(again), answers(events); got != want {
		t.Errorf("replayed answers %q, recorded %q", got, want)
	}
}

// TestReplayRefusesChangedRequests: another task, system prompt or tool
// list is refused with ErrChanged, and a decision that was never recorded
// is an error; Until hands over to the live model after its step.
func TestReplayRefusesChangedRequests(t *testing.T) {
	m, _ := script.Parse("t", []byte(`{"turns":[{"answer":"ok"}]}`))
	cfg := engine.Config{Model: m, Tools: enginetest.Registry(t, enginetest.EchoTool()), System: "be brief"}
	rec := replay.FromEvents(record(t, cfg, "first"))
	for name, c := range map[string]struct {
		cfg  engine.Config
		task string
	}{
		"task":   {cfg, "another"},
		"system": {engine.Config{Tools: cfg.Tools, System: "be brief, and much more than that"}, "first"},
		"tools":  {engine.Config{System: "be brief"}, "first"},
		// The same length, other words: the recorded prompt tells.
		"- be brief\n    + be terse": {engine.Config{Tools: cfg.Tools, System: "be terse"}, "first"},
		"instructions": {engine.Config{Tools: cfg.Tools, System: "be brief",
			Instructions: func() engine.Instructions { return engine.Instructions{Text: "Never delete files."} }}, "first"},
	} {
		c.cfg.Model = replay.NewModel(rec)
		res := engine.New(c.cfg).Run(context.Background(), engine.NewSession("s"), c.task, nil)
		if !errors.Is(res.Err, replay.ErrChanged) || !strings.Contains(res.Err.Error(), name) {
			t.Errorf("%s changed: %v", name, res.Err)
		}
	}
	s := engine.NewSession("s")
	cfg.Model = replay.NewModel(rec)
	e := engine.New(cfg)
	e.Run(context.Background(), s, "first", nil)
	if res := e.Run(context.Background(), s, "second", nil); res.Err == nil || !strings.Contains(res.Err.Error(), "no recorded decision") {
		t.Errorf("an unrecorded run: %v", res.Err)
	}
	live, _ := script.Parse("live", []byte(`{"turns":[{"answer":"live"}]}`))
	cfg.Model = replay.Until{Replay: replay.NewModel(rec), Step: 1, Live: live}
	s = engine.NewSession("s")
	e = engine.New(cfg)
	if res := e.Run(context.Background(), s, "first", nil); res.Answer != "ok" {
		t.Errorf("until, step 1: %+v", res)
	}
	if res := e.Run(context.Background(), s, "second", nil); res.Answer != "live" {
		t.Errorf("until, step 2: %+v", res)
	}
}

func answers(evs []engine.Event) string {
	var out []string
	for _, ev := range evs {
		if d, ok := ev.Data.(*engine.RunFinished); ok {
			out = append(out, d.Answer)
		}
		if d, ok := ev.Data.(*engine.ToolFinished); ok {
			out = append(out, d.Result)
		}
	}
	return strings.Join(out, " | ")
}

// TestStaleRecordingSaysWhatChanged: a recording made with one prompt and
// replayed with another names what changed: the system prompt's lines,
// the tools added and removed, a tool's description and the parameters
// changed in its schema. A recording from before prompts were journaled
// (no prompt event) still refuses, with the old words.
func TestStaleRecordingSaysWhatChanged(t *testing.T) {
	m, _ := script.Parse("t", []byte(`{"turns":[{"answer":"ok"}]}`))
	tool := func(name, desc, params string) engine.Tool {
		return engine.Tool{Name: name, Description: desc, Schema: []byte(params),
			Func: func(context.Context, *engine.Call) (string, error) { return "", nil }}
	}
	was := enginetest.Registry(t, tool("read_order", "Read an order.", `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`),
		tool("refund", "Refund an order.", `{"type":"object","properties":{"id":{"type":"string"}}}`))
	cfg := engine.Config{Model: m, Tools: was, System: "You triage support messages.\nAnswer in JSON.\nNever promise a refund."}
	events := record(t, cfg, "Order A-1002 never came")
	now := enginetest.Registry(t, tool("read_order", "Read one order by its id.", `{"type":"object","properties":{"id":{"type":"string"},"lines":{"type":"boolean"}},"required":["id","lines"]}`),
		tool("escalate", "Hand to a person.", `{"type":"object"}`))
	cfg = engine.Config{Model: replay.NewModel(replay.FromEvents(events)), Tools: now,
		System: "You triage support messages.\nAnswer in JSON, briefly.\nNever promise a refund."}
	res := engine.New(cfg).Run(context.Background(), engine.NewSession("s"), "Order A-1002 never came", nil)
	if !errors.Is(res.Err, replay.ErrChanged) {
		t.Fatalf("a changed prompt: %v", res.Err)
	}
	for _, want := range []string{
		"the system prompt (3 lines, 3 when recorded):\n    - Answer in JSON.\n    + Answer in JSON, briefly.",
		"tools added: escalate", "tools removed: refund",
		`tool read_order: its description changed: "Read one order by its id.", was "Read an order."`,
		"tool read_order: its parameters changed (+ added, - removed, ~ changed): +lines required [id lines], was [id]",
	} {
		if !strings.Contains(res.Err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, res.Err)
		}
	}
	var old []engine.Event // as journaled before prompt events
	for _, ev := range events {
		if ev.Kind != engine.KindPrompt {
			old = append(old, ev)
		}
	}
	cfg.Model = replay.NewModel(replay.FromEvents(old))
	res = engine.New(cfg).Run(context.Background(), engine.NewSession("s"), "Order A-1002 never came", nil)
	if !errors.Is(res.Err, replay.ErrChanged) || !strings.Contains(res.Err.Error(), "when recorded") {
		t.Errorf("an old recording: %v", res.Err)
	}
}

// TestHostileRecordingIsBounded: a recording's prompt is a file anyone may
// have written: a prompt of many lines with terminal escapes and a tool
// list of thousands gives a diff of bounded size with no control
// character, and the next good recording still replays.
func TestHostileRecordingIsBounded(t *testing.T) {
	m, _ := script.Parse("t", []byte(`{"turns":[{"answer":"ok"}]}`))
	cfg := engine.Config{Model: m, Tools: enginetest.Registry(t, enginetest.EchoTool()), System: "be brief"}
	events := record(t, cfg, "first")
	var lines, names []string
	for i := range 5000 {
		lines = append(lines, fmt.Sprintf("\x1b]52;c;%d\x07line %d \x1b[2J", i, i))
		names = append(names, fmt.Sprintf("tool_%d\x1b[31m", i))
	}
	hostile := append([]engine.Event(nil), events...)
	for i, ev := range hostile {
		if p, ok := ev.Data.(*engine.Prompt); ok {
			q := *p
			q.System = strings.Join(lines, "\n")
			for _, n := range names {
				q.Tools = append(q.Tools, engine.ToolSchema{Name: n, Parameters: []byte(`{}`)})
			}
			// The real tool's name, with thousands of hostile parameters.
			props := map[string]any{}
			for _, l := range lines {
				props[l] = map[string]any{"type": "string"}
			}
			params, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": lines})
			q.Tools = append(q.Tools, engine.ToolSchema{Name: "echo", Description: lines[0], Parameters: params})
			hostile[i].Data = &q
		}
	}
	changed := cfg
	changed.System, changed.Model = "be terse", replay.NewModel(replay.FromEvents(hostile))
	res := engine.New(changed).Run(context.Background(), engine.NewSession("s"), "first", nil)
	if !errors.Is(res.Err, replay.ErrChanged) {
		t.Fatalf("a hostile recording: %v", res.Err)
	}
	msg := res.Err.Error()
	if len(msg) > 8<<10 || strings.ContainsAny(msg, "\x1b\x07") {
		t.Errorf("the diff is %d bytes, escapes: %v", len(msg), strings.ContainsAny(msg, "\x1b\x07"))
	}
	cfg.Model = replay.NewModel(replay.FromEvents(events))
	if res := engine.New(cfg).Run(context.Background(), engine.NewSession("s"), "first", nil); res.Err != nil {
		t.Errorf("the next good recording: %v", res.Err)
	}
}
