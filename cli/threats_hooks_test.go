package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// personHooks writes the person's ~/.claude/settings.json (HOME is the
// fixture's outside folder) with hooks.
func personHooks(t *testing.T, f *fixture, hooks string) {
	t.Helper()
	p := filepath.Join(f.outside, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"hooks":`+hooks+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
}

// hookJSON is one hook of event running command, with extra fields.
func hookJSON(event, command, extra string) string {
	c, _ := json.Marshal(command)
	return fmt.Sprintf(`{%q:[{"matcher":"*","hooks":[{"type":"command","command":%s%s}]}]}`, event, c, extra)
}

// hostileHookRows: hooks a folder supplies, and hooks that misbehave.
func hostileHookRows() []hostile {
	return []hostile{{
		name: "an untrusted folder's hooks",
		setup: func(t *testing.T, f *fixture) {
			for _, ev := range []string{"PreToolUse", "UserPromptSubmit", "SessionStart", "Stop"} {
				file := ".claude/settings.json"
				if ev == "Stop" {
					file = ".claude/settings.local.json"
				}
				f.write(t, file, `{"hooks":`+hookJSON(ev, "touch "+filepath.Join(f.outside, "ran-"+ev), "")+`}`)
			}
		},
		args: []string{"run", "--model", "offline", "list files"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 0 {
				t.Errorf("exit %d: %s", r.code, r.stderr)
			}
			ran, _ := filepath.Glob(filepath.Join(f.outside, "ran-*"))
			if len(ran) > 0 {
				t.Errorf("an untrusted folder's hooks ran: %v", ran)
			}
			wantIn(t, "stderr", r.stderr, "untrusted: ignoring hooks (.claude/settings.")
		},
	}, {
		name: "a hook that hangs with a child",
		setup: func(t *testing.T, f *fixture) {
			personHooks(t, f, hookJSON("UserPromptSubmit", "sleep 60 & echo $! >> "+filepath.Join(f.outside, "child.pid")+"; wait", `,"timeout":1`))
		},
		args: []string{"run", "--model", "offline", "what is 6*7?"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 0 || !strings.Contains(r.stdout, "42") || r.took > 15*time.Second {
				t.Errorf("exit %d after %s: %q %s", r.code, r.took, r.stdout, r.stderr)
			}
			b, _ := os.ReadFile(filepath.Join(f.outside, "child.pid"))
			var pid int
			fmt.Sscan(string(b), &pid)
			deadline := time.Now().Add(5 * time.Second)
			for pid > 0 && syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if pid == 0 || syscall.Kill(pid, 0) == nil {
				t.Errorf("the hook's child %d outlived its timeout", pid)
			}
			wantIn(t, "journal", f.journals(t), `"timed_out":true`)
		},
	}, {
		name: "a hook that prints 5 MB",
		setup: func(t *testing.T, f *fixture) {
			personHooks(t, f, hookJSON("PostToolUse", "cat >/dev/null; head -c 5000000 /dev/zero | tr '\\0' x", ""))
		},
		args: []string{"run", "--model", "offline", "list files"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			j := f.journals(t)
			if r.code != 0 || len(j) > 1<<20 {
				t.Errorf("exit %d, a journal of %d bytes: %s", r.code, len(j), r.stderr)
			}
			wantIn(t, "journal", j, "[cut at 65536 bytes]")
		},
	}}
}
