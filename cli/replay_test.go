package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/engine/replay"
	"github.com/agentty/agentty/sessions"
)

// recordSession runs tasks with the offline model in a new session of
// env's data folder, in workspace ws, and returns its id.
func recordSession(t *testing.T, env map[string]string, ws string, tasks ...string) string {
	t.Helper()
	id := ""
	for _, task := range tasks {
		args := []string{"run", "--workspace", ws, "--model", "offline"}
		if id != "" {
			args = append(args, "--session", id)
		}
		code, _, errs := runCLI(t, context.Background(), env, append(args, task)...)
		if code != 0 {
			t.Fatalf("run %q: exit %d: %s", task, code, errs)
		}
		if id == "" {
			id = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lastLine(errs)), "session:"))
		}
	}
	return id
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestReplay: a recorded session replays with no model call (its model a
// server that counts requests) and no difference while the tools answer
// the same; a changed file is reported as a difference (exit 1); --until
// plays the recording up to a step and goes on live.
func TestReplay(t *testing.T) {
	env := agentEnv(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("alpha\nbeta\ngamma\n"), 0o600)
	id := recordSession(t, env, ws, "remember that my name is Ada", "what is 17*23?", "read notes.txt")

	srv := enginetest.NewServer(t) // any request to it is a model call
	code, out, errs := runCLI(t, context.Background(), env, "replay", id, "--workspace", ws, "--model", "gpt-4o", "--base-url", srv.URL())
	if code != 0 || !strings.Contains(out, "0 differ") {
		t.Fatalf("unchanged replay: exit %d\n%s%s", code, out, errs)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the replay sent %d requests to a model server", n)
	}
	store, _ := sessions.Open(env["AGENTTY_HOME"])
	list, _ := store.List()
	if len(list) != 2 {
		t.Fatalf("%d sessions after the replay, want the recording and its replay", len(list))
	}

	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("alpha\nBETA\ngamma\n"), 0o600)
	code, out, _ = runCLI(t, context.Background(), env, "replay", id, "--workspace", ws, "--json")
	var rep struct {
		Differences []replay.Difference `json:"differences"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if code != 1 || len(rep.Differences) != 1 || rep.Differences[0].Tool != "read_file" || len(rep.Differences[0].Diff) != 2 ||
		!strings.HasPrefix(rep.Differences[0].Diff[0], "- ") || !strings.HasSuffix(rep.Differences[0].Diff[0], "beta") ||
		!strings.HasPrefix(rep.Differences[0].Diff[1], "+ ") || !strings.HasSuffix(rep.Differences[0].Diff[1], "BETA") {
		t.Errorf("changed file: exit %d, %+v", code, rep.Differences)
	}

	// Up to step 2 (the first run), then live with the offline model: the
	// later runs are decided anew.
	live := writeScript(t, `{"turns":[{"answer":"decided live"}]}`)
	code, out, errs = runCLI(t, context.Background(), env, "replay", id, "--workspace", ws, "--until", "2", "--model", "script:"+live)
	if code != 0 || !strings.Contains(out, "went on live with script:") {
		t.Fatalf("--until: exit %d\n%s%s", code, out, errs)
	}
	newID := strings.TrimSuffix(strings.Fields(out[strings.Index(out, "the new session is "):])[4], "\n")
	l, err := store.Load(newID)
	if err != nil {
		t.Fatal(err)
	}
	var answers []string
	for _, ev := range l.Events {
		if d, ok := ev.Data.(*engine.RunFinished); ok {
			answers = append(answers, d.Answer)
		}
	}
	// Run 1 (steps 1–2) replayed; run 2 decided live from step 3, and the
	// replay stops there (the fork is the live run's).
	if len(answers) != 2 || !strings.Contains(answers[0], "Ada") || answers[1] != "decided live" {
		t.Errorf("after --until 2: answers %q", answers)
	}
}

// TestReplayRefusesAChangedRequest: a recording made with another system
// prompt is not replayed silently.
func TestReplayRefusesAChangedRequest(t *testing.T) {
	env := agentEnv(t)
	ws := t.TempDir()
	id := recordSession(t, env, ws, "what is 6*7?")
	writeFile(t, env["AGENTTY_CONFIG"], `{"system_prompt": "You are a different agent now, with a much longer prompt than before."}`)
	code, out, errs := runCLI(t, context.Background(), env, "replay", id, "--workspace", ws)
	if code != 1 || !strings.Contains(errs, "changed since it was recorded") || !strings.Contains(errs, "system prompt") || out != "" {
		t.Errorf("exit %d: stdout %q, stderr %s", code, out, errs)
	}
	store, _ := sessions.Open(env["AGENTTY_HOME"])
	if list, _ := store.List(); len(list) != 1 {
		t.Errorf("a refused replay left %d sessions, want only the recording", len(list))
	}
}

// TestReplayAWorkflowSession: a workflow's session replays with the
// workflow's engine (its task agents among the tools, as recorded), its
// tool results compared, and is framed as a workflow again.
func TestReplayAWorkflowSession(t *testing.T) {
	env := agentEnv(t)
	code, _, errs := runCLI(t, context.Background(), env, "workflow", "run", filepath.Join("..", "examples", "workflows", "arithmetic.yaml"), "--model", "offline")
	if code != 0 {
		t.Fatalf("workflow run: exit %d: %s", code, errs)
	}
	id := strings.TrimSpace(strings.TrimPrefix(strings.Split(errs, "\n")[0], "session:"))
	code, out, errs := runCLI(t, context.Background(), env, "replay", id)
	if code != 0 || !strings.Contains(out, "6 tool calls compared, 0 differ") {
		t.Fatalf("replay: exit %d\n%s\n%s", code, out, errs)
	}
	replayed := strings.Fields(strings.SplitN(out, " as ", 2)[1])[0]
	code, shown, _ := runCLI(t, context.Background(), env, "sessions", "export", strings.TrimSuffix(replayed, ":"), "--format", "json")
	if code != 0 || !strings.Contains(shown, `"workflow_finished"`) {
		t.Errorf("the replayed session is not framed as the workflow (exit %d)", code)
	}
}

// TestReplayAWorkflowWithoutTheStepsModels: a workflow whose task step
// names a model of a server is replayed with no key and no server: the
// recording stands for the step's model, which is not made.
func TestReplayAWorkflowWithoutTheStepsModels(t *testing.T) {
	srv := enginetest.NewServer(t, enginetest.Reply{Body: enginetest.Answer("forty", "-two")})
	file := filepath.Join(t.TempDir(), "asks.yaml")
	os.WriteFile(file, []byte("name: asks\nsteps:\n  - id: ask\n    task: what is 6*7?\n    model: remote-model\n"), 0o600)
	env := agentEnv(t)
	env["OPENAI_BASE_URL"] = srv.URL()
	code, _, errs := runCLI(t, context.Background(), env, "workflow", "run", file, "--model", "offline")
	if code != 0 {
		t.Fatalf("workflow run: exit %d: %s", code, errs)
	}
	id := strings.TrimSpace(strings.TrimPrefix(strings.Split(errs, "\n")[0], "session:"))
	delete(env, "OPENAI_BASE_URL")
	code, out, errs := runCLI(t, context.Background(), env, "replay", id)
	if code != 0 || !strings.Contains(out, "0 differ") {
		t.Errorf("replay with no server: exit %d\n%s\n%s", code, out, errs)
	}
}

// A session run as an agent replays as that agent with no flag: its
// tools and prompt are the agent's, as recorded.
func TestReplayUsesTheJournaledAgent(t *testing.T) {
	env := agentEnv(t)
	ws := t.TempDir()
	writeAgent(t, filepath.Join(filepath.Dir(env["AGENTTY_CONFIG"]), "agents"), "counter.md",
		agentFile("counter", "tools: [calculator]\n", "You count."))
	code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "offline", "--agent", "counter", "what is 6*7?")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	id := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lastLine(errs)), "session:"))
	code, out, errs := runCLI(t, context.Background(), env, "replay", id, "--workspace", ws)
	if code != 0 || strings.Contains(errs, "changed since it was recorded") {
		t.Errorf("replay of an --agent session with no flags: exit %d: %s %s", code, out, errs)
	}
}

// TestReplayOfAShellSessionSaysHow: a session that ran with the shell
// allowed, replayed without it, is refused saying that --allow-shell --yes
// replays it (not that it must be recorded again); with them it replays
// (issue 54's smaller items).
func TestReplayOfAShellSessionSaysHow(t *testing.T) {
	env := agentEnv(t)
	ws := t.TempDir()
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"run_shell","arguments":{"command":"echo hi"}}]},{"answer":"said hi"}]}`)
	code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "script:"+sc, "--allow-shell", "--yes", "say hi")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	id := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lastLine(errs)), "session:"))
	code, _, errs = runCLI(t, context.Background(), env, "replay", id, "--workspace", ws)
	if code != 1 || !strings.Contains(errs, "replay it with --allow-shell --yes") || strings.Contains(errs, "record the session again:") {
		t.Errorf("replay without the shell: exit %d, %s", code, errs)
	}
	if code, out, errs := runCLI(t, context.Background(), env, "replay", id, "--workspace", ws, "--allow-shell", "--yes"); code != 0 || !strings.Contains(out, "0 differ") {
		t.Errorf("replay with --allow-shell --yes: exit %d, %q %s", code, out, errs)
	}
}
