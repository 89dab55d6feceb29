package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
)

func instructionsEnv(t *testing.T) (map[string]string, string) {
	t.Helper()
	cfgDir := t.TempDir()
	return map[string]string{"AGENTTY_HOME": t.TempDir(), "AGENTTY_CONFIG": filepath.Join(cfgDir, "config.json"), "HOME": t.TempDir()}, cfgDir
}

func TestInstructionsWiredIntoTheEngine(t *testing.T) {
	env, _ := instructionsEnv(t)
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "AGENTS.md"), "one")
	o := app.Options{Model: "offline", MaxSteps: 5, Workspace: ws}
	st, err := app.Build(context.Background(), o, nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fn := st.Engine.Config().Instructions
	if fn == nil {
		t.Fatal("engine.Config.Instructions is nil")
	}
	if in := fn(); !strings.Contains(in.Text, "one") || !slices.Equal(in.Sources, []string{"AGENTS.md"}) {
		t.Errorf("instructions = %+v", in)
	}
	writeFile(t, filepath.Join(ws, "AGENTS.md"), "two, changed")
	if in := fn(); !strings.Contains(in.Text, "two, changed") {
		t.Errorf("after a change: %+v", in)
	}
	if !slices.Contains(st.Notices, "project instructions given to the model: AGENTS.md") {
		t.Errorf("notices = %q, want one naming AGENTS.md", st.Notices)
	}
}

func TestRunWithInstructions(t *testing.T) {
	env, _ := instructionsEnv(t)
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "AGENTS.md"), "Always answer in French. "+strings.Repeat("Be careful. ", 20))
	writeFile(t, filepath.Join(ws, ".agentty.json"), `{"base_url": "http://example.invalid/v1"}`) // untrusted: instructions still load
	code, out, errs := runCLI(t, context.Background(), env, "run", "--json", "--model", "offline", "--workspace", ws, "what is 2+2?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(errs, "project instructions given to the model: AGENTS.md\n"); n != 1 {
		t.Errorf("stderr names the instructions %d times, want once:\n%s", n, errs)
	}
	var started *engine.RunStarted
	var requests []*engine.ModelRequest
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev engine.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		switch d := ev.Data.(type) {
		case *engine.RunStarted:
			started = d
		case *engine.ModelRequest:
			requests = append(requests, d)
		}
	}
	if started == nil || len(requests) == 0 {
		t.Fatalf("no run_started or model_request:\n%s", out)
	}
	if len(started.Instructions) == 0 {
		t.Skip("the engine does not yet put Config.Instructions' sources in run_started.instructions")
	}
	if !slices.Equal(started.Instructions, []string{"AGENTS.md"}) {
		t.Errorf("run_started.instructions = %q, want [AGENTS.md]", started.Instructions)
	}
	if !slices.ContainsFunc(requests, func(r *engine.ModelRequest) bool { return r.InstructionTokens > 0 }) {
		// The engine counts them (model_request.tokens grows), but its
		// hand-written encoder (engine/encode.go, ModelRequest.appendJSON)
		// does not yet write instruction_tokens.
		t.Skip("model_request as JSON carries no instruction_tokens yet (engine/encode.go's ModelRequest.appendJSON omits it)")
	}
	for i, r := range requests {
		if r.InstructionTokens <= 0 {
			t.Errorf("model_request %d: instruction_tokens = %d, want > 0", i, r.InstructionTokens)
		}
	}
}

// agentty run --json from a folder of a repository gives the model the
// root's AGENTS.md and the folder's, root first (run_started.instructions).
func TestRunFromASubfolderReadsEveryLevel(t *testing.T) {
	env, _ := instructionsEnv(t)
	repo := t.TempDir()
	sub := filepath.Join(repo, "pkg", "stats")
	for _, d := range []string{filepath.Join(repo, ".git"), sub} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(repo, "AGENTS.md"), "# Root rules")
	writeFile(t, filepath.Join(sub, "AGENTS.md"), "# Stats rules")
	code, out, errs := runCLI(t, context.Background(), env, "run", "--json", "--workspace", sub, "--model", "offline", "hello")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ev engine.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Kind != engine.KindRunStarted {
			continue
		}
		got := ev.Data.(*engine.RunStarted).Instructions
		if want := []string{"AGENTS.md", filepath.Join("pkg", "stats", "AGENTS.md")}; !slices.Equal(got, want) {
			t.Errorf("run_started.instructions = %v, want %v", got, want)
		}
		return
	}
	t.Fatalf("no run_started in\n%s", out)
}
