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

// TestRunAgainstLocalServer points agentty run at an in-process
// OpenAI-compatible server that fails once, then calls a tool, then answers.
func TestRunAgainstLocalServer(t *testing.T) {
	const key = "sk-cli-SECRET-0987654321"
	srv := enginetest.NewServerFunc(t, func(n int, req enginetest.Request) enginetest.Reply {
		if req.Header.Get("Authorization") != "Bearer "+key {
			return enginetest.Reply{Status: 401, Body: `{"error":{"message":"no key"}}`}
		}
		switch n % 3 {
		case 1:
			return enginetest.Reply{Status: 503, Body: `{"error":{"message":"overloaded","type":"server_error"}}`}
		case 2:
			return enginetest.Reply{Body: enginetest.ToolCallStream("call_1", "calculator", `{"expression":"17*23"}`, 2)}
		}
		return enginetest.Reply{Body: enginetest.SSE(enginetest.TextChunk("The "), enginetest.TextChunk("answer "), enginetest.TextChunk("is "), enginetest.TextChunk("391."),
			enginetest.FinishChunk("stop"), enginetest.UsageChunk(120, 9))}
	})
	home := t.TempDir()
	env := map[string]string{"AGENTTY_HOME": home, "OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": key}

	code, out, errs := runCLI(t, context.Background(), env, "run", "--model", "some-model", "what is 17*23?")
	if code != 0 || strings.TrimSpace(out) != "The answer is 391." {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runCLI(t, context.Background(), env, "run", "--json", "what is 17*23?")
	if code != 0 {
		t.Fatalf("--json: exit %d, %s", code, errs)
	}
	for _, want := range []string{`"kind":"text_delta"`, `"kind":"usage"`, `"kind":"retry"`, `"status":503`, `"model":"gpt-4o-mini"`, `"prompt_tokens":120`} {
		if !strings.Contains(out, want) {
			t.Errorf("--json output lacks %s", want)
		}
	}
	// The key is in no output and no file.
	if strings.Contains(out+errs, key) {
		t.Errorf("the API key was printed")
	}
	filepath.Walk(home, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), key) {
				t.Errorf("the API key is written in %s", p)
			}
		}
		return nil
	})

	// A bad key: one clear line, no retries.
	env["OPENAI_API_KEY"] = "sk-wrong"
	code, _, errs = runCLI(t, context.Background(), env, "run", "--model", "some-model", "hi")
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code != 1 || !strings.Contains(lines[len(lines)-1], "authentication failed") || strings.Contains(errs, "sk-wrong") {
		t.Errorf("bad key: exit %d, stderr %q", code, errs)
	}
}

func TestModelNeedsKeyOrServer(t *testing.T) {
	code, _, errs := runCLI(t, context.Background(), map[string]string{"AGENTTY_HOME": t.TempDir()}, "run", "--model", "gpt-4o", "hi")
	if code != 1 || !strings.Contains(errs, "needs OPENAI_API_KEY") {
		t.Errorf("exit %d, %q", code, errs)
	}
}

// TestAnswerKeyIsRedacted: a server that echoes the API key in its answer,
// cut across streamed pieces, leaves it in no output (plain or --json), no
// file of the data folder and no Markdown export; the next request works.
func TestAnswerKeyIsRedacted(t *testing.T) {
	const key = "sk-echo-SECRET-1122334455"
	srv := enginetest.NewServerFunc(t, func(n int, req enginetest.Request) enginetest.Reply {
		if n >= 3 { // the first two requests (counted from 1) echo the key
			return enginetest.Reply{Body: enginetest.Answer("all ", "good")}
		}
		return enginetest.Reply{Body: enginetest.SSE(enginetest.TextChunk("Your key is sk-echo-"), enginetest.TextChunk("SECRET-11"),
			enginetest.TextChunk("22334455, kept"), enginetest.TextChunk(" safe."), enginetest.FinishChunk("stop"))}
	})
	home := t.TempDir()
	env := map[string]string{"AGENTTY_HOME": home, "OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": key, "AGENTTY_CONFIG": filepath.Join(t.TempDir(), "none.json")}
	code, out, errs := runCLI(t, context.Background(), env, "run", "--model", "m", "what is my key?")
	if code != 0 || strings.TrimSpace(out) != "Your key is [redacted OPENAI_API_KEY], kept safe." {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, jsonOut, errs := runCLI(t, context.Background(), env, "run", "--json", "--model", "m", "again?")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errs)
	}
	var streamed strings.Builder
	for _, line := range strings.Split(jsonOut, "\n") {
		var ev struct {
			Kind string `json:"kind"`
			Data struct {
				Text string `json:"text"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Kind == "text_delta" {
			streamed.WriteString(ev.Data.Text)
		}
	}
	if streamed.String() != "Your key is [redacted OPENAI_API_KEY], kept safe." {
		t.Errorf("the streamed pieces join to %q", streamed.String())
	}
	code, _, errs = runCLI(t, context.Background(), env, "sessions", "ls")
	if code != 0 {
		t.Fatal(errs)
	}
	ids, _ := os.ReadDir(filepath.Join(home, "sessions"))
	for _, id := range ids {
		_, md, _ := runCLI(t, context.Background(), env, "sessions", "export", id.Name())
		out += md
	}
	if strings.Contains(out+jsonOut+errs, key) || strings.Contains(out+jsonOut, "SECRET-11") {
		t.Errorf("the key was printed:\n%s\n%s", out, jsonOut)
	}
	filepath.Walk(home, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "SECRET-11") {
				t.Errorf("the key is written in %s", p)
			}
		}
		return nil
	})
	if code, out, _ := runCLI(t, context.Background(), env, "run", "--model", "m", "and now?"); code != 0 || strings.TrimSpace(out) != "all good" {
		t.Errorf("the next request: exit %d, %q", code, out)
	}
}
