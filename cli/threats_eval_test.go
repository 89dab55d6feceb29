package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileEvalRows: what a suite's recordings and a comparison's prompt
// files supply.
func hostileEvalRows() []hostile {
	const suite = "cases:\n  - name: adds\n    task: \"what is 2+2\"\n    assert:\n      - answer_contains: \"4\"\n"
	return []hostile{{
		name: "a FIFO as a prompt",
		setup: func(t *testing.T, f *fixture) {
			f.write(t, "evals.yaml", suite)
			f.write(t, "b.md", "Be brief.")
			f.fifo(t, filepath.Join(f.ws, "prompt.fifo"))
		},
		args: []string{"eval", "evals.yaml", "--model", "offline", "--variants", "prompt.fifo,b.md"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 2 || !strings.Contains(r.stderr, "prompt.fifo") || r.took > 10*time.Second {
				t.Errorf("exit %d after %v\n%s", r.code, r.took, r.stderr)
			}
		},
	}, {
		name: "a recording that is a FIFO, and one that leads to /dev/zero",
		setup: func(t *testing.T, f *fixture) {
			f.write(t, "evals.yaml", suite+"  - name: subs\n    task: \"what is 5-3\"\n")
			f.fifo(t, filepath.Join(f.ws, "rec", "adds.jsonl"))
			if err := os.Symlink("/dev/zero", filepath.Join(f.ws, "rec", "subs.jsonl")); err != nil {
				t.Fatal(err)
			}
		},
		args: []string{"eval", "evals.yaml", "--replay", "rec"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 1 || strings.Count(r.stdout, "not a regular file") != 2 || r.took > 10*time.Second {
				t.Errorf("exit %d after %v\n%s\n%s", r.code, r.took, r.stdout, r.stderr)
			}
		},
	}, {
		name: "a recorded prompt of 5,000 lines of terminal escapes and 5,000 tools",
		setup: func(t *testing.T, f *fixture) {
			f.write(t, "evals.yaml", suite)
			f.write(t, "rec/adds.jsonl", hostileRecording())
		},
		args: []string{"eval", "evals.yaml", "--replay", "rec"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 1 || !strings.Contains(r.stdout, "needs a new recording") || !strings.Contains(r.stdout, "tools removed: tool_0?[31m, tool_1") {
				t.Errorf("exit %d\n%.2000s\n%s", r.code, r.stdout, r.stderr)
			}
			if strings.ContainsAny(r.stdout+r.stderr, "\x1b\x07") || len(r.stdout) > 64<<10 {
				t.Errorf("%d bytes out, escapes: %v", len(r.stdout), strings.ContainsAny(r.stdout, "\x1b\x07"))
			}
		},
	}}
}

// hostileRecording is a recorded run whose prompt event holds terminal
// escapes on 5,000 lines and 5,000 tool names.
func hostileRecording() string {
	var lines []string
	tools := []map[string]any{}
	for i := range 5000 {
		lines = append(lines, fmt.Sprintf("\x1b]52;c;%d\x07line %d \x1b[2J", i, i))
		tools = append(tools, map[string]any{"name": fmt.Sprintf("tool_%d\x1b[31m", i), "parameters": map[string]any{}})
	}
	ev := func(step int, kind, data string) string {
		return fmt.Sprintf(`{"v":1,"session":"0rec","run":"run-1","step":%d,"kind":%q,"time":"2026-12-01T00:00:00Z","data":%s}`+"\n", step, kind, data)
	}
	prompt, _ := json.Marshal(map[string]any{"hash": 12345, "system": strings.Join(lines, "\n"), "tools": tools})
	return ev(0, "run_started", `{"task":"what is 2+2","max_steps":10}`) +
		ev(1, "step_started", `{"turn":0}`) +
		ev(1, "prompt", string(prompt)) +
		ev(1, "model_request", `{"messages":1,"memory_facts":0,"tools":5000,"tokens":10,"system_tokens":1,"memory_tokens":0,"tool_tokens":1,"budget":1000,"prompt_hash":12345}`) +
		ev(1, "decision", `{"text":"4","attempts":1}`) +
		ev(1, "step_finished", `{"tool_calls":0}`) +
		ev(1, "run_finished", `{"stop_reason":"answered","answer":"4","steps":1}`)
}
