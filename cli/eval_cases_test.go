package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine/enginetest"
)

// casesServer is a model behind the real go-openai client that answers
// as each case of casesSuite needs: the triage agent reads notes.txt and
// says what it holds, the writer greets (only with its own prompt), and
// the runaway calls the clock for ever.
func casesServer(t *testing.T) *enginetest.Server {
	return enginetest.NewServerFunc(t, func(n int, req enginetest.Request) enginetest.Reply {
		raw := string(req.Raw)
		switch {
		case strings.Contains(raw, "loop for ever"):
			call := `{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"clock","arguments":"{}"}}]},"finish_reason":null}]}`
			return enginetest.Reply{Body: enginetest.SSE(call, enginetest.FinishChunk("tool_calls"), enginetest.UsageChunk(200, 50))}
		case strings.Contains(raw, "write a greeting") && strings.Contains(raw, "You are the writer"):
			return enginetest.Reply{Body: enginetest.Answer("Hi ", "there")}
		case strings.Contains(raw, "write a greeting"):
			return enginetest.Reply{Body: enginetest.Answer("not the writer's prompt")}
		case strings.Contains(raw, "hello from the fixture"):
			return enginetest.Reply{Body: enginetest.Answer("the note says: hello from the fixture")}
		case strings.Contains(raw, "notes.txt"):
			return enginetest.Reply{Body: enginetest.ToolCallStream("r", "read_file", `{"path":"notes.txt"}`, 2)}
		}
		return enginetest.Reply{Status: 400, Body: `{"error":{"message":"unexpected request"}}`}
	})
}

// casesWorkspace is a workspace with two agents and a suite of cases
// that each run as one, with a fixture folder, a per-case token budget
// and a case that is to stop at its budget.
func casesWorkspace(t *testing.T) (ws, suite string) {
	ws = t.TempDir()
	agents := filepath.Join(ws, ".agentty", "agents")
	writeAgent(t, agents, "triage.md", "---\nname: triage\ndescription: reads notes\n---\nYou are the triage agent.\n")
	writeAgent(t, agents, "writer.md", "---\nname: writer\ndescription: writes greetings\n---\nYou are the writer.\n")
	writeFile(t, filepath.Join(ws, "evals", "fixtures", "notes", "notes.txt"), "hello from the fixture\n")
	suite = filepath.Join(ws, "evals", "suite.yaml")
	writeFile(t, suite, `model: fake
cases:
  - name: triage reads a note
    agent: triage
    workspace: fixtures/notes
    task: "what does notes.txt say?"
    assert:
      - tool_called: {name: read_file, args: {path: notes.txt}}
      - answer_contains: hello from the fixture
  - name: writer greets
    agent: writer
    max_tokens: 20000
    task: "write a greeting"
    assert:
      - answer_equals: Hi there
  - name: runaway
    agent: triage
    max_tokens: 2000
    task: "loop for ever"
    assert:
      - stop_reason: budget
      - tool_called: clock
`)
	return ws, suite
}

// The suite: two agents, a per-case max_tokens and a case that
// stops at its budget pass recorded and replayed with no flag but the
// folders: each recording keeps what its case ran with, and the replay
// asks no model.
func TestEvalPerCaseSettingsRecordAndReplay(t *testing.T) {
	srv := casesServer(t)
	ws, suite := casesWorkspace(t)
	t.Chdir(ws)
	env := agentEnv(t)
	env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"] = srv.URL(), "k"
	if code, _, errs := runCLI(t, context.Background(), env, "trust", ws); code != 0 {
		t.Fatalf("trust: %s", errs) // the suite names its model: the folder is the person's
	}
	rec := filepath.Join(ws, "rec")
	code, out, errs := runCLI(t, context.Background(), env, "eval", suite, "--record", rec)
	if code != 0 {
		t.Fatalf("recording: exit %d\n%s%s", code, out, errs)
	}
	var ran struct {
		Agent     string  `json:"agent"`
		Model     string  `json:"model"`
		MaxTokens int     `json:"max_tokens"`
		MaxCost   float64 `json:"max_cost"`
		Workspace string  `json:"workspace"`
	}
	b, err := os.ReadFile(filepath.Join(rec, "runaway.settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if json.Unmarshal(b, &ran) != nil || ran.Agent != "triage" || ran.Model != "fake" || ran.MaxTokens != 2000 {
		t.Errorf("the runaway's recorded settings: %s", b)
	}
	b, _ = os.ReadFile(filepath.Join(rec, "triage_reads_a_note.settings.json"))
	if ran.MaxTokens = 0; json.Unmarshal(b, &ran) != nil || ran.Workspace != "fixtures/notes" || ran.Agent != "triage" || ran.MaxTokens != 0 {
		t.Errorf("the triage case's recorded settings: %s", b)
	}
	asked := len(srv.Requests())
	delete(env, "OPENAI_BASE_URL")
	delete(env, "OPENAI_API_KEY")
	code, out, errs = runCLI(t, context.Background(), env, "eval", suite, "--replay", rec)
	if code != 0 || !strings.Contains(out, "3 passed, 0 failed") {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errs)
	}
	if len(srv.Requests()) != asked {
		t.Errorf("the replay asked the model %d times", len(srv.Requests())-asked)
	}
}

// A recording keeps what its case ran with, flags included: a suite
// recorded with --agent and --max-tokens replays with neither; an older
// recording (no settings beside it) still replays with the flags, and is
// told stale without them.
func TestEvalRecordingKeepsTheFlags(t *testing.T) {
	srv := casesServer(t)
	ws, _ := casesWorkspace(t)
	t.Chdir(ws)
	env := agentEnv(t)
	env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"] = srv.URL(), "k"
	suite := filepath.Join(ws, "flags.yaml")
	writeFile(t, suite, `cases:
  - name: runaway
    task: "loop for ever"
    assert:
      - stop_reason: budget
`)
	rec := filepath.Join(ws, "rec")
	code, out, errs := runCLI(t, context.Background(), env, "eval", suite, "--model", "fake", "--agent", "triage", "--max-tokens", "2000", "--record", rec)
	if code != 0 {
		t.Fatalf("recording: exit %d\n%s%s", code, out, errs)
	}
	delete(env, "OPENAI_BASE_URL")
	delete(env, "OPENAI_API_KEY")
	if code, out, errs = runCLI(t, context.Background(), env, "eval", suite, "--replay", rec); code != 0 {
		t.Fatalf("replay with no flags: exit %d\n%s%s", code, out, errs)
	}
	if err := os.Remove(filepath.Join(rec, "runaway.settings.json")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, context.Background(), env, "eval", suite, "--replay", rec, "--max-tokens", "2000")
	if code != 0 {
		t.Errorf("an older recording with the flags: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, context.Background(), env, "eval", suite, "--replay", rec)
	if code != 1 || !strings.Contains(out, "STALE  runaway") {
		t.Errorf("an older recording without its budget: exit %d\n%s", code, out)
	}
}
