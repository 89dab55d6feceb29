package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// keeper is a Checkpointer that records what it was asked, and fails when
// told to.
type keeper struct {
	mu    sync.Mutex
	asked []string // "reason: call names"
	fail  error
}

func (k *keeper) Checkpoint(_ context.Context, _, reason string, calls []engine.ToolCall) (*engine.Checkpointed, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var names []string
	for _, c := range calls {
		names = append(names, c.Name)
	}
	k.asked = append(k.asked, reason+": "+strings.Join(names, ","))
	if k.fail != nil {
		return nil, k.fail
	}
	return &engine.Checkpointed{Mode: "git", Tree: "t"}, nil
}

// checkpointRun runs steps of tool calls (by name), then an answer, with
// a read-only tool "look" and a changing one "change", kept by k.
func checkpointRun(t *testing.T, k *keeper, steps ...[]string) *enginetest.Recorder {
	t.Helper()
	tool := func(name string, changes bool) engine.Tool {
		return engine.Tool{Name: name, Changes: changes, Func: func(context.Context, *engine.Call) (string, error) { return name + " ran", nil }}
	}
	n := 0
	m := enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
		defer func() { n++ }()
		if n == len(steps) {
			return engine.Decision{Text: "done"}, nil
		}
		var calls []engine.ToolCall
		for i, name := range steps[n] {
			calls = append(calls, engine.ToolCall{ID: name + string(rune('a'+i)), Name: name, Args: json.RawMessage(`{}`)})
		}
		return engine.Decision{ToolCalls: calls}, nil
	})
	e := engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, tool("look", false), tool("change", true)), Checkpoint: k})
	rec := &enginetest.Recorder{}
	if res := e.Run(context.Background(), engine.NewSession("s"), "go", rec); res.StopReason != engine.StopAnswered {
		t.Fatalf("stop %s: %v", res.StopReason, res.Err)
	}
	return rec
}

// TestStepsThatMayChangeAreCheckpointed: a step with a changing tool is
// checkpointed before its first tool starts, whatever place the changing
// call has among read-only ones; a step of read-only tools alone is not;
// the run ends with an "after".
func TestStepsThatMayChangeAreCheckpointed(t *testing.T) {
	k := &keeper{}
	rec := checkpointRun(t, k, []string{"look", "change"}, []string{"change", "look"}, []string{"look", "look"}, []string{"look", "look", "change", "look"})
	want := "before: look,change|before: change,look|before: look,look,change,look|after: "
	if got := strings.Join(k.asked, "|"); got != want {
		t.Errorf("checkpoints asked:\n%s\nwant\n%s", got, want)
	}
	var steps []int
	started := map[int]bool{}
	for _, ev := range rec.Events() {
		switch ev.Kind {
		case engine.KindToolStarted:
			started[ev.Step] = true
		case engine.KindCheckpoint:
			if started[ev.Step] {
				t.Errorf("step %d's checkpoint came after a tool of it started", ev.Step)
			}
			steps = append(steps, ev.Step)
		}
	}
	if len(steps) != 4 || steps[0] != 1 || steps[1] != 2 || steps[2] != 4 {
		t.Errorf("checkpoints journaled at steps %v, want 1 2 4 and the after", steps)
	}
}

// TestFailedCheckpointIsSaid: a checkpoint that fails is a warning notice
// about "checkpoint" at its step, naming the cause; the step's tools run
// all the same, and the next step asks again.
func TestFailedCheckpointIsSaid(t *testing.T) {
	k := &keeper{fail: errors.New("git add: a.txt: can only add regular files")}
	rec := checkpointRun(t, k, []string{"change"}, []string{"look", "change"})
	var said []string
	for _, ev := range rec.Of(engine.KindNotice) {
		if n := ev.Data.(*engine.Notice); n.About == "checkpoint" && strings.Contains(n.Message, "can only add regular files") {
			said = append(said, string(rune('0'+ev.Step)))
		}
	}
	if strings.Join(said, ",") != "1,2,3" { // before 1, before 2, the after (at the answering step)
		t.Errorf("failed checkpoints said at steps %v, want 1,2,3", said)
	}
	if len(rec.Finished()) != 3 || len(rec.Of(engine.KindCheckpoint)) != 0 {
		t.Errorf("tools finished %d (want 3), checkpoints %d", len(rec.Finished()), len(rec.Of(engine.KindCheckpoint)))
	}
}
