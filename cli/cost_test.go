package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine/enginetest"
)

// A model whose price the config gives: each usage event of run --json
// carries its cost, sessions ls and show say the session's, and --max-cost
// stops a run that would spend more with exit 4 and the amount, before
// the model is asked when the prompt alone would pass it; a server
// that reports its own cost (OpenRouter) is believed; an unknown price is
// "cost unknown", and a cost budget refuses to go on blind.
func TestCostInRunsAndSessions(t *testing.T) {
	srv := enginetest.NewServerFunc(t, func(n int, req enginetest.Request) enginetest.Reply {
		if b, _ := json.Marshal(req.Body); strings.Contains(string(b), "routed") {
			return enginetest.Reply{Body: enginetest.SSE(enginetest.TextChunk("ok"), enginetest.FinishChunk("stop"),
				`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"cost":0.25}}`)}
		}
		return enginetest.Reply{Body: enginetest.ToolCallStream("c", "clock", `{}`, 1)} // 42 in, 7 out, for ever
	})
	home := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"models": {"pricey": {"price": {"input": 10, "output": 2000}}}}`)
	env := map[string]string{"AGENTTY_HOME": home, "OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "k", "AGENTTY_CONFIG": cfg}
	// (42*10 + 7*2000) / 1e6 = 0.01442 a decision, most of it the answer:
	// each prompt fits what is left, and the third call's answer passes
	// 0.04.
	code, out, errs := runCLI(t, context.Background(), env, "run", "--json", "--model", "pricey", "--max-cost", "0.04", "what time is it?")
	if code != 4 || !strings.Contains(errs, "cost budget of $0.04 is spent: $0.0433") {
		t.Fatalf("exit %d, want 4 with the amount spent: %s", code, errs)
	}
	var costs []float64
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct {
			Kind string
			Data struct {
				Cost   float64 `json:"cost_usd"`
				Priced int
			}
		}
		json.Unmarshal([]byte(l), &ev)
		if ev.Kind == "usage" && ev.Data.Priced == 1 {
			costs = append(costs, ev.Data.Cost)
		}
	}
	if len(costs) != 3 || costs[0] != 0.01442 {
		t.Errorf("usage events' costs: %v", costs)
	}
	code, ls, _ := runCLI(t, context.Background(), env, "sessions", "ls")
	if code != 0 || !strings.Contains(ls, "COST") || !strings.Contains(ls, "$0.0433") {
		t.Errorf("sessions ls:\n%s", ls)
	}
	code, out, errs = runCLI(t, context.Background(), env, "run", "--model", "openrouter/some-model", "routed")
	if code != 0 {
		t.Fatalf("a server's own cost: exit %d %s", code, errs)
	}
	code, ls, _ = runCLI(t, context.Background(), env, "sessions", "ls")
	if !strings.Contains(ls, "$0.25") {
		t.Errorf("the server's cost is not listed:\n%s", ls)
	}
	code, _, errs = runCLI(t, context.Background(), env, "run", "--model", "unheard-of", "--max-cost", "1", "what time is it?")
	if code != 4 || !strings.Contains(errs, `the cost of model "unheard-of" is not known`) {
		t.Errorf("a cost budget with no price: exit %d %s", code, errs)
	}
	code, ls, _ = runCLI(t, context.Background(), env, "sessions", "ls")
	if !regexp.MustCompile(`\d+\s+unknown\s+unheard-of`).MatchString(ls) || strings.Contains(ls, "cost unknown") {
		t.Errorf("an unpriced session (COST unknown, not \"cost unknown\"):\n%s", ls)
	}
	// A budget the first request's prompt alone would pass: the model is
	// not asked at all.
	asked := len(srv.Requests())
	code, _, errs = runCLI(t, context.Background(), env, "run", "--model", "pricey", "--max-tokens", "60", "what time is it?")
	if code != 4 || !strings.Contains(errs, "token budget of 60 would be passed by the next request: 0 tokens used") || len(srv.Requests()) != asked {
		t.Errorf("--max-tokens: exit %d %s, %d requests made", code, errs, len(srv.Requests())-asked)
	}
}
