package cli

import (
	"strings"
	"testing"

	"github.com/agentty/agentty/engine/enginetest"
)

// TestCustomCommandInTmux: the console's / list shows the workspace's
// /review with its argument hint and description, and typing
// "/review main.go" sends the command's prompt with main.go attached.
func TestCustomCommandInTmux(t *testing.T) {
	srv := enginetest.NewServerFunc(t, func(n int, _ enginetest.Request) enginetest.Reply {
		return enginetest.Reply{Body: enginetest.Answer("Reviewed ", "it.")}
	})
	ws := commandWorkspace(t)
	tm := newTmux(t)
	tm.start(t.TempDir(), "--base-url", srv.URL(), "--model", "local-model", "--workspace", ws)
	tm.keys("/rev")
	tm.wait("the list with the custom command", func(s string) bool {
		return strings.Contains(s, "/review FILE [FOCUS]") && strings.Contains(s, "Review a file for bugs")
	})
	tm.keys("iew main.go", "Enter")
	tm.wait("the answer", func(s string) bool { return strings.Contains(chatPane(s), "Reviewed it.") && idleWith(s, "") })
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the model")
	}
	text, tools := requestText(t, reqs[len(reqs)-1].Body)
	if !strings.Contains(text, "Review @main.go for bugs") || !strings.Contains(text, "MARKER-CONTENT of main.go") || len(tools) != 2 {
		t.Errorf("the request: %s, tools %v", text, tools)
	}
	tm.keys("C-d")
	tm.waitGone()
}
