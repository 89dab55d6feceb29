//go:build linux

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

// shellUntilKilled is the test binary as an agentty that runs one
// run_shell in dir and is killed while the command runs: the command
// starts a sh of its own (a grandchild of agentty's child), which writes
// its pid, sleeps, then would append to count.txt.
func shellUntilKilled(dir string) int {
	w, err := OpenWorkspace(dir)
	if err != nil {
		return 2
	}
	sh := w.RunShell(time.Minute)
	sh.Func(context.Background(), &engine.Call{Args: json.RawMessage(`{"command":"sh -c 'echo $$ > sh.pid; sleep 20; echo done >> count.txt'; echo after"}`), Memory: &engine.MemoryView{}})
	return 0
}

// A shell command's processes die with agentty: killed -9 while the
// command runs, not even a sh the command started goes on (as an orphan)
// to act on the workspace. The test is the orphans' subreaper, so it can
// wait for that sh and see how it ended.
func TestShellDiesWithAgentty(t *testing.T) {
	const prSetChildSubreaper = 36
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		t.Fatalf("prctl: %v", e)
	}
	defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0)
	dir := t.TempDir()
	agentty := exec.Command(os.Args[0], "-test.run=^$")
	agentty.Env = append(os.Environ(), "AGENTTY_TEST_SHELL_IN="+dir)
	if err := agentty.Start(); err != nil {
		t.Fatal(err)
	}
	pid := 0
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			agentty.Process.Kill()
			t.Fatal("the command never started")
		}
		b, _ := os.ReadFile(filepath.Join(dir, "sh.pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	agentty.Process.Kill()
	agentty.Wait()
	// The orphans come to the test: reap them as they end, until the sh
	// the command started is gone.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var ws syscall.WaitStatus
		for {
			if got, _ := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); got <= 0 {
				break
			}
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the sh %d the command started goes on after agentty was killed", pid)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "count.txt")); err == nil {
		t.Error("the command went on after agentty died")
	}
}
