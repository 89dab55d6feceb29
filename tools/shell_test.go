package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
)

func TestRunShell(t *testing.T) {
	w, _ := tree(t)
	sh := w.RunShell(500 * time.Millisecond)
	if sh.Policy != engine.PolicyAsk {
		t.Errorf("run_shell must ask")
	}
	out, err := call(t, sh, `{"command":"cat README.md | head -1; echo oops >&2; exit 3"}`)
	if err != nil || !strings.HasPrefix(out, "exit status 3\n") || !strings.Contains(out, "# demo") || !strings.Contains(out, "oops") {
		t.Errorf("run_shell = %q, %v", out, err)
	}
	out, _ = call(t, sh, `{"command":"yes agentty | head -c 100000"}`)
	if !strings.Contains(out, "more bytes of output cut") || len(out) > maxShellOutput+200 {
		t.Errorf("output not capped: %d bytes", len(out))
	}
	// A timeout kills the whole process group, children included.
	pidFile := filepath.Join(w.Dir(), "child.pid")
	start := time.Now()
	_, err = call(t, sh, `{"command":"sleep 30 & echo $! > child.pid; wait"}`)
	if err == nil || !strings.Contains(err.Error(), "stopped after 500ms") || time.Since(start) > 5*time.Second {
		t.Fatalf("timeout: %v after %s", err, time.Since(start))
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the command did not write its child's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("child pid %q: %v", b, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !gone(t, pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the child %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Cancelling the run stops the command too.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = sh.Func(ctx, &engine.Call{Args: json.RawMessage(`{"command":"sleep 30"}`)})
	if err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("cancel: %v after %s", err, time.Since(start))
	}
}

// gone reports whether process pid has exited: kill(pid, 0) fails with
// ESRCH, on every Unix. A zombie (dead, not yet reaped by whoever inherited
// it) still exists for kill; ps tells it apart, and without ps it counts as
// alive, so the check never passes for want of a way to look.
func gone(t *testing.T, pid int) bool {
	t.Helper()
	err := syscall.Kill(pid, 0)
	switch {
	case errors.Is(err, syscall.ESRCH):
		return true
	case err != nil && !errors.Is(err, syscall.EPERM):
		t.Fatalf("kill(%d, 0): %v", pid, err)
	}
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	return err == nil && strings.HasPrefix(strings.TrimSpace(string(out)), "Z")
}

// A command runs with the signals as a shell gives them (under its guard,
// not as a background job, which ignores SIGINT): a trap on INT fires.
func TestRunShellSignalsAsUsual(t *testing.T) {
	w, _ := tree(t)
	out, err := call(t, w.RunShell(10*time.Second), `{"command":"trap 'echo trapped' INT; kill -INT $$; echo after"}`)
	if err != nil || !strings.Contains(out, "trapped") || !strings.Contains(out, "after") {
		t.Errorf("run_shell = %q, %v; want the trap to fire", out, err)
	}
}
