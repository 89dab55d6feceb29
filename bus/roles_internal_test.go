package bus

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// What each role of the users file may not do, tried against a server
// with those users: a refused publish or subscribe comes back as the
// server's permissions violation. (Issue 41 narrows the roles further; this
// table keeps what holds today from being widened unseen: the submitter
// given the worker's permissions fails here.)
func TestRolesAreRefused(t *testing.T) {
	dir := t.TempDir()
	u, _, err := LoadOrMakeUsers(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := StartServer(ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Users: &u})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	refused := []struct {
		role      Credential
		name      string
		subscribe bool
		subject   string
	}{
		{u.Worker, "worker", false, cancelPrefix + ".s1"},
		{u.Worker, "worker", false, "$JS.API.STREAM.DELETE." + JournalStream},
		{u.Worker, "worker", false, "$JS.API.STREAM.PURGE." + JournalStream},
		{u.Submit, "submit", false, "$JS.API.STREAM.DELETE." + JournalStream},
		{u.Submit, "submit", false, "$JS.API.STREAM.PURGE." + RunsStream},
		{u.Submit, "submit", false, "$JS.API.STREAM.UPDATE." + JournalStream},
		{u.Submit, "submit", false, "$JS.API.STREAM.MSG.DELETE." + JournalStream},
		{u.Submit, "submit", false, "$JS.API.STREAM.CREATE.EVIL"},
		{u.Submit, "submit", false, "agentty.journal.s1"},
		{u.Submit, "submit", false, cancelPrefix + ".s1"},
		{u.Submit, "submit", true, runsPrefix + ".>"},
		{u.Submit, "submit", true, "agentty.journal.>"},
		{u.Submit, "submit", true, "$JS.API.>"},
	}
	for _, r := range refused {
		errs := make(chan error, 8)
		nc, err := nats.Connect(srv.URL(), nats.UserInfo(r.role.User, r.role.Password), nats.MaxReconnects(0),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
		if err != nil {
			t.Fatalf("%s connects: %v", r.name, err)
		}
		if r.subscribe {
			_, err = nc.SubscribeSync(r.subject)
		} else {
			err = nc.Publish(r.subject, []byte("{}"))
		}
		if err == nil {
			err = nc.Flush()
		}
		select {
		case err = <-errs:
		case <-time.After(10 * time.Second):
		}
		verb := map[bool]string{true: "subscribe to", false: "publish on"}[r.subscribe]
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
			t.Errorf("%s may %s %s (%v)", r.name, verb, r.subject, err)
		}
		nc.Close()
	}
}
