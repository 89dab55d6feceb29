package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine/enginetest"
)

// The hostile fixtures of docs/threats.md, each run against the real
// binary in a folder of its own that nobody trusted: what a folder, a
// server or a model supplies must not make agentty read what nobody asked
// for, wait for ever, grow without bound, journal a secret, spend or act
// outside the journal, or loosen an approval. Each row also runs the next
// good request after the hostile one: one bad input harms nobody.

// hostile is one fixture: setup writes the folder (and may start a fake
// model server), args run the binary in it, check judges what came back.
type hostile struct {
	name  string
	setup func(t *testing.T, f *fixture)
	args  []string
	check func(t *testing.T, f *fixture, r hostileResult)
}

// fixture is a hostile row's world: its workspace, its environment, the
// folders outside the workspace, and what the binary is given on stdin.
type fixture struct {
	ws, home, outside string
	env               map[string]string
	stdin             io.Reader
}

// hostileResult is what one run of the binary left.
type hostileResult struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

func (f *fixture) write(t *testing.T, rel, body string) string {
	t.Helper()
	p := filepath.Join(f.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func (f *fixture) fifo(t *testing.T, p string) string {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs the binary with args in the fixture's workspace. A run that
// is still going after a minute is killed and fails the row: every
// fixture must end on its own.
func (f *fixture) run(t *testing.T, args ...string) hostileResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = f.ws
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range f.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errb, f.stdin
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	r := hostileResult{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("agentty %s still ran after a minute: it waited on what the fixture gave it\nstderr: %s", strings.Join(args, " "), r.stderr)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// journals is every session journal of the fixture's data folder.
func (f *fixture) journals(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(f.home, "sessions", "*", "events.jsonl"))
	for _, p := range files {
		data, _ := os.ReadFile(p)
		b.Write(data)
	}
	return b.String()
}

func script(t *testing.T, f *fixture, js string) string {
	t.Helper()
	p := filepath.Join(f.outside, "script.json")
	if err := os.WriteFile(p, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	return "script:" + p
}

func wantIn(t *testing.T, what, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(text, s) {
			t.Errorf("%s does not say %q:\n%s", what, s, text)
		}
	}
}

const threatKey = "sk-threat-0123456789abcdef"

func TestHostileFixtures(t *testing.T) {
	for _, h := range hostileRows() {
		t.Run(h.name, func(t *testing.T) {
			f := &fixture{ws: t.TempDir(), home: t.TempDir(), outside: t.TempDir(), stdin: strings.NewReader("")}
			f.env = map[string]string{"AGENTTY_HOME": f.home, "HOME": f.outside, "AGENTTY_CONFIG": filepath.Join(f.outside, "config.json")}
			if h.setup != nil {
				h.setup(t, f)
			}
			args := make([]string, len(h.args))
			for i, a := range h.args {
				args[i] = strings.ReplaceAll(a, "$SCRIPT", f.env["SCRIPT"])
			}
			h.check(t, f, f.run(t, args...))
			// The next good request, in the same folder.
			f.stdin = strings.NewReader("")
			good := f.run(t, "run", "--model", "offline", "what is 2+3?")
			if good.code != 0 || !strings.Contains(good.stdout, "5") {
				t.Errorf("the next good request: exit %d, %q\n%s", good.code, good.stdout, good.stderr)
			}
		})
	}
}

// agentFileText is an agent file of name with front matter extra.
func agentFileText(name, extra, body string) string {
	return "---\nname: " + name + "\ndescription: the " + name + " agent\n" + extra + "---\n" + body + "\n"
}

func hostileRows() []hostile {
	var rows []hostile
	for _, part := range [][]hostile{hostileFolderRows(), hostileModelRows(), hostileCheckpointRows(), hostileEvalRows(), hostileEvalCaseRows(),
		hostileHookRows(), hostileShellRows(), hostilePluginRows()} {
		rows = append(rows, part...)
	}
	return rows
}

// hostileFolderRows: what a folder nobody trusted supplies.
func hostileFolderRows() []hostile {
	return []hostile{{
		name: "guardrail judges in a cycle",
		setup: func(t *testing.T, f *fixture) {
			f.write(t, ".agentty/agents/alpha.md", agentFileText("alpha", "guardrails:\n  input:\n    - {name: a, agent: beta}\n", "Alpha."))
			f.write(t, ".agentty/agents/beta.md", agentFileText("beta", "guardrails:\n  input:\n    - {name: b, agent: alpha}\n", "Beta."))
		},
		args: []string{"run", "--agent", "alpha", "--model", "offline", "what is 2+2"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code == 0 {
				t.Errorf("ran as an agent in a cycle of judges: %q", r.stdout)
			}
			wantIn(t, "stderr", r.stderr, "guardrail judges form a cycle")
		},
	}, {
		name: "an output schema's $ref to stdin",
		setup: func(t *testing.T, f *fixture) {
			f.write(t, ".agentty/agents/shape.md", agentFileText("shape", "output_schema:\n  $ref: file:///dev/stdin\n", "Shape."))
			pr, pw, err := os.Pipe() // stdin that never ends: a read of it would wait for ever
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { pr.Close(); pw.Close() })
			f.stdin = pr
		},
		args: []string{"agents", "--json"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			wantIn(t, "agents", r.stdout+r.stderr, "loads no schema from outside the document")
		},
	}, {
		name: "an agent's output schema $ref to a FIFO",
		setup: func(t *testing.T, f *fixture) {
			fifo := f.fifo(t, filepath.Join(f.outside, "fifo"))
			f.write(t, ".agentty/agents/fifo.md", agentFileText("fifo", "output_schema:\n  type: object\n  properties:\n    x: {$ref: 'file://"+fifo+"'}\n", "Fifo."))
		},
		args: []string{"run", "--model", "offline", "what is 1+1"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 0 {
				t.Errorf("the run without that agent: exit %d\n%s", r.code, r.stderr)
			}
			wantIn(t, "stderr", r.stderr, "1 not loaded")
		},
	}, {
		name: "a workflow step schema's $ref to a FIFO",
		setup: func(t *testing.T, f *fixture) {
			fifo := f.fifo(t, filepath.Join(f.outside, "fifo"))
			f.write(t, ".agentty/workflows/flow.yaml", "name: flow\nsteps:\n  - id: one\n    task: what is 2+2\n    output_schema: {$ref: 'file://"+fifo+"'}\n")
		},
		args: []string{"workflows"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			wantIn(t, "agentty workflows", r.stdout+r.stderr, "loads no schema from outside the document")
		},
	}, {
		name: "an eval suite's schema $ref to a FIFO",
		setup: func(t *testing.T, f *fixture) {
			fifo := f.fifo(t, filepath.Join(f.outside, "fifo"))
			f.write(t, "suite.yaml", "cases:\n  - name: one\n    task: what is 2+2\n    assert:\n      - answer_json_schema: {$ref: 'file://"+fifo+"'}\n")
		},
		args: []string{"eval", "suite.yaml"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 2 {
				t.Errorf("exit %d, want 2 (a bad suite)", r.code)
			}
			wantIn(t, "agentty eval", r.stdout+r.stderr, "loads no schema from outside the document")
		},
	}, {
		name: "a SKILL.md linked to a file outside",
		setup: func(t *testing.T, f *fixture) {
			secret := filepath.Join(f.outside, "notes.md")
			os.WriteFile(secret, []byte("---\nname: b\ndescription: outside\n---\nOUTSIDE-SECRET-BODY\n"), 0o600)
			os.MkdirAll(filepath.Join(f.ws, ".claude", "skills", "b"), 0o700)
			os.Symlink(secret, filepath.Join(f.ws, ".claude", "skills", "b", "SKILL.md"))
			f.write(t, ".claude/skills/good/SKILL.md", "---\nname: good\ndescription: a good skill\n---\nGood body.\n")
			f.env["SCRIPT"] = script(t, f, `{"turns":[{"tool_calls":[{"name":"skill","arguments":{"name":"b"}}]},{"answer":"done"}]}`)
		},
		args: []string{"run", "--json", "--model", "$SCRIPT", "use skill b"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if strings.Contains(r.stdout, "OUTSIDE-SECRET-BODY") || strings.Contains(f.journals(t), "OUTSIDE-SECRET-BODY") {
				t.Error("the outside file's body was read")
			}
			wantIn(t, "stderr", r.stderr, "1 not loaded")
			sk := f.run(t, "skills")
			wantIn(t, "agentty skills", sk.stdout+sk.stderr, "outside")
		},
	}, {
		name: "read_skill_file on a FIFO",
		setup: func(t *testing.T, f *fixture) {
			f.write(t, ".claude/skills/pipe/SKILL.md", "---\nname: pipe\ndescription: a skill with a pipe\n---\nRead data.\n")
			f.fifo(t, filepath.Join(f.ws, ".claude", "skills", "pipe", "data"))
			f.env["SCRIPT"] = script(t, f, `{"turns":[{"tool_calls":[{"name":"read_skill_file","arguments":{"skill":"pipe","path":"data"}}]},{"answer":"done"}]}`)
		},
		args: []string{"run", "--json", "--model", "$SCRIPT", "read it"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			wantIn(t, "the tool's result", r.stdout, "named pipe")
			if r.took > 30*time.Second {
				t.Errorf("took %s: the FIFO was waited on", r.took)
			}
		},
	}, {
		name: "2,000 skills",
		setup: func(t *testing.T, f *fixture) {
			for i := range 2000 {
				n := fmt.Sprintf("skill-%04d", i)
				f.write(t, ".claude/skills/"+n+"/SKILL.md", "---\nname: "+n+"\ndescription: "+strings.Repeat("does a thing ", 20)+"\n---\nBody.\n")
			}
		},
		args: []string{"run", "--model", "offline", "what is 3+4"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			wantIn(t, "stderr", r.stderr, "1 note")
			sk := f.run(t, "skills")
			wantIn(t, "agentty skills", sk.stdout+sk.stderr, "the skills list is over its budget")
		},
	}, {
		name: "absurd numbers in .agentty.json",
		setup: func(t *testing.T, f *fixture) {
			f.write(t, ".agentty.json", `{"temperature": 1e308}`)
		},
		args: []string{"run", "--model", "offline", "what is 2+2"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			wantIn(t, "stderr", r.stderr, "temperature", "from 0 to 2")
			os.Remove(filepath.Join(f.ws, ".agentty.json")) // for the next good request
		},
	}, {
		name: "a deny rule with a specifier, trusted",
		setup: func(t *testing.T, f *fixture) {
			f.write(t, ".claude/settings.json", `{"permissions":{"deny":["Read(.env)"]}}`)
			f.write(t, ".env", "PASSWORD=hunter2-hunter2\n")
			f.env["SCRIPT"] = script(t, f, `{"turns":[{"tool_calls":[{"name":"read_file","arguments":{"path":".env"}}]},{"answer":"done"}]}`)
		},
		args: []string{"run", "--json", "--trust-workspace", "--model", "$SCRIPT", "read .env"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if strings.Contains(r.stdout, "hunter2") {
				t.Error("read_file of .env ran with no approval")
			}
			wantIn(t, "stderr", r.stderr, "needs approval; denied")
		},
	}, {
		name: "mcp import of a Codex server with an infinite timeout",
		setup: func(t *testing.T, f *fixture) {
			os.MkdirAll(filepath.Join(f.outside, ".codex"), 0o700)
			os.WriteFile(filepath.Join(f.outside, ".codex", "config.toml"), []byte("[mcp_servers.slow]\ncommand = \"npx\"\nargs = [\"-y\", \"x\", \"--api-key=sk-codex-secret-123456\"]\nstartup_timeout_sec = inf\n\n[mcp_servers.ok]\ncommand = \"true\"\n"), 0o600)
		},
		args: []string{"mcp", "import", "--from", "codex", "--write"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			wantIn(t, "mcp import", r.stdout+r.stderr, "slow", "not imported")
			if strings.Contains(r.stdout+r.stderr, "sk-codex-secret-123456") {
				t.Error("the preview shows the server's key")
			}
			if r := f.run(t, "tools"); r.code != 0 {
				t.Errorf("the config written does not load: exit %d\n%s", r.code, r.stderr)
			}
		},
	}}
}

// hostileModelRows: what a model (or a model server) sends.
func hostileModelRows() []hostile {
	return []hostile{{
		name: "the key in a tool call's arguments and memory",
		setup: func(t *testing.T, f *fixture) {
			f.env["OPENAI_API_KEY"] = threatKey
			f.env["SCRIPT"] = script(t, f, `{"turns":[{"tool_calls":[{"name":"remember","arguments":{"key":"apikey","value":"`+threatKey+`"}},{"name":"calculator","arguments":{"expression":"2+2"}}]},{"answer":"stored"}]}`)
		},
		args: []string{"run", "--json", "--model", "$SCRIPT", "keep my key"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			if strings.Contains(r.stdout, threatKey) || strings.Contains(f.journals(t), threatKey) {
				t.Error("the key is in --json or the journal")
			}
			wantIn(t, "the journal", f.journals(t), `"redacted":["`)
			export := f.run(t, "sessions", "export", "--format", "markdown", fixtureSession(t, f))
			if strings.Contains(export.stdout, threatKey) {
				t.Error("the key is in the export")
			}
		},
	}, {
		name: "a guardrail's judge",
		setup: func(t *testing.T, f *fixture) {
			f.write(t, ".agentty/agents/worker.md", agentFileText("worker", "guardrails:\n  input:\n    - {name: judged, agent: judge}\n", "Worker."))
			f.write(t, ".agentty/agents/judge.md", agentFileText("judge", "", "You judge."))
		},
		args: []string{"run", "--agent", "worker", "--model", "offline", "what is 6*7"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			wantIn(t, "the journal", f.journals(t), `"parent_call":"guard_in_0"`, `"kind":"model_request"`)
		},
	}, {
		name: "a 5 MB answer",
		setup: func(t *testing.T, f *fixture) {
			big := strings.Repeat("lorem ipsum ", 5<<20/12)
			srv := enginetest.NewServerFunc(t, func(int, enginetest.Request) enginetest.Reply {
				return enginetest.Reply{Body: enginetest.Answer(big[:len(big)/2], big[len(big)/2:])}
			})
			f.env["SCRIPT"] = srv.URL()
		},
		args: []string{"run", "--base-url", "$SCRIPT", "--model", "big", "say a lot"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 1 {
				t.Errorf("exit %d, want 1", r.code)
			}
			wantIn(t, "stderr", r.stderr, "passed the cap of 4194304 bytes")
			if j := f.journals(t); len(j) > 5<<20 {
				t.Errorf("the journal holds %d bytes", len(j))
			}
		},
	}, {
		name: "token counts that overflow",
		setup: func(t *testing.T, f *fixture) {
			call := enginetest.SSE(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"calculator","arguments":"{\"expression\":\"1+1\"}"}}]},"finish_reason":null}]}`,
				enginetest.FinishChunk("tool_calls"), `{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":9223372036854775807,"completion_tokens":1}}`)
			srv := enginetest.NewServerFunc(t, func(int, enginetest.Request) enginetest.Reply { return enginetest.Reply{Body: call} })
			f.env["SCRIPT"] = srv.URL()
		},
		args: []string{"run", "--base-url", "$SCRIPT", "--model", "m", "--max-tokens", "5000", "--max-steps", "100", "count"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 4 {
				t.Errorf("exit %d, want 4 (the budget)\n%s", r.code, r.stderr)
			}
			wantIn(t, "the journal", f.journals(t), "which cannot be")
		},
	}}
}

// fixtureSession is the one session of the fixture's data folder.
func fixtureSession(t *testing.T, f *fixture) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(f.home, "sessions", "*"))
	if len(dirs) == 0 {
		t.Fatal("no session")
	}
	return filepath.Base(dirs[0])
}

// hostileCheckpointRows: what a workspace gives the checkpoints (and an
// MCP entry's headers helper, and transcripts to import).
func hostileCheckpointRows() []hostile {
	return []hostile{{
		name: "a transcript to import that would run things, and one that is a FIFO",
		setup: func(t *testing.T, f *fixture) {
			f.fifo(t, filepath.Join(f.ws, "fifo.jsonl"))
			f.write(t, "t.jsonl", `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"bad","message":{"role":"user","content":"go"}}`+"\n"+
				`{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash\u001b[2J","input":{"command":"touch `+filepath.Join(f.outside, "ran")+`"}}]}}`+"\n")
		},
		args: []string{"sessions", "import", "fifo.jsonl", "t.jsonl"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 1 || !strings.Contains(r.stderr, "fifo.jsonl: not a regular file") || !strings.Contains(r.stdout, "imported t.jsonl") {
				t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(f.outside, "ran")); err == nil {
				t.Error("an imported tool call was run")
			}
			if strings.Contains(f.journals(t), "\u001b") || strings.Contains(f.journals(t), "\x1b") {
				t.Error("a tool name's escape sequence is in the journal")
			}
		},
	}, {
		name: "a headers helper in an untrusted .mcp.json",
		setup: func(t *testing.T, f *fixture) {
			f.write(t, ".mcp.json", `{"mcpServers": {"remote": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headersHelper": "touch `+filepath.Join(f.outside, "ran")+`; echo {}"}}}`)
		},
		args: []string{"run", "--model", "offline", "what is 2+2"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 0 {
				t.Errorf("exit %d\n%s", r.code, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(f.outside, "ran")); err == nil {
				t.Error("an untrusted folder's headers helper was run")
			}
		},
	}, {
		name: "a repository whose git config names programs",
		setup: func(t *testing.T, f *fixture) {
			marker := filepath.Join(f.outside, "ran")
			gitIn(t, f.ws, "init", "-q")
			for _, kv := range [][2]string{{"core.fsmonitor", "touch " + marker + "; echo"}, {"filter.evil.clean", "touch " + marker + "; cat"},
				{"filter.evil.smudge", "touch " + marker + "; cat"}, {"diff.evil.textconv", "touch " + marker + "; cat"}, {"core.hooksPath", f.outside}} {
				gitIn(t, f.ws, "config", kv[0], kv[1])
			}
			os.WriteFile(filepath.Join(f.outside, "post-checkout"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
			f.write(t, ".gitattributes", "* filter=evil diff=evil\n")
			f.write(t, "notes.md", "# Notes\n")
			f.env["SCRIPT"] = script(t, f, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"notes.md","content":"# Notes\n- tea\n"}}]},{"answer":"done"}]}`)
		},
		args: []string{"run", "--yes", "--model", "$SCRIPT", "add tea"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			wantIn(t, "the journal", f.journals(t), `"kind":"checkpoint"`, `"mode":"git"`)
			id := fixtureSession(t, f)
			if d := f.run(t, "sessions", "diff", id); !strings.Contains(d.stdout, "+- tea") {
				t.Errorf("sessions diff: exit %d %s %s", d.code, d.stdout, d.stderr)
			}
			if rw := f.run(t, "sessions", "rewind", id, "--at", "1"); rw.code != 0 {
				t.Errorf("sessions rewind: exit %d %s", rw.code, rw.stderr)
			}
			if b, _ := os.ReadFile(filepath.Join(f.ws, "notes.md")); string(b) != "# Notes\n" {
				t.Errorf("notes.md after the rewind: %q", b)
			}
			if _, err := os.Stat(filepath.Join(f.outside, "ran")); err == nil {
				t.Error("a program the workspace's git config names was run")
			}
		},
	}, {
		name: "a FIFO a step makes in the place of a tracked file",
		setup: func(t *testing.T, f *fixture) {
			gitIn(t, f.ws, "init", "-q")
			f.write(t, "notes.md", "# Notes\n")
			gitIn(t, f.ws, "add", "notes.md")
			f.env["SCRIPT"] = script(t, f, `{"turns":[{"tool_calls":[{"name":"run_shell","arguments":{"command":"rm notes.md && mkfifo notes.md"}}]},`+
				`{"tool_calls":[{"name":"write_file","arguments":{"path":"new.md","content":"new\n"}}]},{"answer":"done"}]}`)
		},
		args: []string{"run", "--yes", "--allow-shell", "--model", "$SCRIPT", "make a pipe"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 0 || !strings.Contains(r.stderr, "not a regular file") || strings.Contains(r.stderr, "warning: step") {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			id := fixtureSession(t, f)
			if d := f.run(t, "sessions", "diff", id); d.code != 0 || !strings.Contains(d.stdout, "+new") {
				t.Errorf("sessions diff: exit %d %s %s", d.code, d.stdout, d.stderr)
			}
			if rw := f.run(t, "sessions", "rewind", id, "--at", "1"); rw.code != 0 {
				t.Errorf("sessions rewind: exit %d %s", rw.code, rw.stderr)
			}
			if b, err := os.ReadFile(filepath.Join(f.ws, "notes.md")); err != nil || string(b) != "# Notes\n" {
				t.Errorf("notes.md after the rewind: %q %v", b, err)
			}
		},
	}, {
		name: "the key a step writes into a file",
		setup: func(t *testing.T, f *fixture) {
			gitIn(t, f.ws, "init", "-q")
			f.env["OPENAI_API_KEY"] = threatKey
			f.env["SCRIPT"] = script(t, f, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":".env","content":"KEY=`+threatKey+`\n"}}]},{"answer":"done"}]}`)
		},
		args: []string{"run", "--yes", "--model", "$SCRIPT", "keep the key"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			d := f.run(t, "sessions", "diff", fixtureSession(t, f))
			if d.code != 0 || strings.Contains(d.stdout+d.stderr, threatKey) || !strings.Contains(d.stdout, "+KEY=[redacted") || strings.Contains(f.journals(t), threatKey) {
				t.Errorf("sessions diff (or the journal) shows the key: exit %d\n%s%s", d.code, d.stdout, d.stderr)
			}
		},
	}, {
		name: "a file tool's path out of a folder that is not git",
		setup: func(t *testing.T, f *fixture) {
			os.WriteFile(filepath.Join(f.outside, "secret.txt"), []byte(threatKey), 0o600)
			rel, _ := filepath.Rel(f.ws, filepath.Join(f.outside, "secret.txt"))
			os.Symlink(filepath.Join(f.outside, "secret.txt"), filepath.Join(f.ws, "link.txt"))
			f.env["SCRIPT"] = script(t, f, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"`+rel+`","content":"x"}},`+
				`{"name":"write_file","arguments":{"path":"link.txt","content":"x"}}]},{"answer":"done"}]}`)
		},
		args: []string{"run", "--yes", "--model", "$SCRIPT", "write outside"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			kept, _ := exec.Command("grep", "-rl", threatKey, filepath.Join(f.home, "checkpoints")).Output()
			if len(kept) > 0 || strings.Contains(f.journals(t), threatKey) {
				t.Errorf("the file outside the workspace was kept: %s", kept)
			}
			if b, _ := os.ReadFile(filepath.Join(f.outside, "secret.txt")); string(b) != threatKey {
				t.Errorf("the file outside was written: %q", b)
			}
			wantIn(t, "the journal", f.journals(t), "not kept: ")
		},
	}}
}
