package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/nats-io/nats.go"
)

// Another user on the bus answers the pause of a run it did not submit:
// unsigned on the gate's queue group (as `nats reply` would), and from a
// console of its own data folder. Neither answer is taken; the refusal is
// journaled with the verdict, and the run goes on with its submitter's
// answer. The other user's console leaves the pause alone.
func TestAnotherUsersPauseAnswerIsRefused(t *testing.T) {
	srv := natsServer(t)
	url := srv.URL()
	startWorker(t, url, "")
	owner, other := testEnv(t), testEnv(t)
	code, out, errs := runCLI(t, context.Background(), owner, "submit", "--nats", url, "--break", "tool=calc*", "what is 17*23?")
	if code != 0 {
		t.Fatalf("submit: %d %s", code, errs)
	}
	id := strings.TrimSpace(out)
	attacker := connectTo(t, url)
	forged := make(chan struct{}, 64)
	sub, err := attacker.QueueSubscribe(bus.GateSubject(id), "agentty.console", func(m *nats.Msg) {
		m.Respond([]byte(`{"action":"respond","result":"17*23 = 1000"}`))
		forged <- struct{}{}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	select {
	case <-forged:
	case <-time.After(2 * time.Minute):
		t.Fatal("the run never paused")
	}
	otherKey, err := bus.LoadOrMakeSigner(other["AGENTTY_HOME"])
	if err != nil {
		t.Fatal(err)
	}
	otherConsole := &watchingConsole{}
	stopOther, err := bus.AnswerGate(connectTo(t, url), id, otherConsole, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	defer stopOther()
	for deadline := time.Now().Add(time.Minute); otherConsole.watchedCount() == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the other user's console was never told of the pause it may only watch")
		}
	}
	ownerKey, err := bus.LoadSigner(owner["AGENTTY_HOME"])
	if err != nil {
		t.Fatal(err)
	}
	stop, err := bus.AnswerGate(connectTo(t, url), id, &answerBreaks{}, ownerKey)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	l := waitAnswered(t, natsStoreAt(t, url), []string{id})[id]
	if a := l.Session.LastRun(); a.Answer != "17*23 = 400" {
		t.Errorf("the run's answer: %q; want the submitter's", a.Answer)
	}
	var refused []string
	for _, ev := range l.Events {
		if d, ok := ev.Data.(*engine.GateResumed); ok {
			refused = append(refused, d.Refused...)
		}
	}
	if len(refused) == 0 || !strings.Contains(refused[0], "respond") || !strings.Contains(refused[0], "not signed by whoever may steer this session") {
		t.Errorf("the refusals journaled: %q", refused)
	}
	otherConsole.mu.Lock()
	defer otherConsole.mu.Unlock()
	if len(otherConsole.seen) != 0 {
		t.Errorf("the other user's console was shown the pause to answer: %+v", otherConsole.seen)
	}
}

// watchingConsole is a console that may only watch: it counts the pauses
// it is told of (bus.Watcher).
type watchingConsole struct {
	answerBreaks
	watched int
}

func (c *watchingConsole) watchedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watched
}

func (c *watchingConsole) Watching(engine.Pending) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watched++
}

// A question is answered by its submitter alone: a forged answer (hello,
// then an unsigned answer with the nonce) is refused and journaled, agentty
// answer from another data folder is refused (and journaled) saying whose
// it is, and the submitter's answer is the one remembered.
func TestAnotherUsersQuestionAnswerIsRefused(t *testing.T) {
	srv := natsServer(t)
	url := srv.URL()
	startWorker(t, url, "")
	owner, other := testEnv(t), testEnv(t)
	code, out, errs := runCLI(t, context.Background(), owner, "submit", "--nats", url, "ask me for my name and remember it")
	if code != 0 {
		t.Fatalf("submit: %d %s", code, errs)
	}
	id := strings.TrimSpace(out)
	attacker := connectTo(t, url)
	var hello bus.AnswerReply
	for deadline := time.Now().Add(2 * time.Minute); hello.Nonce == ""; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run never asked")
		}
		m, err := attacker.Request(bus.AskSubject(id), []byte(`{"session":"`+id+`","hello":true}`), 5*time.Second)
		if err == nil {
			json.Unmarshal(m.Data, &hello)
		}
	}
	forged, _ := json.Marshal(bus.AnswerMsg{Session: id, Answer: "Mallory", Nonce: hello.Nonce})
	m, err := attacker.Request(bus.AskSubject(id), forged, 5*time.Second)
	if err != nil || !strings.Contains(string(m.Data), "refused") {
		t.Fatalf("a forged answer: %v %s", err, m.Data)
	}
	code, _, errs = runCLI(t, context.Background(), other, "answer", "--nats", url, id, "Eve")
	if code != 1 || !strings.Contains(errs, "steering key is not theirs") {
		t.Errorf("another user's agentty answer: exit %d, %q", code, errs)
	}
	if code, out, errs := runCLI(t, context.Background(), owner, "answer", "--nats", url, id, "Ada"); code != 0 || !strings.Contains(out, "answered") {
		t.Fatalf("the submitter's answer: exit %d, %q %q", code, out, errs)
	}
	l := waitAnswered(t, natsStoreAt(t, url), []string{id})[id]
	if mem := l.Session.Memory(); len(mem) != 1 || mem[0].Value != "Ada" {
		t.Errorf("memory %+v; want the submitter's answer", mem)
	}
	var rejected []string
	for _, ev := range l.Events {
		if d, ok := ev.Data.(*engine.QuestionAnswered); ok {
			rejected = append(rejected, d.Rejected...)
		}
	}
	if len(rejected) != 2 || !strings.Contains(rejected[0], "not signed") || !strings.Contains(rejected[1], "not signed") { // the forged one and agentty answer's from another folder
		t.Errorf("the rejections journaled: %q", rejected)
	}
	if code, out, errs := runCLI(t, context.Background(), owner, "sessions", "show", "--nats", url, id); code != 0 || strings.Count(out, "refused  an answer to") != 2 {
		t.Errorf("sessions show: exit %d, %q, %q", code, out, errs)
	}
}

func connectTo(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}
