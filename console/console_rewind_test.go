package console

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// TestConsoleDiffHidesTheKey: a step writes the API key into a file (a
// model may, asked to by a page it read). The journal is without it, and
// so are /diff and /rewind's plan in the console; the rewind still works
// (TestDiffHidesTheKey: its undo restores the file, key and all).
func TestConsoleDiffHidesTheKey(t *testing.T) {
	const key = "sk-test-console-0123456789"
	env := consoleEnv(t)
	env["OPENAI_API_KEY"] = key
	getenv := func(k string) string { return env[k] }
	ws := t.TempDir()
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":".env","content":"OPENAI_API_KEY=`+key+`\n"}}]},{"answer":"done"}]}`), 0o600)
	o := app.Options{Model: "script:" + script, MaxSteps: 5, Workspace: ws, Yes: true}
	st, err := app.Build(context.Background(), o, nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	store, err := sessions.Open(env["AGENTTY_HOME"])
	if err != nil {
		t.Fatal(err)
	}
	con := &Console{Store: store, Setup: st, Opts: o, Getenv: getenv}
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	b := con.Open(j, engine.NewSession(j.ID))
	defer b.Close()
	for range b.Start(context.Background(), "write the key into .env") {
	}
	if got, _ := os.ReadFile(filepath.Join(ws, ".env")); string(got) != "OPENAI_API_KEY="+key+"\n" {
		t.Fatalf(".env: %q", got)
	}
	diff, err := b.DiffFiles(context.Background(), -1)
	if err != nil || strings.Contains(diff, key) || !strings.Contains(diff, "+OPENAI_API_KEY=[redacted OPENAI_API_KEY]") {
		t.Errorf("/diff: %v\n%s", err, diff)
	}
	plan, err := b.PlanRewind(context.Background(), 1)
	if err != nil || strings.Contains(plan.Diff, key) || !strings.Contains(plan.Diff, "[redacted OPENAI_API_KEY]") {
		t.Fatalf("/rewind's plan: %v\n%+v", err, plan)
	}
	if _, err := b.RewindFiles(context.Background(), plan, true, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".env")); err == nil {
		t.Error(".env is still there after the rewind")
	}
	journal, _ := os.ReadFile(filepath.Join(env["AGENTTY_HOME"], "sessions", j.ID, "events.jsonl"))
	if len(journal) == 0 || strings.Contains(string(journal), key) {
		t.Errorf("the journal has the key (or is not where it was looked for: %d bytes)", len(journal))
	}
}
