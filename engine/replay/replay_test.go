package replay_test

import (
	"context"
	"errors"
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
		// The same length, other words: only the prompt hash tells.
		"system prompt, the project instructions": {engine.Config{Tools: cfg.Tools, System: "be terse"}, "first"},
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
