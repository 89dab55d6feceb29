package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// agents --json shows each agent's output schema and guardrails; a typo of
// one of agentty's own fields is an error naming the file, line and the
// field it meant (agents exits 1), and the other agents still load.
func TestAgentsJSONShowsSchemaAndGuardrails(t *testing.T) {
	env := agentEnv(t)
	dir := filepath.Join(filepath.Dir(env["AGENTTY_CONFIG"]), "agents")
	writeAgent(t, dir, "support.md", agentFile("support", "output_schema: {type: object}\nguardrails:\n  output:\n    - {name: no-refunds, pattern: refund}\n", "Support."))
	bad := writeAgent(t, dir, "typo.md", agentFile("typo", "output_shema: {type: object}\n", "Typo."))
	code, out, errs := runCLI(t, context.Background(), env, "agents", "--json")
	if code != 1 || !strings.Contains(out, `"output_schema": {`) || !strings.Contains(out, `"name": "no-refunds"`) || !strings.Contains(out, `"pattern": "refund"`) {
		t.Errorf("agents --json: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, `"file": "`+bad+`",
      "line": 4,
      "field": "output_shema",
      "message": "not a field of an agent: did you mean output_schema?`) {
		t.Errorf("the typo is not an error naming its line:\n%s", out)
	}
}
