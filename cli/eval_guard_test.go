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
