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
	"github.com/agentty/agentty/engine/enginetest"
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

// run_shell's structured result keeps stdout and stderr apart with the
// exit code (what a workflow's templates read), while the text the model
// reads is as before: the status line, then both streams.
func TestRunShellStructured(t *testing.T) {
	w, _ := tree(t)
	sh := w.RunShell(5 * time.Second)
	c := &engine.Call{Args: json.RawMessage(`{"command":"printf 'a\\nb\\n'; echo oops >&2; exit 3"}`), Memory: &engine.MemoryView{}}
	out, err := sh.Func(context.Background(), c)
	if err != nil || !strings.HasPrefix(out, "exit status 3\n") || !strings.Contains(out, "a\nb\n") || !strings.Contains(out, "oops\n") {
		t.Fatalf("run_shell = %q, %v", out, err)
	}
	fin := runStructured(t, sh, `{"command":"printf 'a\\nb\\n'; echo oops >&2; exit 3"}`)
	var got ShellResult
	if err := json.Unmarshal(fin.Structured, &got); err != nil {
		t.Fatalf("structured %s: %v", fin.Structured, err)
	}
	if got != (ShellResult{Exit: 3, Stdout: "a\nb\n", Stderr: "oops\n"}) {
		t.Errorf("structured = %+v", got)
	}
	fin = runStructured(t, sh, `{"command":"yes agentty | head -c 100000"}`)
	got = ShellResult{}
	json.Unmarshal(fin.Structured, &got)
	if got.Exit != 0 || len(got.Stdout) != maxShellOutput || got.StdoutCut != 100000-maxShellOutput || got.Stderr != "" {
		t.Errorf("a long stdout: exit %d, %d bytes kept, %d cut", got.Exit, len(got.Stdout), got.StdoutCut)
	}
}

// runStructured runs one call of tool through an engine and returns its
// tool_finished.
func runStructured(t *testing.T, tool engine.Tool, args string) *engine.ToolFinished {
	t.Helper()
	tool.Policy = engine.PolicyAllow
	model := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		if req.Turn == 0 {
			return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c", Name: tool.Name, Args: json.RawMessage(args)}}}, nil
		}
		return engine.Decision{Text: "done"}, nil
	})
	rec := &enginetest.Recorder{}
	e := engine.New(engine.Config{Model: model, Tools: mustRegistry(t, tool)})
	if res := e.Run(context.Background(), engine.NewSession("s"), "go", rec); res.StopReason != engine.StopAnswered {
		t.Fatalf("%+v", res)
	}
	fins := rec.Finished()
	if len(fins) != 1 {
		t.Fatalf("%d calls", len(fins))
	}
	return fins[0]
}
