package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/agentty/agentty/engine/enginetest"
)

// commandWorkspace is a workspace with the custom command /review (its
// file's argument the file to attach) and main.go.
func commandWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	for p, text := range map[string]string{
		".claude/commands/review.md": "---\ndescription: Review a file for bugs\nargument-hint: FILE [FOCUS]\nallowed-tools: Read, Grep, Bash(git diff:*)\nmodel: claude-sonnet-4-0\n---\nReview @$1 for bugs; focus: $2.\n- Diff: !`git diff HEAD`\n",
		"main.go":                    "package main // MARKER-CONTENT of main.go\n",
	} {
		p = filepath.Join(ws, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// requestText is what a captured chat-completions request sends: its
// messages' text, and the names of its tools.
func requestText(t *testing.T, body map[string]any) (string, []string) {
	t.Helper()
	b, _ := json.Marshal(body["messages"])
	var tools []string
	ts, _ := body["tools"].([]any)
	for _, x := range ts {
		f, _ := x.(map[string]any)["function"].(map[string]any)
		name, _ := f["name"].(string)
		tools = append(tools, name)
	}
	return string(b), tools
}

// TestRunCustomCommand: agentty run "/review main.go races" sends the
// command's prompt, its arguments in place and main.go attached, with the
// tools its allowed-tools name alone; its shell line is not run but noted,
// and its Claude model id uses the session's model. A task that names no
// command is sent as typed.
func TestRunCustomCommand(t *testing.T) {
	srv := enginetest.NewServerFunc(t, func(n int, req enginetest.Request) enginetest.Reply {
		return enginetest.Reply{Body: enginetest.SSE(enginetest.TextChunk("looked"), enginetest.FinishChunk("stop"), enginetest.UsageChunk(10, 2))}
	})
	ws := commandWorkspace(t)
	env := map[string]string{"AGENTTY_HOME": t.TempDir(), "HOME": t.TempDir(), "OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-x"}
	code, out, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "m1", "/review main.go races")
	if code != 0 || strings.TrimSpace(out) != "looked" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	reqs := srv.Requests()
	text, tools := requestText(t, reqs[len(reqs)-1].Body)
	for _, want := range []string{"Review @main.go for bugs; focus: races.", "MARKER-CONTENT of main.go", "!`git diff HEAD`"} {
		if !strings.Contains(text, want) {
			t.Errorf("the request lacks %q: %s", want, text)
		}
	}
	if !slices.Equal(tools, []string{"read_file", "search_files"}) {
		t.Errorf("tools sent = %v, want read_file and search_files", tools)
	}
	for _, want := range []string{"1 !`command` line left as text, not run", "model claude-sonnet-4-0 is Claude Code's", "allowed-tools Bash(git diff:*): no such tool"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q: %s", want, errs)
		}
	}
	code, _, errs = runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "m1", "/nosuch thing")
	reqs = srv.Requests()
	if text, tools = requestText(t, reqs[len(reqs)-1].Body); code != 0 || !strings.Contains(text, "/nosuch thing") || len(tools) < 3 {
		t.Errorf("a task naming no command: exit %d, %s, tools %v, %s", code, text, tools, errs)
	}
}

// TestRunCommandHostileFiles: a command file that is a symlink out of
// the workspace, one over the bound and a FIFO named *.md are each named
// and refused, and the good command beside them runs.
func TestRunCommandHostileFiles(t *testing.T) {
	srv := enginetest.NewServerFunc(t, func(n int, req enginetest.Request) enginetest.Reply {
		return enginetest.Reply{Body: enginetest.SSE(enginetest.TextChunk("ok"), enginetest.FinishChunk("stop"), enginetest.UsageChunk(10, 2))}
	})
	ws, outside := commandWorkspace(t), t.TempDir()
	dir := filepath.Join(ws, ".claude", "commands")
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte("SECRET-OUTSIDE"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "escape.md"))
	os.WriteFile(filepath.Join(dir, "huge.md"), []byte(strings.Repeat("x", 1<<20)), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENTTY_HOME": t.TempDir(), "HOME": t.TempDir(), "OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "sk-x"}
	code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "m1", "/escape")
	if text, _ := requestText(t, srv.Requests()[0].Body); code != 0 || strings.Contains(text, "SECRET-OUTSIDE") {
		t.Fatalf("the escaping link was read: exit %d, %s", code, text)
	}
	for _, want := range []string{"escape.md: leads to", "huge.md: larger than", "pipe.md: refused: "} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q: %s", want, errs)
		}
	}
	code, _, errs = runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "m1", "/review main.go")
	reqs := srv.Requests()
	if text, _ := requestText(t, reqs[len(reqs)-1].Body); code != 0 || !strings.Contains(text, "MARKER-CONTENT") {
		t.Errorf("the good command after the refused files: exit %d, %s", code, errs)
	}
}
