package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// TestQueuePartitioned (issue 55): `queue setup --partitions 4` makes four
// journal and four queue partitions; 40 runs of 40 sessions are each
// answered exactly once by three workers taking from every partition, at
// least three partitions of each carry work, a session's three queued
// requests still run in the order they were queued, and a request
// published by hand to a partition that does not hold its session is
// refused, journaled in its session, while the next good one runs.
func TestQueuePartitioned(t *testing.T) {
	srv := natsServer(t)
	url := srv.URL()
	code, out, errs := runCLI(t, context.Background(), testEnv(t), "queue", "setup", "--nats", url, "--partitions", "4")
	if code != 0 || !strings.Contains(out, "in 4 partitions") {
		t.Fatalf("queue setup --partitions 4: exit %d: %s %s", code, out, errs)
	}
	// One session's three requests, queued before any worker runs.
	code, out, errs = runCLI(t, context.Background(), testEnv(t), "submit", "--nats", url, "what is 1+1?")
	if code != 0 {
		t.Fatalf("submit: %d %s", code, errs)
	}
	ordered := strings.TrimSpace(out)
	for _, task := range []string{"what is 2+2?", "what is 3+3?"} {
		if code, _, errs := runCLI(t, context.Background(), testEnv(t), "submit", "--nats", url, "--session", ordered, task); code != 0 {
			t.Fatalf("submit --session: %d %s", code, errs)
		}
	}
	ids := submitN(t, url, 40)
	for range 3 {
		startWorker(t, url, "", "--concurrency", "4")
	}
	store := natsStoreAt(t, url)
	for id := range waitAnswered(t, store, ids) {
		if f := sessionRuns(t, store, id, 1); len(f) != 1 || f[0].StopReason != engine.StopAnswered {
			t.Errorf("session %s: %d runs, the first %s, want one answered", id, len(f), f[0].StopReason)
		}
	}
	nc, q := openQueueAt(t, url)
	l := q.Layout()
	js, _ := jetstream.New(nc)
	for _, kind := range []func(int) string{l.JournalStream, l.RunsStream} {
		used := 0
		for p := range 4 {
			st, err := js.Stream(context.Background(), kind(p))
			if err != nil {
				t.Fatal(err)
			}
			if st.CachedInfo().State.LastSeq > 0 {
				used++
			}
		}
		if used < 3 {
			t.Errorf("%s…: %d of the 4 partitions carried work", kind(0), used)
		}
	}
	answers := sessionAnswers(t, store, ordered, 3)
	for i, want := range []string{"2", "4", "6"} {
		if !strings.Contains(answers[i], want) {
			t.Errorf("the session's queued requests answered %q, want 2, 4, 6 in the order queued", answers)
			break
		}
	}
	// By hand, on partition 0's subject, a request of a session of another.
	victim := ids[slices.IndexFunc(ids, func(id string) bool { return l.Of(id) != 0 })]
	req := fmt.Sprintf(`{"id":"by-hand","session":%q,"task":"what is 9*9?","submitted":%q}`, victim, time.Now().UTC().Format(time.RFC3339Nano))
	if _, err := js.Publish(context.Background(), fmt.Sprintf("agentty.runs.0.%s.%s", bus.DefaultPool, victim), []byte(req)); err != nil {
		t.Fatal(err)
	}
	refused := sessionRuns(t, store, victim, 2)
	if f := refused[1]; f.StopReason != engine.StopError || !strings.Contains(f.Error, "partition 0") {
		t.Errorf("the misplaced request ended %s: %q, want refused for its partition", f.StopReason, f.Error)
	}
	if code, out, errs := runCLI(t, context.Background(), testEnv(t), "submit", "--nats", url, "--session", victim, "--wait", "what is 5*5?"); code != 0 || !strings.Contains(out, "25") {
		t.Errorf("the next request of the session: exit %d %q %s", code, out, errs)
	}
}

// sessionRuns waits until session id has n finished runs and returns
// their run_finished, in order.
func sessionRuns(t *testing.T, store *sessions.Store, id string, n int) []*engine.RunFinished {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		var out []*engine.RunFinished
		if l, err := store.Load(id); err == nil {
			for _, ev := range l.Events {
				if f, ok := ev.Data.(*engine.RunFinished); ok && ev.Agent == "" && !strings.Contains(ev.Run, "/") {
					out = append(out, f)
				}
			}
		}
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: %d of %d runs finished", id, len(out), n)
		}
	}
}

// sessionAnswers is the answers of session id's first n runs, in order.
func sessionAnswers(t *testing.T, store *sessions.Store, id string, n int) []string {
	var out []string
	for _, f := range sessionRuns(t, store, id, n) {
		out = append(out, f.Answer)
	}
	return out
}
