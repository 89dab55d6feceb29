package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/hooks"
)

// BenchmarkHookRun is what one hook costs a tool call: a PreToolUse hook
// (bash running `true`) given Claude Code's JSON and read back.
func BenchmarkHookRun(b *testing.B) {
	defs, _, err := hooks.Parse("bench", "person", json.RawMessage(`{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"true"}]}]}`))
	if err != nil {
		b.Fatal(err)
	}
	r := hooks.New(defs, hooks.Env{Workspace: b.TempDir(), Environ: os.Environ()})
	in := &engine.HookInput{Event: engine.HookPreToolUse, Session: "s", Call: &engine.ToolCall{ID: "c1", Name: "run_shell", Args: json.RawMessage(`{"command":"ls"}`)}}
	for b.Loop() {
		if runs := r.RunHooks(context.Background(), in); len(runs) != 1 || runs[0].Exit != 0 {
			b.Fatalf("%+v", runs)
		}
	}
}

// BenchmarkNoHookMatches is what the hooks cost a call none matches.
func BenchmarkNoHookMatches(b *testing.B) {
	defs, _, _ := hooks.Parse("bench", "person", json.RawMessage(`{"PreToolUse":[{"matcher":"Write|Edit","hooks":[{"type":"command","command":"true"}]}]}`))
	r := hooks.New(defs, hooks.Env{Workspace: b.TempDir()})
	in := &engine.HookInput{Event: engine.HookPreToolUse, Call: &engine.ToolCall{ID: "c1", Name: "run_shell", Args: json.RawMessage(`{"command":"ls"}`)}}
	for b.Loop() {
		if runs := r.RunHooks(context.Background(), in); len(runs) != 0 {
			b.Fatal(runs)
		}
	}
}
