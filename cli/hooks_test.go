package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workspace's hooks are programs: in an untrusted folder they never run
// (a marker file stays absent) and agentty hooks says why; trusted, they
// run. The person's own hooks (~/.claude/settings.json) run in any
// folder; SessionStart and SessionEnd come with the run.
func TestWorkspaceHooksRunOnlyWhenTrusted(t *testing.T) {
	ws, out := t.TempDir(), t.TempDir()
	env := agentEnv(t)
	marker := func(name string) string { return filepath.Join(out, name) }
	hook := func(name string) string {
		b, _ := json.Marshal("cat > " + marker(name))
		return `[{"matcher":"*","hooks":[{"type":"command","command":` + string(b) + `}]}]`
	}
	writeFile(t, filepath.Join(ws, ".claude", "settings.json"), `{"hooks":{"PreToolUse":`+hook("workspace-pre")+`}}`)
	writeFile(t, filepath.Join(ws, ".claude", "settings.local.json"), `{"hooks":{"UserPromptSubmit":`+hook("workspace-local")+`}}`)
	writeFile(t, filepath.Join(env["HOME"], ".claude", "settings.json"),
		`{"hooks":{"PreToolUse":`+hook("person-pre")+`,"SessionStart":`+hook("person-start")+`,"SessionEnd":`+hook("person-end")+`}}`)

	code, stdout, errs := runCLI(t, context.Background(), env, "hooks", "--json", "--workspace", ws)
	if code != 0 {
		t.Fatalf("hooks: exit %d: %s", code, errs)
	}
	var listed struct {
		Hooks []struct {
			Event, Source, Scope string
			Why                  string `json:"why_not"`
			Runs                 bool
		}
	}
	if err := json.Unmarshal([]byte(stdout), &listed); err != nil {
		t.Fatal(err, stdout)
	}
	for _, h := range listed.Hooks {
		if (h.Scope == "workspace") == h.Runs {
			t.Errorf("listed: %+v", h)
		}
	}
	if len(listed.Hooks) != 5 {
		t.Errorf("%d hooks listed, want 5: %s", len(listed.Hooks), stdout)
	}

	code, _, errs = runCLI(t, context.Background(), env, "run", "--workspace", ws, "--model", "offline", "list files")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	for _, name := range []string{"workspace-pre", "workspace-local"} {
		if _, err := os.Stat(marker(name)); err == nil {
			t.Errorf("the untrusted folder's hook %s ran", name)
		}
	}
	if !strings.Contains(errs, "untrusted: ignoring hooks (.claude/settings.json), hooks (.claude/settings.local.json)") {
		t.Errorf("no notice of the hooks not run: %s", errs)
	}
	for name, event := range map[string]string{"person-pre": "PreToolUse", "person-start": "SessionStart", "person-end": "SessionEnd"} {
		b, err := os.ReadFile(marker(name))
		if err != nil {
			t.Errorf("the person's hook %s did not run: %v", name, err)
			continue
		}
		var in struct {
			Event   string `json:"hook_event_name"`
			Session string `json:"session_id"`
			Cwd     string `json:"cwd"`
		}
		if err := json.Unmarshal(b, &in); err != nil || in.Session == "" || in.Cwd != ws || in.Event != event {
			t.Errorf("%s stdin: %s", name, b)
		}
		os.Remove(marker(name))
	}

	code, _, errs = runCLI(t, context.Background(), env, "run", "--trust-workspace", "--workspace", ws, "--model", "offline", "list files")
	if code != 0 {
		t.Fatalf("trusted run: exit %d: %s", code, errs)
	}
	for _, name := range []string{"workspace-pre", "workspace-local", "person-pre"} {
		if _, err := os.Stat(marker(name)); err != nil {
			t.Errorf("trusted: the hook %s did not run", name)
		}
	}
}
