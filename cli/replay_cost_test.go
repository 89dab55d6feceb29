package cli

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine/enginetest"
)

// A replay makes no model call and so spends nothing: its session costs
// $0.00 and says what the recording cost; a cost budget still stops a
// replayed eval case where the recording stopped.
func TestReplaySpendsNothing(t *testing.T) {
	srv := enginetest.NewServerFunc(t, func(n int, req enginetest.Request) enginetest.Reply {
		if raw := string(req.Raw); strings.Contains(raw, "then stop") && strings.Contains(raw, `"role":"tool"`) {
			return enginetest.Reply{Body: enginetest.Answer("it is late")}
		}
		return enginetest.Reply{Body: enginetest.ToolCallStream("c", "clock", `{}`, 1)} // 42 in, 7 out: $0.01442
	})
	ws := t.TempDir()
	t.Chdir(ws)
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"models": {"pricey": {"price": {"input": 10, "output": 2000}}}}`)
	env := map[string]string{"AGENTTY_HOME": t.TempDir(), "OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "k", "AGENTTY_CONFIG": cfg}
	code, _, errs := runCLI(t, context.Background(), env, "run", "--model", "pricey", "what time is it? then stop")
	if code != 0 {
		t.Fatalf("run: exit %d %s", code, errs)
	}
	id := regexp.MustCompile(`session: (\w+)`).FindStringSubmatch(errs)
	if id == nil {
		t.Fatalf("no session id in %q", errs)
	}
	code, out, errs := runCLI(t, context.Background(), env, "replay", id[1])
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errs)
	}
	replayed := regexp.MustCompile(`as (\w+):`).FindStringSubmatch(out)
	if replayed == nil {
		t.Fatalf("no replay session in %q", out)
	}
	_, show, _ := runCLI(t, context.Background(), env, "sessions", "show", replayed[1])
	if !strings.Contains(show, "$0.00 (replayed $0.0288)") {
		t.Errorf("the replay's session should cost nothing and say what the recording did:\n%s", show)
	}
	_, show, _ = runCLI(t, context.Background(), env, "sessions", "show", id[1])
	if !strings.Contains(show, "$0.0288") || strings.Contains(show, "replayed") {
		t.Errorf("the recorded session's cost:\n%s", show)
	}
	// A case that stops at its cost budget is replayed to the same stop.
	suite := filepath.Join(ws, "suite.yaml")
	writeFile(t, suite, "cases:\n  - name: budget\n    max_cost: 0.02\n    task: \"what time is it?\"\n    assert:\n      - stop_reason: budget\n")
	code, out, errs = runCLI(t, context.Background(), env, "eval", suite, "--model", "pricey", "--record", "rec")
	if code != 0 {
		t.Fatalf("record: exit %d\n%s%s", code, out, errs)
	}
	delete(env, "OPENAI_BASE_URL")
	if code, out, errs = runCLI(t, context.Background(), env, "eval", suite, "--replay", "rec", "--json", "r.json"); code != 0 {
		t.Errorf("replay: exit %d\n%s%s", code, out, errs)
	}
}
