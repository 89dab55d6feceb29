package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
)

// TestWorkerKilledInsideACallDoesNotRunItAgain: a worker is killed while
// a tool that is not repeatable (run_shell) runs, certainly: the command
// marks a file, then waits, and the kill comes once the mark is there. The
// worker that continues the run does not run the call again (the command
// would mark the file a second time, and return at once): the model is
// told it was interrupted, and the run answers.
func TestWorkerKilledInsideACallDoesNotRunItAgain(t *testing.T) {
	srv := natsServer(t)
	mark := filepath.Join(t.TempDir(), "mark")
	command := fmt.Sprintf(`echo x >> %[1]s; [ "$(wc -l < %[1]s)" -ge 2 ] || sleep 600`, mark)
	script := writeScript(t, fmt.Sprintf(`{"turns":[{"tool_calls":[{"name":"run_shell","arguments":{"command":%q}}]},{"answer":"all done"}]}`, command))
	victim := startWorker(t, srv.URL(), script, "--allow-shell", "--yes")
	ids := submitN(t, srv.URL(), 1)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker never ran the command")
		}
	}
	victim.Process.Signal(syscall.SIGKILL)
	victim.Wait()
	startWorker(t, srv.URL(), script, "--allow-shell", "--yes")
	l := waitAnswered(t, natsStoreAt(t, srv.URL()), ids)[ids[0]]
	if b, _ := os.ReadFile(mark); strings.Count(string(b), "x") != 1 {
		t.Errorf("the interrupted command ran %d times, want once", strings.Count(string(b), "x"))
	}
	if a := l.Session.LastRun(); a.Answer != "all done" {
		t.Errorf("the run ended %s %q: %s", a.Stop, a.Answer, a.Error)
	}
	var results []string
	for _, ev := range l.Events {
		if d, ok := ev.Data.(*engine.ToolFinished); ok {
			results = append(results, d.Result+d.Error)
		}
	}
	if len(results) != 1 || !strings.Contains(results[0], "interrupted") {
		t.Errorf("the call's results journaled: %q, want one saying it was interrupted", results)
	}
}
