package ui_test

import (
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/ui"
)

// A pause of a run this console may only watch (another's run, told by
// bus.AnswerGate as Watching) is a note that says where the run waits and
// for whom, and the status says paused; no pause bar offers keys that
// would do nothing.
func TestFollowSaysWhoAnswersAnotherRunsPause(t *testing.T) {
	m, g, _ := followConsole(t)
	g.Watching(engine.Pending{Session: "s1", Run: "run-1", Step: 2, At: engine.Act, ToolCall: &engine.ToolCall{ID: "c1", Name: "calculator"}})
	m.Update(readMsg(t, ui.WaitForGate(g)))
	f := m.View()
	if !strings.Contains(f, "The run waits at step 2") || !strings.Contains(f, "submitter") || strings.Contains(f, "Paused before") ||
		!strings.Contains(f, "paused") {
		t.Errorf("the console:\n%s", f)
	}
}

// An answer the run on a worker did not take (bus.Answered) is a note
// that says so and why; the console does not show it as answered.
func TestFollowSaysAnAnswerWasNotTaken(t *testing.T) {
	m, g, _ := followConsole(t)
	g.Answered(engine.Pending{Session: "s1", Run: "run-1", Step: 2, At: engine.Act, ToolCall: &engine.ToolCall{ID: "c1", Name: "calculator"}}, false, "the run said nothing of it")
	m.Update(readMsg(t, ui.WaitForGate(g)))
	if f := m.View(); !strings.Contains(f, "Your answer at step 2") || !strings.Contains(f, "not taken: the run said nothing of it") {
		t.Errorf("the console:\n%s", f)
	}
}
