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

// A case's settings are checked before anything runs: an agent that is
// not defined (with the nearest name), a model that cannot be had and an
// unknown field are errors naming file, line and field, and nothing
// runs; the suite put right runs.
func TestEvalCaseSettingsRefused(t *testing.T) {
	ws, _ := casesWorkspace(t)
	t.Chdir(ws)
	env := agentEnv(t)
	suite := filepath.Join(ws, "evals", "bad.yaml")
	body := `cases:
  - name: typo
    agent: triag
    task: "what is 2+2"
  - name: no script
    model: script:missing.json
    task: "what is 2+2"
`
	writeFile(t, suite, body)
	if code, _, errs := runCLI(t, context.Background(), env, "trust", ws); code != 0 {
		t.Fatalf("trust: %s", errs)
	}
	code, _, errs := runCLI(t, context.Background(), env, "eval", suite)
	want := []string{`bad.yaml:3: cases[0].agent: no agent "triag" here (agents: triage, writer); did you mean "triage"?`,
		"bad.yaml:6: cases[1].model: ", "missing.json"}
	for _, w := range want {
		if code != 2 || !strings.Contains(errs, w) {
			t.Errorf("exit %d, want 2 and %q:\n%s", code, w, errs)
		}
	}
	writeFile(t, suite, body+"    max_token: 5\n")
	if code, _, errs = runCLI(t, context.Background(), env, "eval", suite); code != 2 || !strings.Contains(errs, "bad.yaml:8: cases[1].max_token: unknown field") {
		t.Errorf("an unknown field: exit %d\n%s", code, errs)
	}
	store := filepath.Join(env["AGENTTY_HOME"], "sessions")
	if ents, _ := os.ReadDir(store); len(ents) > 0 {
		t.Errorf("%d sessions made by suites refused", len(ents))
	}
	writeFile(t, suite, strings.Replace(strings.Replace(body, "triag\n", "triage\n", 1), "script:missing.json", "offline", 1))
	if code, out, errs := runCLI(t, context.Background(), env, "eval", suite); code != 0 {
		t.Errorf("the suite put right: exit %d\n%s%s", code, out, errs)
	}
}

// A case may name its own script model (a file beside the suite) and
// answer its questions, inline or from a file of --answers' shape; a
// case with no answers has its question answered with why none came (the
// model reads it, as any tool's failure); recorded, the cases replay
// with no flag and without the script.
func TestEvalCaseAnswersAndScript(t *testing.T) {
	ws := t.TempDir()
	t.Chdir(ws)
	env := agentEnv(t)
	writeFile(t, filepath.Join(ws, "evals", "ask.json"), `{"turns":[{"tool_calls":[{"name":"ask_user","arguments":{"question":"Which colour?"}}]},{"answer":"you chose the colour you were told"}]}`)
	writeFile(t, filepath.Join(ws, "evals", "answers.json"), `{"Which colour?": "green"}`)
	suite := filepath.Join(ws, "evals", "ask.yaml")
	writeFile(t, suite, `cases:
  - name: inline
    model: script:ask.json
    answers: {"Which colour?": blue}
    task: "pick a colour"
  - name: unanswered
    model: script:ask.json
    task: "pick a colour"
  - name: from a file
    model: script:ask.json
    answers: answers.json
    task: "pick a colour"
`)
	if code, _, errs := runCLI(t, context.Background(), env, "trust", ws); code != 0 {
		t.Fatalf("trust: %s", errs) // the suite names its models: the folder is the person's
	}
	rec := filepath.Join(ws, "rec")
	code, out, errs := runCLI(t, context.Background(), env, "eval", suite, "--record", rec)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	journals, _ := filepath.Glob(filepath.Join(env["AGENTTY_HOME"], "sessions", "*", "events.jsonl"))
	var all strings.Builder
	for _, j := range journals {
		b, _ := os.ReadFile(j)
		all.Write(b)
	}
	for _, w := range []string{`"answer":"blue","by":"the case's answers"`, `"answer":"green","by":"the case's answers"`, `the case has no answer to`} {
		if !strings.Contains(all.String(), w) {
			t.Errorf("no %s in the journals", w)
		}
	}
	if err := os.Remove(filepath.Join(ws, "evals", "ask.json")); err != nil {
		t.Fatal(err) // the replay needs the recordings alone
	}
	code, out, errs = runCLI(t, context.Background(), env, "eval", suite, "--replay", rec, "--filter", "inline|file")
	if code != 0 {
		t.Errorf("replay: exit %d\n%s%s", code, out, errs)
	}
}

// A case's model in a suite of a folder nobody trusted is refused as the
// suite's is, --model or not (it names the case's own), before anything
// runs; trusted, the suite runs.
func TestUntrustedSuiteCaseNamesNoModel(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "evals", "say.json"), `{"turns":[{"answer":"scripted"}]}`)
	suite := filepath.Join(ws, "evals", "suite.yaml")
	writeFile(t, suite, "cases:\n  - name: a\n    model: script:say.json\n    task: hi\n    assert:\n      - answer_contains: scripted\n")
	env := trustEnv(t)
	code, out, errs := runCLI(t, context.Background(), env, "eval", "--workspace", ws, "--model", "offline", suite)
	if code != 2 || !strings.Contains(errs, "suite.yaml:3: model \"script:") || !strings.Contains(errs, "refused: the suite is in a workspace you have not trusted") ||
		strings.Contains(errs, "pass --model") || strings.Contains(out, "PASS") {
		t.Fatalf("untrusted: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs := runCLI(t, context.Background(), env, "trust", ws); code != 0 {
		t.Fatal(errs)
	}
	if code, out, errs := runCLI(t, context.Background(), env, "eval", "--workspace", ws, suite); code != 0 {
		t.Errorf("trusted: exit %d\n%s\n%s", code, out, errs)
	}
}
