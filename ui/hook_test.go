package ui

import (
	"strings"

	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// A hook's run is a row of its step on the Timeline (its decision as the
// status), its whole account in the step's details, and, when it blocked
// something, a note in the Chat.
func TestHookRunsAreShown(t *testing.T) {
	m := New(Config{Style: "notty", Backend: &memBackend{s: engine.NewSession("s")}})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	for _, e := range []engineEventMsg{
		ev(engine.KindRunStarted, &engine.RunStarted{Task: "clean up"}),
		ev(engine.KindStepStarted, &engine.StepStarted{}),
		ev(engine.KindHook, &engine.HookRun{Event: engine.HookPreToolUse, Command: "python3 guard.py", Source: ".claude/settings.json",
			Tool: "run_shell", Call: "c1", Exit: 2, DurationMS: 12, Decision: engine.HookDeny, Reason: "rm -rf is not allowed"}),
		ev(engine.KindHook, &engine.HookRun{Event: engine.HookPostToolUse, Command: "gofmt -w", Source: "~/.claude/settings.json", Tool: "write_file", Exit: 0}),
	} {
		m.Update(e)
	}
	var rows []string
	for _, r := range m.tl.rows {
		rows = append(rows, r.text+" ["+r.status+"]")
	}
	got := strings.Join(rows, "\n")
	if !strings.Contains(got, "⚓ PreToolUse run_shell: python3 guard.py [deny]") || !strings.Contains(got, "⚓ PostToolUse write_file: gofmt -w [ok]") {
		t.Errorf("timeline rows:\n%s", got)
	}
	if frame := m.View(); !strings.Contains(frame, "⚓ PreToolUse run_shell: python3 gu… 12ms deny") {
		t.Errorf("the Timeline does not show the hook's row with its decision:\n%s", frame)
	}
	dt := m.tl.details[1]
	if dt == nil || len(dt.hooks) != 2 || !strings.Contains(dt.hooks[0], "exit 2 in 12ms, deny; why: rm -rf is not allowed") {
		t.Errorf("details: %+v", dt)
	}
	var notes []string
	for _, it := range m.chat.items {
		if it.kind == itemNote {
			notes = append(notes, it.text)
		}
	}
	if len(notes) != 1 || notes[0] != "⚓ PreToolUse hook on run_shell denied: rm -rf is not allowed" {
		t.Errorf("chat notes: %q", notes)
	}
}
