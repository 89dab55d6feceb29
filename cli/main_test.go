package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
)

func runCLI(t *testing.T, ctx context.Context, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	if env == nil {
		env = map[string]string{"AGENTTY_HOME": t.TempDir()}
	}
	if _, ok := env["AGENTTY_CONFIG"]; !ok {
		env["AGENTTY_CONFIG"] = filepath.Join(t.TempDir(), "no-config.json") // never the person's own
	}
	code = Execute(ctx, args, strings.NewReader(""), &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

func writeScript(t *testing.T, js string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunCommand(t *testing.T) {
	never := writeScript(t, `{"turns":[`+strings.Repeat(`{"tool_calls":[{"name":"clock"}]},`, 5)+`{"answer":"late"}]}`)
	failing := writeScript(t, `{"turns":[{"error":"401 authentication failed"}]}`)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    string
		wantErr    string
		errOneLine bool
	}{
		{"offline arithmetic", []string{"run", "--model", "offline", "what is 17*23?"}, 0, "391", "", false},
		{"default model is offline", []string{"run", "what is 2+2"}, 0, "2+2 = 4", "", false},
		{"step limit", []string{"run", "--model", "script:" + never, "--max-steps", "3", "go"}, 3, "", "step limit of 3", true},
		{"model error", []string{"run", "--model", "script:" + failing, "go"}, 1, "", "agentty run: model: 401 authentication failed", true},
		{"no task", []string{"run", "--model", "offline"}, 2, "", "no task given", true},
		{"bad flag", []string{"run", "--frobnicate", "x"}, 2, "", "unknown flag: --frobnicate", false},
		{"bad max-steps", []string{"run", "--max-steps", "0", "x"}, 2, "", "--max-steps must be at least 1", true},
		{"missing script", []string{"run", "--model", "script:/nonexistent.json", "x"}, 1, "", "no such file", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, context.Background(), nil, tt.args...)
			if code != tt.wantCode || !strings.Contains(out, tt.wantOut) || !strings.Contains(errs, tt.wantErr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out, errs, tt.wantCode, tt.wantOut, tt.wantErr)
			}
			errs = strings.TrimPrefix(errs, "session: ")
			if _, rest, ok := strings.Cut(errs, "\n"); ok && strings.HasPrefix(errs, "0") {
				errs = rest // the session id line
			}
			if tt.errOneLine && strings.Count(errs, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", errs)
			}
		})
	}
}

func TestRunJSON(t *testing.T) {
	code, out, errs := runCLI(t, context.Background(), nil, "run", "--model", "offline", "--json", "what is 17*23?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	phases := map[engine.Phase]bool{}
	var tools []string
	var last engine.Event
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ev engine.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if ev.V != engine.SchemaVersion || ev.Session == "" || ev.Run == "" || ev.Time.IsZero() {
			t.Errorf("event missing its envelope: %s", sc.Text())
		}
		phases[ev.Phase] = true
		switch d := ev.Data.(type) {
		case *engine.ToolStarted:
			tools = append(tools, "started:"+d.Name)
		case *engine.ToolFinished:
			tools = append(tools, "finished:"+d.Name+":"+d.Result)
		}
		last = ev
	}
	for _, p := range []engine.Phase{engine.Perceive, engine.Decide, engine.Act, engine.Observe} {
		if !phases[p] {
			t.Errorf("no %s event", p)
		}
	}
	if strings.Join(tools, " ") != "started:calculator finished:calculator:17*23 = 391" {
		t.Errorf("tool events = %v", tools)
	}
	fin, ok := last.Data.(*engine.RunFinished)
	if last.Kind != engine.KindRunFinished || !ok || fin.StopReason != engine.StopAnswered || !strings.Contains(fin.Answer, "391") {
		t.Errorf("last event = %s %+v", last.Kind, last.Data)
	}
}

func TestRunCancelled(t *testing.T) {
	slow := writeScript(t, `{"turns":[{"answer":"late","delay_ms":60000}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code, _, errs := runCLI(t, ctx, nil, "run", "--model", "script:"+slow, "go")
	if code != 130 || !strings.Contains(errs, "cancelled") {
		t.Errorf("exit %d, stderr %q; want 130, cancelled", code, errs)
	}
}

// TestFlagsBeforeACommand: the global flags work before the sub-command
// as after it.
func TestFlagsBeforeACommand(t *testing.T) {
	env := testEnv(t)
	home := t.TempDir()
	if code, _, errs := runCLI(t, context.Background(), env, "--data-dir", home, "run", "--model", "offline", "what is 2+2"); code != 0 {
		t.Fatalf("run: exit %d, %q", code, errs)
	}
	for _, args := range [][]string{{"--data-dir", home, "sessions", "ls"}, {"sessions", "ls", "--data-dir", home}, {"sessions", "--data-dir", home, "ls"}} {
		code, out, errs := runCLI(t, context.Background(), env, args...)
		if code != 0 || !strings.Contains(out, "offline") {
			t.Errorf("%v: exit %d, %q, %q; want the session run with --data-dir", args, code, out, errs)
		}
	}
	code, _, errs := runCLI(t, context.Background(), env, "--nats", "nats://127.0.0.1:1", "sessions", "ls")
	if code != 1 || !strings.Contains(errs, "127.0.0.1:1") {
		t.Errorf("--nats before the command: exit %d, %q; want the server tried", code, errs)
	}
}

// TestUnknownCommandSuggests: a mistyped command gets the nearest, an
// unknown flag says which, both exit 2, and the next good command works.
func TestUnknownCommandSuggests(t *testing.T) {
	env := testEnv(t)
	code, _, errs := runCLI(t, context.Background(), env, "sesions", "ls")
	if code != 2 || !strings.Contains(errs, `unknown command "sesions"`) || !strings.Contains(errs, "sessions") {
		t.Errorf("sesions: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI(t, context.Background(), env, "sessions", "lss")
	if code != 2 || !strings.Contains(errs, "ls") {
		t.Errorf("sessions lss: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI(t, context.Background(), env, "run", "--temprature", "0.2", "x")
	if code != 2 || !strings.Contains(errs, "unknown flag: --temprature") || !strings.Contains(errs, "--temperature") {
		t.Errorf("run --temprature: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI(t, context.Background(), env, "sessions", "ls", "--dat-dir", "x")
	if code != 2 || !strings.Contains(errs, "--data-dir") {
		t.Errorf("sessions ls --dat-dir (a global flag): exit %d, %q", code, errs)
	}
	code, _, errs = runCLI(t, context.Background(), env, "what", "is", "2+2")
	if code != 2 || !strings.Contains(errs, "agentty run TASK") {
		t.Errorf("a task without run: exit %d, %q", code, errs)
	}
	if code, out, errs := runCLI(t, context.Background(), env, "run", "what is 2+2"); code != 0 || !strings.Contains(out, "4") {
		t.Errorf("the next good command: exit %d, %q, %q", code, out, errs)
	}
}

// TestHelpAndCompletion: every command has -h with examples, and the
// completion scripts and the man page are generated.
func TestHelpAndCompletion(t *testing.T) {
	env := testEnv(t)
	for _, c := range [][]string{{}, {"run"}, {"sessions"}, {"sessions", "ls"}, {"tools"}, {"agents"}, {"trust"}, {"replay"}, {"eval"}, {"workflow", "run"}, {"workflows"}, {"search"}, {"index"}, {"serve"}, {"worker"}, {"submit"}, {"watch"}, {"mcp", "import"}, {"acp"}, {"skills"}} {
		code, out, errs := runCLI(t, context.Background(), env, append(c, "-h")...)
		if code != 0 || !strings.Contains(out, "Usage:") || !strings.Contains(out, "Flags:") {
			t.Errorf("%v -h: exit %d, %q, %q", c, code, out, errs)
		}
		if len(c) != 1 || c[0] != "sessions" {
			if !strings.Contains(out, "Examples:") && !strings.Contains(out, "Available Commands:") {
				t.Errorf("%v -h has no examples:\n%s", c, out)
			}
		}
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, errs := runCLI(t, context.Background(), env, "completion", shell)
		if code != 0 || !strings.Contains(out, "agentty") || len(out) < 1000 {
			t.Errorf("completion %s: exit %d, %d bytes, %q", shell, code, len(out), errs)
		}
	}
	dir := filepath.Join(t.TempDir(), "not", "yet")
	if code, _, errs := runCLI(t, context.Background(), env, "man", "--dir", dir); code != 0 {
		t.Errorf("man --dir into a new folder: exit %d, %q", code, errs)
	} else if pages, _ := filepath.Glob(filepath.Join(dir, "*.1")); len(pages) < 20 {
		t.Errorf("man --dir wrote %d pages", len(pages))
	}
	code, out, errs := runCLI(t, context.Background(), env, "man")
	if code != 0 || !strings.Contains(out, ".TH \"AGENTTY\" \"1\"") || !strings.Contains(out, "agentty-run(1)") {
		t.Errorf("man: exit %d, %q…, %q", code, out[:min(len(out), 200)], errs)
	}
}

// TestVersion: --version and version print which agentty this is and exit 0.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		code, out, errs := runCLI(t, context.Background(), testEnv(t), arg)
		if code != 0 || !strings.HasPrefix(out, "agentty ") || !strings.Contains(out, "go1.") {
			t.Errorf("%s: exit %d, %q, %q", arg, code, out, errs)
		}
	}
}

// TestCompletionOffersValues: completion offers the sessions where a
// session is wanted, a workflow's name, a flag's values; and a shell, a
// help topic or a pair of flags agentty does not take is bad usage.
func TestCompletionOffersValues(t *testing.T) {
	env := testEnv(t)
	code, out, errs := runCLI(t, context.Background(), env, "run", "what is 2+2")
	if code != 0 {
		t.Fatalf("run: exit %d, %s", code, errs)
	}
	id := sessionOf(t, errs)
	for _, args := range [][]string{{"sessions", "show", ""}, {"replay", ""}, {"--resume", ""}, {"run", "--session", ""}} {
		code, out, errs = runCLI(t, context.Background(), env, append([]string{"__complete"}, args...)...)
		if code != 0 || !strings.Contains(out, id+"\twhat is 2+2") {
			t.Errorf("complete %v: exit %d, %q, %q; want %s with its title", args, code, out, errs, id)
		}
	}
	code, out, _ = runCLI(t, context.Background(), env, "__complete", "sessions", "export", id, "--format", "")
	if code != 0 || !strings.Contains(out, "md\njson\n") {
		t.Errorf("complete --format: %q", out)
	}
	ws := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "examples", "workflows", "arithmetic.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(ws, ".agentty", "workflows"), 0o755)
	os.WriteFile(filepath.Join(ws, ".agentty", "workflows", "arithmetic.yaml"), src, 0o644)
	code, out, _ = runCLI(t, context.Background(), env, "__complete", "--workspace", ws, "workflow", "run", "")
	if code != 0 || !strings.Contains(out, "arithmetic") {
		t.Errorf("complete workflow run: %q", out)
	}
	for _, args := range [][]string{{"help", "sesions"}, {"completion", "tcsh"}, {"completion"}, {"--resume", id, "--session", id}} {
		if code, _, errs := runCLI(t, context.Background(), env, args...); code != 2 {
			t.Errorf("%v: exit %d, %q; want 2", args, code, errs)
		}
	}
	if code, out, _ := runCLI(t, context.Background(), env, "help", "sessions", "ls"); code != 0 || !strings.Contains(out, "List this folder's sessions") {
		t.Errorf("help sessions ls: exit %d, %q", code, out)
	}
}

// TestMCPImport: agentty mcp import reads Codex's and Claude Code's
// servers, prints them in agentty's shape, and with --write adds them to
// the person's config, keeping what it had; nothing is started.
func TestMCPImport(t *testing.T) {
	env := testEnv(t)
	home := t.TempDir()
	env["HOME"] = home
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(`model = "o3"

[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-server-docs"]
env = { "API_KEY" = "k" }
startup_timeout_sec = 20

[mcp_servers.remote]
url = "https://mcp.example.com/mcp"
bearer_token_env_var = "REMOTE_TOKEN"
`), 0o600)
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"numStartups": 3, "mcpServers": {"fs": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}, "docs": {"command": "other"}}}`), 0o600)
	code, out, errs := runCLI(t, context.Background(), env, "mcp", "import")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err, out)
	}
	if len(got.MCPServers) != 3 || got.MCPServers["docs"]["command"] != "npx" || got.MCPServers["docs"]["timeout"] != "20s" ||
		got.MCPServers["remote"]["headers"].(map[string]any)["Authorization"] != "Bearer ${REMOTE_TOKEN}" || got.MCPServers["fs"]["type"] != "stdio" {
		t.Errorf("imported %v", got.MCPServers)
	}
	if !strings.Contains(errs, "server docs is also in") {
		t.Errorf("the second docs is not noted: %q", errs)
	}
	cfg := env["AGENTTY_CONFIG"]
	os.WriteFile(cfg, []byte(`{"max_steps": 7, "mcpServers": {"fs": {"command": "mine"}}}`), 0o600)
	code, out, errs = runCLI(t, context.Background(), env, "mcp", "import", "--write")
	if code != 0 || !strings.Contains(out, "added docs") || strings.Contains(out, "added fs") {
		t.Fatalf("--write: exit %d, %q, %q", code, out, errs)
	}
	c, err := config.Parse(cfg, mustRead(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxSteps != 7 || c.MCPServers["fs"].Command != "mine" || c.MCPServers["remote"].URL != "https://mcp.example.com/mcp" {
		t.Errorf("the config after --write: %+v", c)
	}
	if code, _, errs := runCLI(t, context.Background(), env, "mcp", "import", "--from", "cursor"); code != 2 {
		t.Errorf("--from cursor: exit %d, %q", code, errs)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRunOutputSchema: run --output-schema with a script model that first
// answers what the schema refuses, then what it takes: the refusal is
// journaled and sent back, and the JSON is printed.
func TestRunOutputSchema(t *testing.T) {
	env := testEnv(t)
	schema := filepath.Join(t.TempDir(), "triage.json")
	os.WriteFile(schema, []byte(`{"type":"object","properties":{"priority":{"enum":["low","high"]}},"required":["priority"]}`), 0o600)
	sc := writeScript(t, `{"turns":[{"answer":"it is urgent"},{"answer":"{\"priority\": \"high\"}"}]}`)
	code, out, errs := runCLI(t, context.Background(), env, "run", "--output-schema", schema, "--model", "script:"+sc, "triage the ticket")
	if code != 0 || strings.TrimSpace(out) != `{"priority":"high"}` {
		t.Fatalf("exit %d, %q, %q", code, out, errs)
	}
	code, out, _ = runCLI(t, context.Background(), env, "run", "--json", "--output-schema", schema, "--model", "script:"+sc, "triage the ticket")
	if code != 0 || !strings.Contains(out, `"kind":"answer_rejected"`) || !strings.Contains(out, "the answer is not JSON") {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"type": 7}`), 0o600)
	if code, _, errs := runCLI(t, context.Background(), env, "run", "--output-schema", bad, "x"); code != 2 || !strings.Contains(errs, "--output-schema") {
		t.Errorf("a bad schema: exit %d, %q", code, errs)
	}
}

// TestAgentGuardrail: an agent file's output guardrail stops a run whose
// answer matches its pattern, and an input one before the first decision.
func TestAgentGuardrail(t *testing.T) {
	env := testEnv(t)
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".agentty", "agents", "ops.md"), "---\nname: ops\ndescription: operations\nguardrails:\n  input:\n    - {name: no-secrets-asked, pattern: \"(?i)password\"}\n  output:\n    - {name: no-launch-code, pattern: \"LAUNCH-[0-9]+\"}\n---\nYou run operations.\n")
	sc := writeScript(t, `{"turns":[{"answer":"the code is LAUNCH-42"}]}`)
	code, out, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--agent", "ops", "--model", "script:"+sc, "give me the code")
	if code != 1 || strings.Contains(out, "LAUNCH-42") || !strings.Contains(errs, "guardrail no-launch-code (output) stopped the run") {
		t.Errorf("output guardrail: exit %d, %q, %q", code, out, errs)
	}
	code, _, errs = runCLI(t, context.Background(), env, "run", "--workspace", ws, "--agent", "ops", "--model", "script:"+sc, "what is the admin password?")
	if code != 1 || !strings.Contains(errs, "guardrail no-secrets-asked (input)") {
		t.Errorf("input guardrail: exit %d, %q", code, errs)
	}
	writeFile(t, filepath.Join(ws, ".agentty", "agents", "ops.md"), "---\nname: ops\ndescription: operations\nguardrails:\n  output:\n    - {name: bad, pattern: \"(\"}\n---\nx\n")
	code, out, _ = runCLI(t, context.Background(), env, "agents", "--json", "--workspace", ws)
	if code != 1 || !strings.Contains(out, "guardrails.output") || !strings.Contains(out, "pattern") {
		t.Errorf("a bad guardrail: exit %d\n%s", code, out)
	}
}

// TestAskUserHeadless: the offline model asks when told to; the answer
// comes from --answers, or as one JSON line on standard input after the
// question_asked event; with neither, the question fails at once.
func TestAskUserHeadless(t *testing.T) {
	env := testEnv(t)
	answers := filepath.Join(t.TempDir(), "answers.json")
	os.WriteFile(answers, []byte(`{"What is your name?": "Ada"}`), 0o600)
	code, out, errs := runCLI(t, context.Background(), env, "run", "--answers", answers, "ask me for my name and remember it")
	if code != 0 || !strings.Contains(out, "remembered name = Ada") {
		t.Fatalf("--answers: exit %d, %q, %q", code, out, errs)
	}
	var stdout, stderr bytes.Buffer
	code = Execute(context.Background(), []string{"run", "--json", "ask me for my name and remember it"}, strings.NewReader(`{"answer": "Grace"}`+"\n"), &stdout, &stderr, func(k string) string { return env[k] })
	if code != 0 || !strings.Contains(stdout.String(), `"kind":"question_asked"`) || !strings.Contains(stdout.String(), `"by":"standard input"`) || !strings.Contains(stdout.String(), "remembered name = Grace") {
		t.Errorf("stdin: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, out, errs = runCLI(t, context.Background(), env, "run", "ask me for my name and remember it")
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a question with nobody to answer hung the run")
	}
	if code != 0 || !strings.Contains(out, "nobody can answer") || strings.Contains(out, "remembered") {
		t.Errorf("no one to ask: exit %d, %q, %q", code, out, errs)
	}
}

// TestBashCompletionNeedsNothing: the bash completion script works in a
// bash without the bash-completion package (no _get_comp_words_by_ref):
// TAB after "sessions s" offers show, with no "command not found".
func TestBashCompletionNeedsNothing(t *testing.T) {
	bin := buildBinary(t)
	script := filepath.Join(t.TempDir(), "agentty.bash")
	out, err := exec.Command(bin, "completion", "bash").Output()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(script, out, 0o600)
	probe := `declare -F _get_comp_words_by_ref && echo "bash-completion is loaded: the test proves nothing"
source "$1"
COMP_WORDS=(agentty sessions s); COMP_CWORD=2; COMP_LINE="agentty sessions s"; COMP_POINT=${#COMP_LINE}
__start_agentty agentty s sessions
echo "REPLY: ${COMPREPLY[*]}"`
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", probe, "probe", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	got, _ := cmd.CombinedOutput()
	if !strings.Contains(string(got), "REPLY: show") || strings.Contains(string(got), "not found") || strings.Contains(string(got), "proves nothing") {
		t.Fatalf("completion in a bash without bash-completion:\n%s", got)
	}
}
