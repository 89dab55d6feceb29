package engine_test

import (
	"context"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
)

// TestHistoryRoomFollowsTheRun checks what the history sets aside (issue
// 42): a run whose step limit is a million but which ends after a few steps
// takes room for a short run, not for the million; a run that goes on past
// an eighth of its limit takes the room for the rest at once, so the history
// is not copied again however long the run goes on.
func TestHistoryRoomFollowsTheRun(t *testing.T) {
	run := func(maxSteps, steps int) *engine.Session {
		t.Helper()
		tool := instantTool()
		tool.Inline = true
		e := engine.New(engine.Config{Model: loopModel(steps), Tools: enginetest.Registry(t, tool), MaxSteps: maxSteps})
		s := engine.NewSession("room")
		if res := e.Run(context.Background(), s, "go", nil); res.StopReason != engine.StopAnswered || res.Steps != steps {
			t.Fatalf("run: %s %v, %d steps", res.StopReason, res.Err, res.Steps)
		}
		return s
	}
	short := run(1_000_000, 5)
	if c := cap(short.History); c > 2048 {
		t.Errorf("a 5-step run with a step limit of a million set aside room for %d messages; want at most 2,048", c)
	}

	const maxSteps = 20_000
	long := run(maxSteps, 6_000) // past an eighth of the limit
	bound := 2*maxSteps + 2      // what the engine reserves: a decision and a result a step, and room
	if c := cap(long.History); c < bound || c > bound+bound/8 {
		t.Errorf("a 6,000-step run with a step limit of %d has room for %d messages; want the limit's %d (and no more than an eighth over)", maxSteps, c, bound)
	}
	if n := len(long.History); n != 2*6_000 {
		t.Errorf("history holds %d messages, want %d", n, 2*6_000)
	}
}
