package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
	"github.com/nats-io/nats.go"
)

// badRequest is one kind of request a worker must refuse, with the words
// its journaled end must hold ("" for a message that is no request at all,
// which has no session to journal in and is dropped with a log line).
type badRequest struct {
	name   string
	req    func(i int) bus.RunRequest
	reason string
}

var badRequests = []badRequest{
	{"script model", func(i int) bus.RunRequest {
		return bus.RunRequest{Task: "hi", Model: "script:/etc/passwd"}
	}, "may not name a script model"},
	{"unknown agent", func(i int) bus.RunRequest {
		return bus.RunRequest{Task: "hi", Agent: fmt.Sprintf("nobody-%d", i)}
	}, "nobody-"},
	{"unknown model, no key", func(i int) bus.RunRequest {
		return bus.RunRequest{Task: "hi", Model: "gpt-unknown"}
	}, "needs OPENAI_API_KEY"},
	{"malformed JSON", nil, ""},
}

// submitHostileBatch submits n bad requests (the kinds of badRequests in
// turn) interleaved with n good ones ("what is i*7?") to the default pool,
// the bad ones raw as anyone who can publish could, and returns the good
// and bad sessions.
func submitHostileBatch(t *testing.T, url string, n int) (good map[string]int, bad map[string]badRequest) {
	t.Helper()
	ctx := context.Background()
	nc, q := openQueueAt(t, url)
	good, bad = map[string]int{}, map[string]badRequest{}
	for i := range n {
		kind := badRequests[i%len(badRequests)]
		if kind.req == nil {
			raw := fmt.Sprintf(`{"session": "s%d", "task": `, i) // cut short
			if _, err := nc.Request(bus.RunSubject(bus.DefaultPool), []byte(raw), 5*time.Second); err != nil {
				t.Fatalf("publishing a malformed request: %v", err)
			}
		} else {
			req := kind.req(i)
			req.ID, req.Session = sessions.NewID(), sessions.NewID()
			if _, err := q.Submit(ctx, bus.DefaultPool, req); err != nil {
				t.Fatal(err)
			}
			bad[req.Session] = kind
		}
		req := bus.RunRequest{ID: sessions.NewID(), Session: sessions.NewID(), Task: fmt.Sprintf("what is %d*7?", i)}
		if _, err := q.Submit(ctx, bus.DefaultPool, req); err != nil {
			t.Fatal(err)
		}
		good[req.Session] = i * 7
	}
	return good, bad
}

// checkHostileBatch waits for every run of the batch to end and checks
// each good one was answered once, rightly, and each bad one ended with
// its reason journaled.
func checkHostileBatch(t *testing.T, store *sessions.Store, good map[string]int, bad map[string]badRequest) {
	t.Helper()
	var ids []string
	for id := range good {
		ids = append(ids, id)
	}
	for id := range bad {
		ids = append(ids, id)
	}
	done := waitAnswered(t, store, ids)
	for id, want := range good {
		runs, answer := finishedRuns(done[id].Events)
		if runs != 1 || !strings.Contains(answer, fmt.Sprint(want)) {
			t.Errorf("good session %s: %d runs, answer %q; want one run answering %d", id, runs, answer, want)
		}
	}
	for id, kind := range bad {
		runs, _ := finishedRuns(done[id].Events)
		fin := lastFinish(done[id].Events)
		if runs != 1 || fin == nil || fin.StopReason != engine.StopError || !strings.Contains(fin.Error, kind.reason) {
			t.Errorf("bad session %s (%s): %d runs, end %+v; want one run ending in error naming %q", id, kind.name, runs, fin, kind.reason)
		}
	}
}

// finishedRuns counts the top-level runs that finished and returns the
// last one's answer.
func finishedRuns(events []engine.Event) (n int, answer string) {
	for _, ev := range events {
		if d, ok := ev.Data.(*engine.RunFinished); ok && ev.ParentRun == "" {
			n++
			answer = d.Answer
		}
	}
	return n, answer
}

func lastFinish(events []engine.Event) *engine.RunFinished {
	var fin *engine.RunFinished
	for _, ev := range events {
		if d, ok := ev.Data.(*engine.RunFinished); ok && ev.ParentRun == "" {
			fin = d
		}
	}
	return fin
}

// waitTakers waits until n workers of the default pool are waiting for
// work at once: each of them is still taking requests.
func waitTakers(t *testing.T, url string, n int) {
	t.Helper()
	_, q := openQueueAt(t, url)
	most := 0
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		waiting, _, _, err := q.Takers(context.Background(), bus.DefaultPool)
		if err == nil && waiting >= n {
			return
		}
		most = max(most, waiting)
	}
	t.Fatalf("at most %d of %d workers were seen waiting for work", most, n)
}

// askOnce submits a good run through `agentty submit --wait` and checks
// its answer.
func askOnce(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, out, errs := runCLI(t, ctx, testEnv(t), "submit", "--nats", url, "--wait", "what is 6*7?")
	if code != 0 || !strings.Contains(out, "42") {
		t.Errorf("a good request after the batch: exit %d, %q, %s", code, out, errs)
	}
}

// TestWorkersSurviveBadRequests: 100 bad requests (a script model, an
// unknown agent, an unknown model with no key, malformed JSON) interleaved
// with 100 good ones on two workers: every good run is answered once,
// every bad one ends with its reason journaled, and both workers still
// take work (a give-up once closed a worker's connection for good).
func TestWorkersSurviveBadRequests(t *testing.T) {
	srv := natsServer(t)
	a := startWorker(t, srv.URL(), "", "--concurrency", "2")
	b := startWorker(t, srv.URL(), "", "--concurrency", "2")
	good, bad := submitHostileBatch(t, srv.URL(), 100)
	checkHostileBatch(t, natsStoreAt(t, srv.URL()), good, bad)
	waitTakers(t, srv.URL(), 2)
	askOnce(t, srv.URL())
	for _, w := range []*exec.Cmd{a, b} {
		if err := syscall.Kill(w.Process.Pid, 0); err != nil {
			t.Errorf("worker %d is gone: %v", w.Process.Pid, err)
		}
	}
}

// TestServeSurvivesBadRequests: the same batch on `agentty serve
// --workers 1`, whose worker shares the process with the server.
func TestServeSurvivesBadRequests(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command(binary, "serve", "--listen", "127.0.0.1:0", "--workers", "1", "--data-dir", home)
	cmd.Env = append(os.Environ(), "AGENTTY_CONFIG="+filepath.Join(t.TempDir(), "none.json"), "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
	stdout, _ := cmd.StdoutPipe()
	logf, _ := os.Create(filepath.Join(t.TempDir(), "serve.log"))
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("serve log:\n%s", b)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no URL: %v", err)
	}
	url := withServeUser(t, home, strings.TrimSpace(line))
	good, bad := submitHostileBatch(t, url, 100)
	checkHostileBatch(t, natsStoreAt(t, url), good, bad)
	waitTakers(t, url, 1)
	askOnce(t, url)
	log, _ := os.ReadFile(logf.Name())
	if n := strings.Count(string(log), "not a run request"); n != 25 {
		t.Errorf("%d malformed messages logged as dropped, want 25", n)
	}
	if strings.Contains(string(log), nats.ErrConnectionClosed.Error()) {
		t.Errorf("the worker's connection was closed:\n%s", log)
	}
}

// TestQueueKilledMidCall: a worker killed while a tool call runs (its side
// effect done, its result not yet journaled) leaves the call to the next
// worker, which does not run it again: the call ends "interrupted" and the
// side effect happened once. (Tests that kill between calls cannot tell a
// worker that re-runs every interrupted call from one that does not.)
func TestQueueKilledMidCall(t *testing.T) {
	srv := natsServer(t)
	effects := filepath.Join(t.TempDir(), "effects.txt")
	sc := writeScript(t, fmt.Sprintf(`{"turns":[
		{"tool_calls":[{"id":"call_once","name":"run_shell","arguments":{"command":"echo ran >> %s; sleep 30"}}]},
		{"answer":"all done"}]}`, effects))
	victim := startWorker(t, srv.URL(), sc, "--allow-shell", "--yes")
	ids := submitN(t, srv.URL(), 1)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(effects); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call never ran")
		}
	}
	victim.Process.Signal(syscall.SIGKILL)
	victim.Wait()
	startWorker(t, srv.URL(), sc, "--allow-shell", "--yes")
	l := waitAnswered(t, natsStoreAt(t, srv.URL()), ids)[ids[0]]
	if b, _ := os.ReadFile(effects); string(b) != "ran\n" {
		t.Errorf("the call's side effect happened %d times, want once", strings.Count(string(b), "ran"))
	}
	if !checkExactlyOnce(t, ids[0], l) {
		t.Error("the call was not reported interrupted")
	}
}
