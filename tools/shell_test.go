package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
	b, _ := os.ReadFile(pidFile)
	pid := strings.TrimSpace(string(b))
	deadline := time.Now().Add(2 * time.Second)
	for {
		if _, err := os.Stat("/proc/" + pid); err != nil {
			break
		}
		if st, _ := os.ReadFile("/proc/" + pid + "/stat"); strings.Contains(string(st), ") Z ") {
			break // a zombie waiting for its reaper is dead
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child %s survived the timeout", pid)
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
