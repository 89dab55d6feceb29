package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/fleet"
)

// heldBreaks is a console that shows each break and answers it for the
// tool once released.
type heldBreaks struct {
	asked   chan engine.Pending
	release chan struct{}
}

func (g *heldBreaks) Stop(engine.Pending) bool { return false }

func (g *heldBreaks) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	select {
	case g.asked <- p:
	default:
	}
	select {
	case <-g.release:
		return engine.Verdict{Action: engine.Respond, Result: "17*23 = 400"}, nil
	case <-ctx.Done():
		return engine.Verdict{}, ctx.Err()
	}
}

// TestPauseReachesItsConsoleAndShowsUnanswered (issue 52, hole 10), with
// agentty serve's users: twenty connections of the submit user sit in the
// consoles' queue group and never answer; the pause of a submitted run
// still reaches its submitter's console, and while nobody has answered it
// top shows the run paused and unanswered, and sessions show says what it
// waits for. The console's answer then ends the run.
func TestPauseReachesItsConsoleAndShowsUnanswered(t *testing.T) {
	users, _, err := bus.LoadOrMakeUsers(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Users: &users})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	op, sub := asUser(t, srv.URL(), users.Operator), asUser(t, srv.URL(), users.Submit)
	if err := bus.Setup(context.Background(), connectTo(t, op), 1, nil); err != nil {
		t.Fatal(err)
	}
	startWorker(t, asUser(t, srv.URL(), users.Worker), "")
	owner := testEnv(t)
	code, out, errs := runCLI(t, context.Background(), owner, "submit", "--nats", sub, "--break", "tool=calc*", "what is 17*23?")
	if code != 0 {
		t.Fatalf("submit: %d %s", code, errs)
	}
	id := strings.TrimSpace(out)
	for range 20 {
		if _, err := connectTo(t, sub).QueueSubscribe(bus.GateSubject(id), "agentty.console", func(*nats.Msg) {}); err != nil {
			t.Fatal(err)
		}
	}
	key, err := bus.LoadSigner(owner["AGENTTY_HOME"])
	if err != nil {
		t.Fatal(err)
	}
	console := &heldBreaks{asked: make(chan engine.Pending, 1), release: make(chan struct{})}
	stop, err := bus.AnswerGate(connectTo(t, sub), id, console, key)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	select {
	case <-console.asked:
	case <-time.After(2 * time.Minute): // a hang, not a speed limit: the worker asks again only after 30 s
		t.Fatal("the pause never reached its submitter's console")
	}
	waitUnanswered(t, owner, sub, id)
	close(console.release)
	if l := waitAnswered(t, natsStoreAt(t, op), []string{id})[id]; l.Session.LastRun().Answer != "17*23 = 400" {
		t.Errorf("the run's answer: %q, want the console's", l.Session.LastRun().Answer)
	}
}

// waitUnanswered waits for top to show session id's run paused and
// unanswered, then checks that top's text and sessions show say so.
func waitUnanswered(t *testing.T, env map[string]string, url, id string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		code, out, errs := runCLI(t, context.Background(), env, "top", "--json", "--nats", url)
		if code != 0 {
			t.Fatalf("top --json: %d %s", code, errs)
		}
		var snap fleet.Snapshot
		json.Unmarshal([]byte(out), &snap)
		if len(snap.Running) == 1 && snap.Running[0].State == "paused" && !snap.Running[0].Paused.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("top never showed the run paused, unanswered:\n%s", out)
		}
	}
	if code, out, errs := runCLI(t, context.Background(), env, "top", "--nats", url); code != 0 || !strings.Contains(out, "unanswered") {
		t.Errorf("top: %d %q %q, want the run paused and unanswered", code, out, errs)
	}
	code, out, errs := runCLI(t, context.Background(), env, "sessions", "show", "--nats", url, id)
	if code != 0 || !strings.Contains(out, "unanswered: the pause at step") || !strings.Contains(out, "calculator") {
		t.Errorf("sessions show: %d %q %q, want the pause it waits on", code, out, errs)
	}
}
