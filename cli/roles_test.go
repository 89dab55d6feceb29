package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// asUser is url with user's name and password in it.
func asUser(t *testing.T, raw string, user bus.Credential) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user.User, user.Password)
	return u.String()
}

// TestRolesDoTheirWork: with agentty serve's users and its setup, each
// role does its whole work with no more than the role table gives it: a
// worker (the worker user) takes a run the submit user queued, the
// submitter follows it, lists it, sees the queue and the workers, and
// answers its run's question; the operator deletes the pool's consumer
// under the running worker, which makes it again, says so once, and
// answers the next run. So too with the streams in four partitions
// (issue 55: the role table covers every partition).
func TestRolesDoTheirWork(t *testing.T) {
	for _, k := range []int{1, 4} {
		t.Run(fmt.Sprintf("partitions=%d", k), func(t *testing.T) { rolesDoTheirWork(t, k) })
	}
}

func rolesDoTheirWork(t *testing.T, k int) {
	dir := t.TempDir()
	users, _, err := bus.LoadOrMakeUsers(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Users: &users})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	op, err := nats.Connect(asUser(t, srv.URL(), users.Operator))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	opHome := t.TempDir()
	opKey, err := bus.LoadOrMakeSigner(opHome)
	if err != nil {
		t.Fatal(err)
	}
	layout, err := bus.SetupWith(context.Background(), op, bus.Settings{Replicas: 1, Partitions: k}, opKey)
	if err != nil {
		t.Fatal(err)
	}
	workerLog := startWorkerLogged(t, asUser(t, srv.URL(), users.Worker))
	sub := asUser(t, srv.URL(), users.Submit)
	submitter := testEnv(t)
	cli := func(args ...string) (int, string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang, not a speed limit
		defer cancel()
		return runCLI(t, ctx, submitter, append(args[:1:1], append([]string{"--nats", sub}, args[1:]...)...)...)
	}
	if code, out, errs := cli("submit", "--wait", "what is 2+2"); code != 0 || !strings.Contains(out, "4") {
		t.Fatalf("submit --wait as the submit user: exit %d, %q, %q", code, out, errs)
	}
	code, out, errs := cli("submit", "ask me for my name and remember it")
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errs)
	}
	id := strings.TrimSpace(out)
	for _, args := range [][]string{{"sessions", "ls"}, {"sessions", "show", id}, {"queue", "ls"}, {"top", "--json"}} {
		if code, out, errs := cli(args...); code != 0 {
			t.Errorf("%s as the submit user: exit %d, %q, %q", strings.Join(args, " "), code, out, errs)
		}
	}
	if code, out, errs := cli("answer", "--wait", "1m", id, "Ada"); code != 0 {
		t.Errorf("answer as the submit user: exit %d, %q, %q", code, out, errs)
	}
	// What the role may not do is refused at once, saying so, not after a
	// wait on a request the server never answers: among it, cancelling a
	// request that waits (a pool no worker takes).
	code, out, errs = cli("submit", "--pool", "idle", "what is 1+1")
	if code != 0 {
		t.Fatalf("submit --pool idle: exit %d: %s", code, errs)
	}
	queued := strings.TrimSpace(out)
	for _, args := range [][]string{{"sessions", "rm", id}, {"queue", "setup"}, {"worker", "--model", "offline"}, {"cancel", queued}} {
		start := time.Now()
		code, out, errs := cli(args...)
		if code == 0 || !strings.Contains(errs, "this NATS user may not") || time.Since(start) > 20*time.Second || strings.Contains(errs, "on connection [") {
			t.Errorf("%s as the submit user: exit %d after %v, %q, %q", strings.Join(args, " "), code, time.Since(start).Round(time.Second), out, errs)
		}
	}
	l := waitAnswered(t, natsStoreAt(t, asUser(t, srv.URL(), users.Operator)), []string{id})[id]
	if mem := l.Session.Memory(); len(mem) != 1 || mem[0].Value != "Ada" {
		t.Errorf("memory %+v", mem)
	}
	// A pause answered by its submitter, as the submit user: the reply
	// goes to the worker's inbox, which the role may reach only as the
	// answer to the request it received.
	code, out, errs = cli("submit", "--break", "tool=calc*", "what is 17*23?")
	if code != 0 {
		t.Fatalf("submit --break: exit %d: %s", code, errs)
	}
	paused := strings.TrimSpace(out)
	key, err := bus.LoadSigner(submitter["AGENTTY_HOME"])
	if err != nil {
		t.Fatal(err)
	}
	subConn, err := nats.Connect(sub)
	if err != nil {
		t.Fatal(err)
	}
	defer subConn.Close()
	stopGate, err := bus.AnswerGate(subConn, paused, &answerBreaks{}, key)
	if err != nil {
		t.Fatal(err)
	}
	defer stopGate()
	if l := waitAnswered(t, natsStoreAt(t, asUser(t, srv.URL(), users.Operator)), []string{paused})[paused]; l.Session.LastRun().Answer != "17*23 = 400" {
		t.Errorf("the pause answered as the submit user: %q", l.Session.LastRun().Answer)
	}
	// The pool's consumer deleted under the running worker.
	js, _ := jetstream.New(op)
	for p := range layout.N() {
		if err := js.DeleteConsumer(context.Background(), layout.RunsStream(p), "workers-"+bus.DefaultPool); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, errs := cli("submit", "--wait", "what is 6*7"); code != 0 || !strings.Contains(out, "42") {
		t.Fatalf("the run after the consumer was deleted: exit %d, %q, %q\nworker:\n%s", code, out, errs, workerLog())
	}
	if log := workerLog(); strings.Count(log, "was gone from the server") < 1 || strings.Count(log, "was gone from the server") > k || strings.Contains(log, "permissions violation") {
		t.Errorf("the worker's log:\n%s", log)
	}
}

// startWorkerLogged starts a worker on url, as startWorker does, and
// returns a function that reads its log so far.
func startWorkerLogged(t *testing.T, url string) func() string {
	t.Helper()
	log := startWorker(t, url, "").Stdout.(*os.File).Name()
	return func() string {
		b, _ := os.ReadFile(log)
		return string(b)
	}
}
