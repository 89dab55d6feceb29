package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// guardrail: NAME asserts which guardrail stopped the run: it passes when
// that one tripped (a run stopped by a guardrail does not answer, and the
// assertion lets the case pass, as stop_reason does), and says which one
// tripped when another was asserted.
func TestEvalGuardrailAssertion(t *testing.T) {
	env := agentEnv(t)
	writeAgent(t, filepath.Join(filepath.Dir(env["AGENTTY_CONFIG"]), "agents"), "support.md",
		agentFile("support", "guardrails:\n  output:\n    - {name: no-refund-promises, pattern: 'refund'}\n", "You answer customers."))
	model := writeScript(t, `{"turns":[{"answer":"We will refund you today."}]}`)
	suite := writeSuite(t, `
agent: support
model: script:`+model+`
cases:
  - name: tripped
    task: "my order is late"
    assert:
      - guardrail: no-refund-promises
  - name: other
    task: "my order is late"
    assert:
      - guardrail: polite
`)
	code, out, errs := runCLI(t, context.Background(), env, "eval", suite, "--concurrency", "1")
	if code != 1 || !strings.Contains(out, "PASS   tripped") || !strings.Contains(out, "FAIL   other") ||
		!strings.Contains(out, "want guardrail polite to trip, got guardrail no-refund-promises tripped") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
}

// A suite's agent: that names no agent is the suite's error, at its file
// and line, not --agent's; the flag's own is still the flag's.
func TestEvalSuiteAgentErrorNamesItsLine(t *testing.T) {
	suite := writeSuite(t, "description: d\nagent: nosuch\ncases:\n  - name: a\n    task: hi\n")
	code, _, errs := runCLI(t, context.Background(), agentEnv(t), "eval", suite, "--model", "offline")
	if code != 2 || !strings.Contains(errs, suite+":2: agent: nosuch: no agents are defined") {
		t.Errorf("exit %d, %q", code, errs)
	}
	code, _, errs = runCLI(t, context.Background(), agentEnv(t), "eval", suite, "--model", "offline", "--agent", "zed")
	if code != 2 || !strings.Contains(errs, "--agent zed:") {
		t.Errorf("--agent: exit %d, %q", code, errs)
	}
}
