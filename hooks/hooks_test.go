package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/hooks"
	"github.com/agentty/agentty/tools"
)

// model plays decisions in turn and keeps every request it was sent.
type model struct {
	mu        sync.Mutex
	decisions []engine.Decision
	requests  [][]engine.Message
}

func (m *model) Decide(_ context.Context, req *engine.Request) (engine.Decision, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, append([]engine.Message(nil), req.Messages...))
	if len(m.decisions) == 0 {
		return engine.Decision{Text: "done"}, nil
	}
	d := m.decisions[0]
	m.decisions = m.decisions[1:]
	return d, nil
}

// last is the last message of the n-th request.
func (m *model) last(n int) engine.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	msgs := m.requests[n]
	return msgs[len(msgs)-1]
}

func call(id, name, args string) engine.Decision {
	return engine.Decision{ToolCalls: []engine.ToolCall{{ID: id, Name: name, Args: json.RawMessage(args)}}}
}

// fixture is a workspace, hooks configured in it (as the person's own),
// and an engine with its file and shell tools.
type fixture struct {
	dir    string
	runner *hooks.Runner
	m      *model
	e      *engine.Engine
	events []engine.Event
	gate   engine.Gate
}

func newFixture(t *testing.T, hooksJSON string, decisions ...engine.Decision) *fixture {
	t.Helper()
	dir := t.TempDir()
	defs, notes, err := hooks.Parse(filepath.Join(dir, "settings.json"), "person", json.RawMessage(hooksJSON))
	if err != nil || len(notes) > 0 {
		t.Fatalf("parse: %v %v", err, notes)
	}
	f := &fixture{dir: dir, m: &model{decisions: decisions}}
	f.runner = hooks.New(defs, hooks.Env{Workspace: dir, Environ: os.Environ()})
	return f
}

func (f *fixture) run(t *testing.T, task string) engine.Result {
	t.Helper()
	ws, err := tools.OpenWorkspace(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	reg, err := engine.NewRegistry(ws.ReadFile(), ws.WriteFile(), ws.EditFile(), ws.RunShell(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	f.e = engine.New(engine.Config{Model: f.m, Tools: reg, Hooks: f.runner, Gate: f.gate})
	sink := engine.SinkFunc(func(ev engine.Event) error { f.events = append(f.events, ev); return nil })
	return f.e.Run(context.Background(), engine.NewSession("s1"), task, sink)
}

// hookRuns are the hook events of the run.
func (f *fixture) hookRuns() []engine.HookRun {
	var out []engine.HookRun
	for _, ev := range f.events {
		if hr, ok := ev.Data.(*engine.HookRun); ok {
			out = append(out, *hr)
		}
	}
	return out
}

func (f *fixture) result(id string) *engine.ToolFinished {
	for _, ev := range f.events {
		if fin, ok := ev.Data.(*engine.ToolFinished); ok && fin.ID == id {
			return fin
		}
	}
	return nil
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// hookFile writes a hook script into the workspace and returns its path.
func hookFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func hooksOf(event, matcher, command string) string {
	b, _ := json.Marshal(map[string]any{event: []any{map[string]any{"matcher": matcher, "hooks": []any{map[string]any{"type": "command", "command": command}}}}})
	return string(b)
}

// A PreToolUse hook that exits 2 blocks the call: the command does not
// run, the model is told the hook's stderr; the next call, which the hook
// lets through, runs.
func TestPreToolUseExit2BlocksTheCall(t *testing.T) {
	dir := t.TempDir()
	script := hookFile(t, dir, "guard.sh", `input=$(cat)
case "$input" in *'"command":"touch blocked'*) echo "touching blocked is not allowed here" >&2; exit 2;; esac
exit 0
`)
	f := newFixture(t, hooksOf("PreToolUse", "Bash", script),
		call("c1", "run_shell", `{"command":"touch blocked"}`),
		call("c2", "run_shell", `{"command":"touch allowed"}`))
	res := f.run(t, "touch two files")
	if res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %s %v", res.StopReason, res.Err)
	}
	if exists(f.dir, "blocked") {
		t.Error("the blocked command ran")
	}
	if !exists(f.dir, "allowed") {
		t.Error("the next command, which the hook allows, did not run")
	}
	fin := f.result("c1")
	if fin == nil || fin.Status != engine.ToolDenied || !strings.Contains(fin.Result, "touching blocked is not allowed here") {
		t.Fatalf("the blocked call's result: %+v", fin)
	}
	if got := f.m.last(1); !strings.Contains(got.Content, "touching blocked is not allowed here") {
		t.Errorf("the model was not told why: %q", got.Content)
	}
	runs := f.hookRuns()
	if len(runs) != 2 || runs[0].Decision != engine.HookDeny || runs[0].Exit != 2 || runs[0].Tool != "run_shell" || runs[1].Decision != "" {
		t.Errorf("hook events: %+v", runs)
	}
}

// askGate answers every pause, keeping what it was asked.
type askGate struct {
	action  engine.Action
	pending []engine.Pending
}

func (g *askGate) Stop(engine.Pending) bool { return false }
func (g *askGate) Wait(_ context.Context, p engine.Pending) (engine.Verdict, error) {
	g.pending = append(g.pending, p)
	return engine.Verdict{Action: g.action}, nil
}

// A hook's JSON decides as Claude Code's does: deny refuses the call with
// its reason, ask puts it to the person even for a tool that would not
// ask, allow runs a call the policy would ask about without asking.
func TestPermissionDecisions(t *testing.T) {
	for _, tc := range []struct {
		decision  string
		asked     bool
		ran       bool
		reasonFor string
	}{
		{"deny", false, false, "not on a Friday"},
		{"ask", true, true, ""},
		{"allow", false, true, ""},
	} {
		t.Run(tc.decision, func(t *testing.T) {
			dir := t.TempDir()
			script := hookFile(t, dir, "decide.sh", fmt.Sprintf(`cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":%q,"permissionDecisionReason":"not on a Friday"}}'
`, tc.decision))
			f := newFixture(t, hooksOf("PreToolUse", "Write|Edit", script), call("c1", "write_file", `{"path":"notes.txt","content":"hi"}`))
			g := &askGate{action: engine.Proceed}
			f.gate = g
			f.run(t, "write it")
			if got := exists(f.dir, "notes.txt"); got != tc.ran {
				t.Errorf("ran = %v, want %v", got, tc.ran)
			}
			asked := len(g.pending) > 0 && g.pending[0].Approval
			if asked != tc.asked {
				t.Errorf("asked the person = %v, want %v (%+v)", asked, tc.asked, g.pending)
			}
			if fin := f.result("c1"); tc.reasonFor != "" && (fin.Status != engine.ToolDenied || !strings.Contains(fin.Result, tc.reasonFor)) {
				t.Errorf("result: %+v", fin)
			}
		})
	}
}

// write_file asks by policy: allow from a hook runs it without asking;
// without the hook the same gate is asked.
func TestWithoutAHookThePolicyAsks(t *testing.T) {
	f := newFixture(t, `{}`, call("c1", "write_file", `{"path":"notes.txt","content":"hi"}`))
	g := &askGate{action: engine.Proceed}
	f.gate = g
	f.run(t, "write it")
	if len(g.pending) == 0 || !g.pending[0].Approval {
		t.Fatalf("write_file did not ask: %+v", g.pending)
	}
}

// updatedInput changes the call before it runs: the hook sends the write
// elsewhere (Claude Code's file_path, absolute) and agentty's write_file
// writes there.
func TestUpdatedInputChangesTheCall(t *testing.T) {
	dir := t.TempDir()
	script := hookFile(t, dir, "redirect.sh", `cat >/dev/null
printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"file_path":"%s/redirected.txt","content":"changed by the hook"}}}' "$CLAUDE_PROJECT_DIR"
`)
	f := newFixture(t, hooksOf("PreToolUse", "Write", script), call("c1", "write_file", `{"path":"notes.txt","content":"hi"}`))
	f.run(t, "write it")
	if exists(f.dir, "notes.txt") {
		t.Error("the call ran as the model asked, not as the hook changed it")
	}
	b, err := os.ReadFile(filepath.Join(f.dir, "redirected.txt"))
	if err != nil || string(b) != "changed by the hook" {
		t.Fatalf("redirected.txt: %q %v", b, err)
	}
	if runs := f.hookRuns(); len(runs) != 1 || string(runs[0].Input) != `{"content":"changed by the hook","path":"redirected.txt"}` {
		t.Errorf("the hook event does not hold the input it gave: %+v", runs)
	}
}

// PostToolUse runs after write_file, given the call as Claude Code would
// have made it and its response; what it says back (exit 2) reaches the
// model with the result.
func TestPostToolUseGetsTheCallAndItsResponse(t *testing.T) {
	dir := t.TempDir()
	script := hookFile(t, dir, "after.sh", `cat > "$CLAUDE_PROJECT_DIR/../post-input.json"
echo "formatted: please re-read the file" >&2
exit 2
`)
	f := newFixture(t, hooksOf("PostToolUse", "Edit|Write", script), call("c1", "write_file", `{"path":"notes.txt","content":"hi"}`))
	f.run(t, "write it")
	b, err := os.ReadFile(filepath.Join(filepath.Dir(f.dir), "post-input.json"))
	if err != nil {
		t.Fatal("the hook did not run:", err)
	}
	var in struct {
		Event     string `json:"hook_event_name"`
		Tool      string `json:"tool_name"`
		ToolUseID string `json:"tool_use_id"`
		Session   string `json:"session_id"`
		Cwd       string `json:"cwd"`
		Input     struct {
			FilePath string `json:"file_path"`
			Content  string `json:"content"`
		} `json:"tool_input"`
		Response struct {
			FilePath string `json:"filePath"`
			Success  bool   `json:"success"`
			Output   string `json:"output"`
		} `json:"tool_response"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatalf("stdin was not JSON: %v\n%s", err, b)
	}
	want := filepath.Join(f.dir, "notes.txt")
	if in.Event != "PostToolUse" || in.Tool != "Write" || in.ToolUseID != "c1" || in.Session != "s1" || in.Cwd != f.dir ||
		in.Input.FilePath != want || in.Input.Content != "hi" || in.Response.FilePath != want || !in.Response.Success || in.Response.Output == "" {
		t.Errorf("stdin: %s", b)
	}
	if got := f.m.last(1); !strings.Contains(got.Content, "[PostToolUse hook] formatted: please re-read the file") {
		t.Errorf("the model was not told: %q", got.Content)
	}
}

// UserPromptSubmit's stdout is context: the request carries it in a message
// just before the prompt; exit 2 withholds the prompt and ends the run, and the next
// prompt goes through.
func TestUserPromptSubmit(t *testing.T) {
	dir := t.TempDir()
	script := hookFile(t, dir, "prompt.sh", `input=$(cat)
case "$input" in *secret-plan*) echo "prompts about the secret plan are not sent" >&2; exit 2;; esac
echo "The sprint ends on Friday."
`)
	f := newFixture(t, hooksOf("UserPromptSubmit", "", script))
	res := f.run(t, "what is due?")
	if res.StopReason != engine.StopAnswered {
		t.Fatal(res.StopReason, res.Err)
	}
	first := f.m.requests[0]
	if len(first) != 2 || first[1].Content != "what is due?" || !strings.Contains(first[0].Content, "The sprint ends on Friday.") {
		t.Errorf("the request's messages: %+v", first)
	}
	s := engine.NewSession("s2")
	res = f.e.Run(context.Background(), s, "tell me the secret-plan", nil)
	if res.StopReason != engine.StopGuardrail || !strings.Contains(res.Err.Error(), "prompts about the secret plan are not sent") {
		t.Fatalf("a blocked prompt: %s %v", res.StopReason, res.Err)
	}
	if len(f.m.requests) != 1 || len(s.History) != 0 {
		t.Fatalf("the blocked prompt reached the model or the history: %d requests, history %v", len(f.m.requests), s.History)
	}
	if res := f.e.Run(context.Background(), s, "and now?", nil); res.StopReason != engine.StopAnswered || len(s.History) != 3 {
		t.Fatalf("the next prompt: %s %v %v", res.StopReason, res.Err, s.History)
	}
}

// A Stop hook that exits 2 keeps the run going, the model told why; given
// stop_hook_active the second time, it lets the run end.
func TestStopHookKeepsTheRunGoingOnce(t *testing.T) {
	dir := t.TempDir()
	script := hookFile(t, dir, "stop.sh", `input=$(cat)
case "$input" in *'"stop_hook_active":true'*) exit 0;; esac
echo "run the tests before you stop" >&2
exit 2
`)
	f := newFixture(t, hooksOf("Stop", "", script), engine.Decision{Text: "all done"}, engine.Decision{Text: "tests pass; done"})
	res := f.run(t, "fix it")
	if res.StopReason != engine.StopAnswered || res.Answer != "tests pass; done" {
		t.Fatalf("run: %s %q %v", res.StopReason, res.Answer, res.Err)
	}
	if len(f.m.requests) != 2 {
		t.Fatalf("%d requests, want 2", len(f.m.requests))
	}
	if got := f.m.last(1); got.Role != engine.RoleUser || !strings.Contains(got.Content, "run the tests before you stop") {
		t.Errorf("the model was not told why it goes on: %+v", got)
	}
}

// A hook that outlives its timeout is killed with what it started, and
// the call goes on as a hook that failed does: it runs.
func TestTimeoutKillsTheHookAndItsChildren(t *testing.T) {
	f := newFixture(t, `{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"sleep 30 & echo $! > ../child.pid; wait","timeout":1}]}]}`,
		call("c1", "run_shell", `{"command":"touch ran"}`))
	start := time.Now()
	f.run(t, "go")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the run waited %s for a hook with a 1 s timeout", took)
	}
	if !exists(f.dir, "ran") {
		t.Error("the call did not run after its hook timed out")
	}
	runs := f.hookRuns()
	if len(runs) != 1 || !runs[0].TimedOut || !strings.Contains(runs[0].Error, "timed out after 1s") {
		t.Fatalf("hook events: %+v", runs)
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(f.dir), "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(string(b), &pid)
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("the hook's child %d outlived its timeout", pid)
	}
}

// A hook that prints megabytes is cut at a bound.
func TestOutputIsBounded(t *testing.T) {
	f := newFixture(t, hooksOf("PostToolUse", "*", "cat >/dev/null; head -c 5000000 /dev/zero | tr '\\0' x"), call("c1", "run_shell", `{"command":"true"}`))
	f.run(t, "go")
	runs := f.hookRuns()
	if len(runs) != 1 || len(runs[0].Output) > 70<<10 || !strings.HasSuffix(runs[0].Output, "[cut at 65536 bytes]") {
		t.Fatalf("output of %d bytes: %q", len(runs[0].Output), runs[0].Output[max(0, len(runs[0].Output)-40):])
	}
}

// A replay hands back what the hooks decided, running none of them.
func TestRecordedHooksRunNothing(t *testing.T) {
	dir := t.TempDir()
	script := hookFile(t, dir, "guard.sh", `cat >/dev/null; touch "$CLAUDE_PROJECT_DIR/../hook-ran"; echo "blocked by policy" >&2; exit 2
`)
	f := newFixture(t, hooksOf("PreToolUse", "Bash", script), call("c1", "run_shell", `{"command":"touch blocked"}`))
	f.run(t, "go")
	marker := filepath.Join(filepath.Dir(f.dir), "hook-ran")
	if err := os.Remove(marker); err != nil {
		t.Fatal("the hook did not run when recorded:", err)
	}
	recorded := f.events
	g := newFixture(t, `{}`, call("c1", "run_shell", `{"command":"touch blocked"}`))
	g.runner = nil
	ws, _ := tools.OpenWorkspace(g.dir)
	defer ws.Close()
	reg, _ := engine.NewRegistry(ws.RunShell(10 * time.Second))
	e := engine.New(engine.Config{Model: g.m, Tools: reg, Hooks: hooks.Recorded(recorded)})
	var events []engine.Event
	e.Run(context.Background(), engine.NewSession("s1"), "go", engine.SinkFunc(func(ev engine.Event) error { events = append(events, ev); return nil }))
	if _, err := os.Stat(marker); err == nil {
		t.Error("the replay ran the hook")
	}
	if exists(g.dir, "blocked") {
		t.Error("the replay ran the call the recorded hook blocked")
	}
	g.events = events
	if fin := g.result("c1"); fin == nil || fin.Status != engine.ToolDenied || !strings.Contains(fin.Result, "blocked by policy") {
		t.Errorf("replayed result: %+v", fin)
	}
}

// A shell command's PostToolUse hook reads its stdout and stderr apart, as
// Claude Code gives Bash's.
func TestPostToolUseGetsTheShellsStreamsApart(t *testing.T) {
	f := newFixture(t, hooksOf("PostToolUse", "Bash", `cat > "$CLAUDE_PROJECT_DIR/../post-bash.json"`), call("c1", "run_shell", `{"command":"echo out; echo err >&2; exit 3"}`))
	f.run(t, "go")
	b, err := os.ReadFile(filepath.Join(filepath.Dir(f.dir), "post-bash.json"))
	if err != nil {
		t.Fatal("the hook did not run:", err)
	}
	var in struct {
		Event    string `json:"hook_event_name"`
		Response struct {
			Stdout, Stderr string
			Exit           int `json:"exit_code"`
		} `json:"tool_response"`
	}
	if err := json.Unmarshal(b, &in); err != nil || in.Response.Stdout != "out\n" || in.Response.Stderr != "err\n" || in.Response.Exit != 3 {
		t.Errorf("stdin: %s (%v)", b, err)
	}
}
