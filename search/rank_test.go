package search_test

import (
	"path/filepath"
	"testing"

	"github.com/agentty/agentty/search"
)

// corpus is a small workspace of notes on distinct subjects that share
// common words, for ranking with known answers.
var corpus = map[string]string{
	"retry.md": `# Retries
Model calls are retried with exponential backoff and full jitter. The first delay
is 500 ms, doubled on each attempt and capped at 30 s; at most 5 attempts. A
Retry-After header from the server is honoured.`,
	"journal.md": `# The journal
Every event is appended to events.jsonl before anyone else sees it. The journal
is fsynced at every step boundary; a torn last line is dropped with a warning.`,
	"budget.md": `# Context budget
Before each decision the history is trimmed to fit a token budget. The system
prompt and memory are always kept; what is dropped is said in an event.`,
	"compaction.md": `# Compaction
Past the trigger, 80 % of the budget, older history is summarised by the model and
the summary replaces it in later requests.`,
	"gate.md": `# Stepping
A gate is consulted before each decide and act. The console's gate pauses and
waits for the person, who may continue, step, edit the arguments, skip or abort.`,
	"mcp.md": `# MCP servers
Tools of Model Context Protocol servers are started from the config; a server
that does not start is a notice and its tools are unavailable.`,
	"trust.md": `# Workspace trust
A workspace's .agentty.json may ask for risky settings (shell, hosts, policies);
until the folder is trusted only its safe keys are used.`,
	"fork.md": `# Fork
A fork is a new session whose journal is a prefix of another's, up to a chosen
step. The original session is left as it was.`,
	"traces.md": `# Traces
Runs are sent as OpenTelemetry spans to an OTLP collector: invoke_agent, chat and
execute_tool spans with the GenAI attributes.`,
	"offline.md": `# The offline model
A small rule-based planner that needs no key: arithmetic with the calculator,
remembering facts, the clock, and looking at files.`,
	"workflow.md": `# Workflows
Workflow files declare steps with needs; ready steps run in parallel, a failing
step is retried, and --continue carries on an interrupted workflow.`,
	"eval.md": `# Evals
Suites of agent test cases in YAML with assertions; each case runs in its own
session, in parallel, and a JUnit report can be written for CI.`,
}

// known are queries in other words than the notes', and the note that
// answers each.
var known = []struct{ query, want string }{
	{"how many times is a failed model request retried", "retry.md"},
	{"what happens to a partially written line after a crash", "journal.md"},
	{"history too long for the token budget", "budget.md"},
	{"summarise old messages when the context fills up", "compaction.md"},
	{"pause and edit a tool call's arguments before it runs", "gate.md"},
	{"MCP server failed to start", "mcp.md"},
	{"is it safe to run shell commands from a project's .agentty.json", "trust.md"},
	{"branch a session from an earlier step", "fork.md"},
	{"send spans to a collector", "traces.md"},
	{"use agentty without an API key", "offline.md"},
	{"resume an interrupted workflow", "workflow.md"},
	{"JUnit report for CI", "eval.md"},
}

func TestRankingRecallAt5(t *testing.T) {
	e := newEnv(t)
	for name, text := range corpus {
		e.write(t, filepath.Join("notes", name), text+"\n")
	}
	e.update(t)
	found, first := 0, 0
	for _, k := range known {
		hits := e.search(t, k.query, search.ScopeWorkspace, 5)
		rank := 0
		for i, h := range hits {
			if h.Path == "notes/"+k.want {
				rank = i + 1
				break
			}
		}
		switch {
		case rank == 0:
			t.Errorf("%q: %s not in the top 5 %v", k.query, k.want, wheres(hits))
		case rank == 1:
			first++
			fallthrough
		default:
			found++
		}
	}
	t.Logf("recall@5 %.2f (%d/%d), first %d/%d", float64(found)/float64(len(known)), found, len(known), first, len(known))
}
