package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionsLsByFolder: sessions ls lists the sessions of its folder
// alone, saying how many of other folders it left out; --all lists every
// folder's, this folder's first; a folder with none says how many others
// hold. No console: the checks of the picker's tmux test that need none.
func TestSessionsLsByFolder(t *testing.T) {
	home := t.TempDir()
	here, there := t.TempDir(), t.TempDir()
	env := map[string]string{"AGENTTY_HOME": home, "AGENTTY_CONFIG": filepath.Join(home, "no-config.json")}
	for _, run := range [][2]string{{here, "what is 1+1"}, {there, "what is 2+2"}, {there, "what is 3+3"}} {
		if code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", run[0], "--model", "offline", run[1]); code != 0 {
			t.Fatalf("run: %s", errs)
		}
	}
	code, out, _ := runCLI(t, context.Background(), env, "sessions", "ls", "--workspace", here)
	if code != 0 || !strings.Contains(out, "what is 1+1") || strings.Contains(out, "what is 2+2") || !strings.Contains(out, "(2 in other folders not shown: agentty sessions ls --all)") {
		t.Errorf("sessions ls does not list this folder's alone, saying what it left out:\n%s", out)
	}
	code, out, _ = runCLI(t, context.Background(), env, "sessions", "ls", "--all", "--workspace", here)
	if code != 0 || !strings.Contains(out, "what is 2+2") || !strings.Contains(out, "what is 3+3") || strings.Index(out, "what is 1+1") > strings.Index(out, "what is 2+2") {
		t.Errorf("sessions ls --all does not list every folder's, this folder's first:\n%s", out)
	}
	code, out, _ = runCLI(t, context.Background(), env, "sessions", "ls", "--workspace", t.TempDir())
	if code != 0 || !strings.Contains(out, "3 in other folders not shown") {
		t.Errorf("sessions ls in a folder with none: exit %d\n%s", code, out)
	}
}
