package cli

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/fleet"
)

// agentty top --json lists a run going on with its worker and a request
// waiting with its pool; agentty cancel stops the run at once, mid-decision,
// and takes the waiting request off the queue, each session saying why.
func TestTopAndCancel(t *testing.T) {
	srv := natsServer(t)
	url := srv.URL()
	startWorker(t, url, writeScript(t, `{"turns":[{"answer":"late","delay_ms":60000}]}`))
	env := map[string]string{"AGENTTY_HOME": t.TempDir()}
	submit := func(args ...string) string {
		t.Helper()
		code, out, errs := runCLI(t, context.Background(), env, append([]string{"submit", "--nats", url}, args...)...)
		if code != 0 {
			t.Fatalf("submit: %d %s", code, errs)
		}
		return strings.TrimSpace(out)
	}
	running := submit("think for a minute")
	waiting := submit("--pool", "nobody", "wait for a worker")
	var snap fleet.Snapshot
	deadline := time.Now().Add(time.Minute)
	for {
		code, out, errs := runCLI(t, context.Background(), env, "top", "--json", "--nats", url)
		if code != 0 {
			t.Fatalf("top --json: %d %s", code, errs)
		}
		snap = fleet.Snapshot{}
		json.Unmarshal([]byte(out), &snap)
		if len(snap.Running) == 1 && snap.Running[0].State == "deciding" && len(snap.Queued) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("top never showed the run deciding and the request waiting:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	r, q := snap.Running[0], snap.Queued[0]
	if r.Session != running || r.Worker == "" || len(snap.Workers) != 1 || snap.Workers[0].ID != r.Worker || r.Task != "think for a minute" {
		t.Errorf("the running run: %+v, workers %+v", r, snap.Workers)
	}
	if q.Request.Session != waiting || q.Pool != "nobody" {
		t.Errorf("the waiting request: %+v", q)
	}
	code, out, _ := runCLI(t, context.Background(), env, "queue", "ls", "--nats", url)
	if code != 0 || !strings.Contains(out, waiting) || strings.Contains(out, running) {
		t.Errorf("queue ls:\n%s", out)
	}
	for _, id := range []string{running, waiting} {
		if code, out, errs := runCLI(t, context.Background(), env, "cancel", "--nats", url, id); code != 0 {
			t.Fatalf("cancel %s: %d %s %s", id, code, out, errs)
		}
	}
	store := natsStoreAt(t, url)
	got := waitAnswered(t, store, []string{running, waiting})
	for id, why := range map[string]string{running: "cancelled by agentty cancel", waiting: "taken off the queue"} {
		last := got[id].Session.LastRun()
		if last.Stop != engine.StopCancelled || !strings.Contains(last.Error, why) {
			t.Errorf("session %s ended %s: %q, want cancelled saying %q", id, last.Stop, last.Error, why)
		}
	}
	code, _, errs := runCLI(t, context.Background(), env, "cancel", "--nats", url, "0mxnosuchone")
	if code != 1 || !strings.Contains(errs, "nothing to cancel") {
		t.Errorf("cancel of nothing: %d %s", code, errs)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		code, out, _ = runCLI(t, context.Background(), env, "top", "--json", "--nats", url)
		snap = fleet.Snapshot{}
		json.Unmarshal([]byte(out), &snap)
		if code == 0 && len(snap.Running) == 0 && len(snap.Queued) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the cancels top shows %s", out)
		}
	}
	if code, out, _ := runCLI(t, context.Background(), env, "queue", "ls", "--nats", url); code != 0 || !strings.Contains(out, "The queue is empty") {
		t.Errorf("queue ls of an empty queue: %d %q", code, out)
	}
}

// A session's requests, queued one after another while three workers take
// them, run in the order they were queued: a conversation's order is its
// meaning.
func TestASessionsRequestsRunInOrder(t *testing.T) {
	srv := natsServer(t)
	url := srv.URL()
	env := map[string]string{"AGENTTY_HOME": t.TempDir()}
	var session string
	for i := 1; i <= 10; i++ {
		args := []string{"submit", "--nats", url}
		if session != "" {
			args = append(args, "--session", session)
		}
		code, out, errs := runCLI(t, context.Background(), env, append(args, "what is "+strconv.Itoa(100+i)+"+0?")...)
		if code != 0 {
			t.Fatalf("submit %d: %d %s", i, code, errs)
		}
		session = strings.TrimSpace(out)
	}
	for range 3 {
		startWorker(t, url, "")
	}
	store := natsStoreAt(t, url)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		l, err := store.Load(session)
		if err == nil && l.Session.Runs == 10 && !l.Session.Interrupted() {
			var order []string
			for _, ev := range l.Events {
				if d, ok := ev.Data.(*engine.RunStarted); ok && ev.ParentRun == "" {
					order = append(order, strings.TrimSuffix(strings.TrimPrefix(d.Task, "what is "), "+0?"))
				}
			}
			if got := strings.Join(order, " "); got != "101 102 103 104 105 106 107 108 109 110" {
				t.Fatalf("the requests ran as %s", got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ten runs did not finish: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Without NATS, top lists the sessions running on this machine: a console
// mid-run is there, a finished session is not.
func TestTopLocal(t *testing.T) {
	tm := newTmux(t)
	home := t.TempDir()
	tm.start(home, "--model", "script:"+writeScript(t, `{"turns":[{"answer":"late","delay_ms":60000}]}`))
	tm.keys("take your time", "Enter")
	tm.wait("the run", func(s string) bool { return strings.Contains(s, "thinking") })
	env := map[string]string{"AGENTTY_HOME": home}
	code, out, errs := runCLI(t, context.Background(), env, "top")
	if code != 0 || !strings.Contains(out, "1 running on this machine") || !strings.Contains(out, "take your time") {
		t.Errorf("top: %d\n%s%s", code, out, errs)
	}
	tm.keys("C-c")
	tm.keys("C-c")
	tm.waitGone()
	code, out, _ = runCLI(t, context.Background(), env, "top", "--json")
	if code != 0 || !strings.Contains(out, `"running": []`) {
		t.Errorf("top --json after the console quit: %d\n%s", code, out)
	}
}
