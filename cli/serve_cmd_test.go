package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestServe: serve prints its URL, takes connections with JetStream on and
// its store in the data folder, and stops when its context ends.
func TestServe(t *testing.T) {
	home := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errs := newLiveBuf(), newLiveBuf()
	wait := startCLI(ctx, map[string]string{}, out, errs, "serve", "--listen", "127.0.0.1:0", "--data-dir", home)
	url := strings.TrimSpace(out.waitFor(t, "the URL", func(s string) bool { return strings.HasSuffix(s, "\n") }))
	if !strings.HasPrefix(url, "nats://127.0.0.1:") || strings.Contains(url, "\n") {
		t.Fatalf("stdout = %q, want one URL", url)
	}
	// Without a user the server refuses; with the one it made in the
	// data folder (0600) it takes the connection.
	if _, err := nats.Connect(url, nats.MaxReconnects(0)); err == nil || !strings.Contains(err.Error(), "Authorization Violation") {
		t.Fatalf("a client without credentials: %v", err)
	}
	if st, err := os.Stat(filepath.Join(home, "nats", "users.json")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the users file: %v %v", st, err)
	}
	nc, err := nats.Connect(withServeUser(t, home, url), nats.MaxReconnects(0))
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	jctx, jcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer jcancel()
	if _, err := js.AccountInfo(jctx); err != nil {
		t.Fatalf("JetStream: %v", err)
	}
	if _, err := js.CreateStream(jctx, jetstream.StreamConfig{Name: "PROBE", Subjects: []string{"probe"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, "nats", "jetstream")); err != nil {
		t.Errorf("the store is not in the data folder: %v", err)
	}
	// Its worker (the offline model: no key here) takes a submitted run
	// of a command on the same data folder; one from elsewhere is refused
	// until it gives the user in the URL, and then works as well.
	env := testEnv(t)
	env["AGENTTY_HOME"] = home
	code, answer, serrs := runCLI(t, context.Background(), env, "submit", "--nats", url, "--wait", "what is 2+2?")
	if code != 0 || !strings.Contains(answer, "4") {
		t.Errorf("submit --wait: exit %d, %q, %q", code, answer, serrs)
	}
	code, _, serrs = runCLI(t, context.Background(), testEnv(t), "submit", "--nats", url, "what is 2+2?")
	if code == 0 || !strings.Contains(serrs, "Authorization Violation") {
		t.Errorf("submit without credentials: exit %d, %q", code, serrs)
	}
	code, answer, serrs = runCLI(t, context.Background(), testEnv(t), "submit", "--nats", withServeUser(t, home, url), "--wait", "what is 3+3?")
	if code != 0 || !strings.Contains(answer, "6") || strings.Contains(serrs, "password") {
		t.Errorf("submit with the user in the URL: exit %d, %q, %q", code, answer, serrs)
	}
	serveRoles(t, home, url)
	cancel()
	if code := wait(); code != 0 {
		t.Errorf("exit %d: %s", code, errs)
	}
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("the connection outlived the server")
	}
	if !strings.Contains(errs.String(), "stopped") {
		t.Errorf("stderr = %q", errs)
	}
}

// withServeUser is url with the operator agentty serve made in home.
func withServeUser(t *testing.T, home, url string) string {
	t.Helper()
	return withServeRole(t, home, url, "operator")
}

// withServeRole is url with the user of role (operator, worker, submit)
// agentty serve made in home.
func withServeRole(t *testing.T, home, url, role string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "nats", "users.json"))
	if err != nil {
		t.Fatal(err)
	}
	var u bus.Users
	if err := json.Unmarshal(b, &u); err != nil {
		t.Fatal(err)
	}
	c := map[string]bus.Credential{"operator": u.Operator, "worker": u.Worker, "submit": u.Submit}[role]
	return strings.Replace(url, "nats://", "nats://"+c.User+":"+c.Password+"@", 1)
}

// serveRoles: the submit user submits and follows its run, and may not
// cancel; a worker with the worker user takes runs, and may not cancel
// either; the operator may.
func serveRoles(t *testing.T, home, url string) {
	t.Helper()
	submitter, workerURL := withServeRole(t, home, url, "submit"), withServeRole(t, home, url, "worker")
	code, answer, serrs := runCLI(t, context.Background(), testEnv(t), "submit", "--nats", submitter, "--wait", "what is 4+4?")
	if code != 0 || !strings.Contains(answer, "8") {
		t.Fatalf("submit as the submit user: exit %d, %q, %q", code, answer, serrs)
	}
	startWorker(t, workerURL, writeScript(t, `{"turns":[{"answer":"late","delay_ms":60000}]}`), "--pool", "slow")
	code, out, serrs := runCLI(t, context.Background(), testEnv(t), "submit", "--nats", submitter, "--pool", "slow", "take your time")
	if code != 0 {
		t.Fatalf("submit to the worker user's pool: %d %s", code, serrs)
	}
	session := strings.TrimSpace(out)
	var snap struct{ Running []struct{ Session string } }
	for deadline := time.Now().Add(time.Minute); len(snap.Running) == 0; time.Sleep(200 * time.Millisecond) {
		_, out, _ := runCLI(t, context.Background(), testEnv(t), "top", "--json", "--nats", withServeUser(t, home, url), "--pool", "slow")
		json.Unmarshal([]byte(out), &snap)
		if time.Now().After(deadline) {
			t.Fatal("the worker user's worker never took the run")
		}
	}
	for _, who := range []string{submitter, workerURL} {
		if code, _, errs := runCLI(t, context.Background(), testEnv(t), "cancel", "--nats", who, session); code == 0 || !strings.Contains(errs, "ermission") {
			t.Errorf("cancel as %s: exit %d, %q", strings.SplitN(who, ":", 3)[1], code, errs)
		}
	}
	if code, out, errs := runCLI(t, context.Background(), testEnv(t), "cancel", "--nats", withServeUser(t, home, url), session); code != 0 {
		t.Errorf("cancel as the operator: %d %s %s", code, out, errs)
	}
}

func TestServeUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--workers", "-1"}, 2, "want 0 or more"},
		{[]string{"serve", "extra"}, 2, "unexpected"},
		{[]string{"serve", "--listen", "nowhere"}, 1, "want HOST:PORT"},
	} {
		code, _, errs := runCLI(t, context.Background(), nil, append(tt.args, "--data-dir", t.TempDir())...)
		if code != tt.code || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, %q; want %d, %q", tt.args, code, errs, tt.code, tt.want)
		}
	}
}
