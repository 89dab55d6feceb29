package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine/enginetest"
)

var updateExamples = flag.Bool("update-examples", false, "record examples/triage/recordings again")

// triageDir is the shipped triage example.
var triageDir = filepath.Join("..", "examples", "triage")

// triageModel is a support model behind the real wire format: it reads the
// order named in the task, then answers JSON from the order file's
// content; what it replies to a refund demand follows the system prompt,
// as a real model's would (a prompt that is generous promises one).
func triageModel(t *testing.T) *enginetest.Server {
	orderRe := regexp.MustCompile(`A-\d{4}`)
	return enginetest.NewServerFunc(t, func(_ int, req enginetest.Request) enginetest.Reply {
		msgs, _ := req.Body["messages"].([]any)
		system, task, last := "", "", map[string]any{}
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			content, _ := mm["content"].(string)
			switch mm["role"] {
			case "system":
				system += content
			case "user":
				task = content
			}
			last = mm
		}
		answer := func(s string) enginetest.Reply { return enginetest.Reply{Body: enginetest.Answer(s)} }
		if !strings.Contains(system, "triage support messages") { // the summary step
			return answer(fmt.Sprintf("%d shipping, %d damaged, %d refund",
				strings.Count(task, "shipping"), strings.Count(task, "damaged"), strings.Count(task, "refund")))
		}
		order := orderRe.FindString(task)
		if last["role"] == "user" {
			return enginetest.Reply{Body: enginetest.ToolCallStream("call_1", "read_file", `{"path":"orders/`+order+`.json"}`, 3)}
		}
		result, _ := last["content"].(string)
		category, reply := "other", "Thank you, we are looking into it."
		switch {
		case strings.Contains(task, "money back"):
			category, reply = "refund", "The billing team will look at it within two days."
			if strings.Contains(system, "generous") {
				reply = "We will refund you in full today."
			}
		case strings.Contains(result, "cracked"):
			category, reply = "damaged", "Sorry about the cracked lid: a new one is on its way."
		case strings.Contains(result, "shipped"):
			carrier := regexp.MustCompile(`"carrier": "(\w+)"`).FindStringSubmatch(result)
			category, reply = "shipping", "It shipped with "+carrier[1]+" on 2026-11-24 and is on its way."
		}
		b, _ := json.Marshal(map[string]string{"category": category, "order": order, "reply": reply})
		return answer(string(b))
	})
}

func triageEnv(t *testing.T, srv *enginetest.Server) map[string]string {
	env := testEnv(t)
	env["OPENAI_API_KEY"] = "sk-test-triage"
	env["OPENAI_BASE_URL"] = srv.URL()
	return env
}

// TestTriageExample runs the shipped example as its README says: the suite
// replays its committed recordings with no model (a recording gone stale,
// the agent's prompt or tools changed, fails here), the workflow triages
// three messages with a typed fan-in and sums them up, and a comparison
// of the agent's prompt with prompt-b.md against a live model shows the
// refund case breaking on the guardrail.
func TestTriageExample(t *testing.T) {
	abs, err := filepath.Abs(triageDir)
	if err != nil {
		t.Fatal(err)
	}
	suite, recs := filepath.Join(abs, "evals.yaml"), filepath.Join(abs, "recordings")
	srv := triageModel(t)
	if *updateExamples {
		os.RemoveAll(recs)
		code, out, errs := runCLI(t, context.Background(), triageEnv(t, srv), "eval", suite, "--workspace", abs, "--model", "gpt-4o-mini", "--record", recs)
		if code != 0 {
			t.Fatalf("recording: exit %d\n%s%s", code, out, errs)
		}
	}
	if code, _, errs := runCLI(t, context.Background(), testEnv(t), "eval", suite, "--replay", recs); code != 2 || !strings.Contains(errs, "run it with --workspace") {
		t.Errorf("the suite run from another folder: exit %d: %s", code, errs)
	}
	code, out, errs := runCLI(t, context.Background(), testEnv(t), "eval", suite, "--workspace", abs, "--replay", recs)
	if code != 0 || strings.Count(out, "PASS") != 3 {
		t.Fatalf("the recordings replayed: exit %d\n%s%s", code, out, errs)
	}

	code, out, errs = runCLI(t, context.Background(), triageEnv(t, srv), "workflow", "run", "triage-all", "--workspace", abs, "--model", "gpt-4o-mini",
		"--input", `messages=["Order A-1002 has not arrived after a week.","My teapot from order A-1003 came with a cracked lid.","I want my money back for order A-1004."]`)
	if code != 0 {
		t.Fatalf("the workflow: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"- A-1002: shipping: It shipped with DHL", "- A-1003: damaged:", "- A-1004: refund: The billing team", "1 shipping, 1 damaged, 1 refund"} {
		if !strings.Contains(out, want) {
			t.Errorf("the workflow's output lacks %q:\n%s", want, out)
		}
	}

	code, out, errs = runCLI(t, context.Background(), triageEnv(t, srv), "eval", suite, "--workspace", abs, "--replay", recs,
		"--variants", filepath.Join(abs, ".agentty", "agents", "triage.md")+","+filepath.Join(abs, "prompt-b.md"), "--model", "gpt-4o-mini")
	t.Logf("agentty eval evals.yaml --replay recordings --variants triage.md,prompt-b.md:\n%s", out)
	if code != 1 {
		t.Errorf("a variant fails a case: want exit 1, got %d\n%s", code, errs)
	}
	for _, want := range []string{
		"refund demand  passed    passed     failed",
		"guardrail no-refund-promise (output) stopped the run",
		"1 of 3 cases differ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the comparison lacks %q", want)
		}
	}
	if code, _, errs := runCLI(t, context.Background(), triageEnv(t, srv), "eval", suite, "--workspace", abs, "--replay", recs, "--compare"); code != 2 || !strings.Contains(errs, "name the model with --model") {
		t.Errorf("--compare with no model: exit %d: %s", code, errs)
	}
	code, out, errs = runCLI(t, context.Background(), triageEnv(t, srv), "eval", suite, "--workspace", abs, "--replay", recs, "--compare", "--model", "gpt-4o-mini")
	if code != 0 || !strings.Contains(out, "0 of 3 cases differ") {
		t.Errorf("--compare of the unchanged agent: exit %d\n%s%s", code, out, errs)
	}
}

// TestTriageRecordingGoneStale: the example's agent with its prompt changed
// replays its recordings no more, and the suite says which line changed.
func TestTriageRecordingGoneStale(t *testing.T) {
	ws := t.TempDir()
	if err := os.CopyFS(ws, os.DirFS(triageDir)); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(ws, ".agentty", "agents", "triage.md")
	b, err := os.ReadFile(agent)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(agent, []byte(strings.Replace(string(b), "Never promise a refund", "Never promise a refund, ever", 1)), 0o644)
	code, out, errs := runCLI(t, context.Background(), testEnv(t), "eval", filepath.Join(ws, "evals.yaml"), "--workspace", ws, "--replay", filepath.Join(ws, "recordings"))
	if code != 1 || !strings.Contains(out, "needs a new recording") {
		t.Fatalf("a changed prompt replayed: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"- Never promise a refund: say that the billing team will look at it.", "+ Never promise a refund, ever: say that"} {
		if !strings.Contains(out+errs, want) {
			t.Errorf("the suite's report lacks %q:\n%s%s", want, out, errs)
		}
	}
}

// TestVariantsRefuseAFIFO: a --variants file that is a FIFO is refused at
// once, not waited on, and the next good comparison runs.
func TestVariantsRefuseAFIFO(t *testing.T) {
	abs, _ := filepath.Abs(triageDir)
	fifo := filepath.Join(t.TempDir(), "prompt.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	srv := triageModel(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, _, errs := runCLI(t, context.Background(), triageEnv(t, srv), "eval", filepath.Join(abs, "evals.yaml"), "--workspace", abs,
			"--variants", fifo+","+filepath.Join(abs, "prompt-b.md"), "--model", "gpt-4o-mini")
		if code != 2 || !strings.Contains(errs, "prompt.fifo") {
			t.Errorf("a FIFO variant: exit %d: %s", code, errs)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("agentty eval waits on a FIFO")
	}
	code, out, errs := runCLI(t, context.Background(), triageEnv(t, srv), "eval", filepath.Join(abs, "evals.yaml"), "--workspace", abs,
		"--variants", filepath.Join(abs, ".agentty", "agents", "triage.md")+","+filepath.Join(abs, "prompt-b.md"), "--model", "gpt-4o-mini")
	if code != 1 || !strings.Contains(out, "1 of 3 cases differ") {
		t.Errorf("the next comparison: exit %d\n%s%s", code, out, errs)
	}
}

// TestCaseFromAnAgentSession: --from-session of a session run as the
// triage agent says the agent, asserts its output schema, and the case,
// pasted into a suite of that agent, passes.
func TestCaseFromAnAgentSession(t *testing.T) {
	abs, _ := filepath.Abs(triageDir)
	srv := triageModel(t)
	env := triageEnv(t, srv)
	code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", abs, "--agent", "triage", "--model", "gpt-4o-mini", "Order A-1002 has not arrived. Where is it?")
	if code != 0 {
		t.Fatalf("the run: exit %d: %s", code, errs)
	}
	id := strings.TrimSpace(regexp.MustCompile(`session: (\w+)`).FindStringSubmatch(errs)[1])
	code, out, errs := runCLI(t, context.Background(), env, "eval", "--from-session", id, "--workspace", abs)
	if code != 0 || !strings.Contains(out, "# it ran as agent triage") || !strings.Contains(out, "\n    agent: triage\n") || !strings.Contains(out, `answer_json_schema: '{"properties":{"category":{"enum"`) {
		t.Fatalf("--from-session: exit %d\n%s%s", code, out, errs)
	}
	// Appended to the shipped suite (agentty eval --from-session ID >> evals.yaml), as eval -h shows.
	b, _ := os.ReadFile(filepath.Join(abs, "evals.yaml"))
	suite := filepath.Join(t.TempDir(), "evals.yaml")
	os.WriteFile(suite, append(b, strings.ReplaceAll(out, "name: Order A-1002", "name: from a session, Order A-1002")...), 0o644)
	if code, out, errs := runCLI(t, context.Background(), env, "eval", suite, "--workspace", abs, "--model", "gpt-4o-mini"); code != 0 || !strings.Contains(out, "4 passed") {
		t.Errorf("the case appended: exit %d\n%s%s", code, out, errs)
	}
}

// TestCompareGivesTheRecordedResults: --compare's live runs get the tools'
// recorded results where the calls match: with the order file changed
// since the recording (another carrier), the live answer still says what
// the recorded file said, and no case differs.
func TestCompareGivesTheRecordedResults(t *testing.T) {
	ws := t.TempDir()
	if err := os.CopyFS(ws, os.DirFS(triageDir)); err != nil {
		t.Fatal(err)
	}
	order := filepath.Join(ws, "orders", "A-1002.json")
	b, _ := os.ReadFile(order)
	os.WriteFile(order, []byte(strings.Replace(string(b), "DHL", "UPS", 1)), 0o644)
	srv := triageModel(t)
	code, out, errs := runCLI(t, context.Background(), triageEnv(t, srv), "eval", filepath.Join(ws, "evals.yaml"), "--workspace", ws,
		"--replay", filepath.Join(ws, "recordings"), "--compare", "--model", "gpt-4o-mini")
	if code != 0 || !strings.Contains(out, "0 of 3 cases differ") || strings.Contains(out, "UPS") {
		t.Errorf("--compare with an order changed since the recording: exit %d\n%s%s", code, out, errs)
	}
	// Run live without the recordings, the change shows.
	code, out, _ = runCLI(t, context.Background(), triageEnv(t, srv), "eval", filepath.Join(ws, "evals.yaml"), "--workspace", ws, "--model", "gpt-4o-mini")
	if code != 1 || !strings.Contains(out, "UPS") {
		t.Errorf("live with the changed order: exit %d\n%s", code, out)
	}
}
