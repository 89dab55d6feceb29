package ui

import (
	"encoding/json"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// TestFailedCommandsLookFailed: a command run_shell ran that exited
// non-zero (or was killed) is shown ✗ with how it ended, in the Chat's
// row and on the Timeline, not ✓ and ok; a command that succeeded is ✓.
func TestFailedCommandsLookFailed(t *testing.T) {
	for _, tc := range []struct{ result, chat, timeline string }{
		{"exit status 2\nls: cannot access 'nonexistent-dir': No such file or directory\n", "✗ exit 2", "exit 2"},
		{"signal: killed\n", "✗ signal: killed", "signal: killed"},
		{"exit status 0\na.go\n", "✓", " ok"},
	} {
		m := New(Config{Style: "notty", Backend: &memBackend{s: engine.NewSession("s")}})
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
		m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "list it"}))
		call := engine.ToolCall{ID: "c1", Name: "run_shell", Args: json.RawMessage(`{"command":"ls nonexistent-dir"}`)}
		m.Update(ev(engine.KindDecision, &engine.Decided{ToolCalls: []engine.ToolCall{call}}))
		m.Update(ev(engine.KindToolStarted, &engine.ToolStarted{ID: "c1", Name: "run_shell", Args: call.Args}))
		m.Update(ev(engine.KindToolFinished, &engine.ToolFinished{ID: "c1", Name: "run_shell", Status: engine.ToolOK, Result: tc.result}))
		v := m.View()
		var row, tl string
		for _, l := range strings.Split(v, "\n") {
			if strings.Contains(l, "⚙ run_shell") {
				row = l
			}
			if strings.Contains(l, "act") && strings.Contains(l, "run_shell") {
				tl = l
			}
		}
		chatPart, _, _ := strings.Cut(row, "│┌")
		if !strings.Contains(chatPart, tc.chat) || tc.chat != "✓" && strings.Contains(chatPart, "✓") {
			t.Errorf("%q: the Chat's row %q, want %q", tc.result, chatPart, tc.chat)
		}
		if !strings.Contains(tl, tc.timeline) {
			t.Errorf("%q: the Timeline's row %q, want %q", tc.result, tl, tc.timeline)
		}
	}
}

// TestShellOutputIsYours: the output of the person's own "!command" is
// labelled theirs in the Chat, not agentty's; the next run's answer is
// agentty's again.
func TestShellOutputIsYours(t *testing.T) {
	m := New(Config{Style: "notty", Backend: &memBackend{s: engine.NewSession("s")}})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	run := func(id, task, answer string) {
		m.Update(engineEventMsg{engine.Event{Kind: engine.KindRunStarted, Run: id, Step: 1, Data: &engine.RunStarted{Task: task}}})
		m.Update(engineEventMsg{engine.Event{Kind: engine.KindDecision, Run: id, Step: 1, Data: &engine.Decided{Text: answer}}})
		m.Update(engineEventMsg{engine.Event{Kind: engine.KindRunFinished, Run: id, Step: 1, Data: &engine.RunFinished{StopReason: engine.StopAnswered, Answer: answer}}})
	}
	run("run-1", "!ls", "```console\n$ ls\nmain.go\n```")
	if v := m.View(); !strings.Contains(v, "▍You · your command's output") || strings.Contains(v, "▍agentty") {
		t.Errorf("a !command's output is not labelled the person's:\n%s", v)
	}
	run("run-2", "what is 2+2", "4")
	if v := m.View(); strings.Count(v, "▍agentty") != 1 {
		t.Errorf("the next run's answer is not agentty's:\n%s", v)
	}
}
