package hooks_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/hooks"
)

// TestRealHookFiles loads every hook configuration of a public catalogue
// (testdata/real/claude-code-templates, ORIGIN.md): each parses, and each
// hook either runs or is listed with why not; the table is logged (go
// test -v -run TestRealHookFiles ./hooks).
func TestRealHookFiles(t *testing.T) {
	dir := filepath.Join("testdata", "real", "claude-code-templates")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) < 50 {
		t.Fatalf("%d files: %v", len(files), err)
	}
	runs, skipped, refused := 0, map[string]int{}, 0
	events := map[engine.HookEvent]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var file struct {
			Hooks json.RawMessage `json:"hooks"`
		}
		if err := json.Unmarshal(b, &file); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		defs, notes, err := hooks.Parse(f, "person", file.Hooks)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		refused += len(notes)
		for _, d := range defs {
			if d.Skip != "" {
				why := d.Skip
				if i := strings.Index(why, ":"); i > 0 {
					why = why[:i]
				}
				skipped[why]++
				continue
			}
			runs++
			events[d.Event]++
		}
	}
	var rows []string
	for _, ev := range slices.Sorted(maps.Keys(events)) {
		rows = append(rows, fmt.Sprintf("%s %d", ev, events[ev]))
	}
	t.Logf("%d files: %d hooks run (%s); not run: %v; entries refused: %d", len(files), runs, strings.Join(rows, ", "), skipped, refused)
	if runs < 60 || events[engine.HookPreToolUse] == 0 || events[engine.HookPostToolUse] == 0 || events[engine.HookStop] == 0 {
		t.Errorf("only %d hooks run: %v", runs, events)
	}
}

// TestRealPreventDirectPush runs the catalogue's prevent-direct-push hook
// (Python, reading Claude Code's stdin JSON and answering with a
// permissionDecision) as its configuration says, in a git repository on
// main: git push origin main is denied with its reason, the next command
// runs.
func TestRealPreventDirectPush(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil && os.Getenv("CI") == "" {
		t.Skip("python3 is not installed")
	}
	real := filepath.Join("testdata", "real", "claude-code-templates")
	cfg, err := os.ReadFile(filepath.Join(real, "git__prevent-direct-push.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Hooks json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(cfg, &file); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, string(file.Hooks),
		call("c1", "run_shell", `{"command":"git push origin main"}`),
		call("c2", "run_shell", `{"command":"git status --short > status.txt"}`))
	script, err := os.ReadFile(filepath.Join(real, "prevent-direct-push.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.dir, ".claude", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, ".claude", "hooks", "prevent-direct-push.py"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	git := exec.Command("git", "init", "-q", "-b", "main")
	git.Dir = f.dir
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	f.run(t, "push it")
	fin := f.result("c1")
	if fin == nil || fin.Status != engine.ToolDenied || !strings.Contains(fin.Result, "Direct push to main/develop is not allowed") {
		t.Fatalf("git push origin main: %+v\nhooks: %+v", fin, f.hookRuns())
	}
	if !exists(f.dir, "status.txt") {
		t.Errorf("the next command did not run: %+v", f.result("c2"))
	}
}
