package bus

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// roleRow is one line of the role table (docs/scale-out.md): a user, a
// publish or a subscription, and whether the server lets it through.
type roleRow struct {
	user      string // "worker" or "submit"
	subscribe bool
	subject   string
	allowed   bool
	why       string // the attack a refused row stands for, or the work an allowed one is
}

// roleTable is the table walked by TestRoleTable. The refused rows are
// the attacks issue 41 found with the NATS CLI as each user.
var roleTable = []roleRow{
	// The submitter.
	{"submit", false, "agentty.runs.default.s1", true, "queue a run"},
	{"submit", false, "agentty.ask.s1", true, "answer its own run's question (signed)"},
	{"submit", true, "agentty.gate.>", true, "see pauses, to answer its own runs' (signed)"},
	{"submit", true, "agentty.events.>", true, "follow runs"},
	{"submit", false, "$JS.API.DIRECT.GET.KV_AGENTTY_SESSIONS", true, "read sessions' meta"},
	{"submit", false, "$JS.API.CONSUMER.CREATE.AGENTTY_JOURNAL.r1.agentty.journal.s1", true, "read a journal"},
	{"submit", false, "$JS.API.CONSUMER.INFO.AGENTTY_RUNS.workers-default", true, "see whether a pool has workers"},
	{"submit", false, "$JS.API.CONSUMER.CREATE.AGENTTY_RUNS.evil.agentty.runs.gpu.>", false, "take a pool's runs and block its workers"},
	{"submit", false, "$JS.API.CONSUMER.DURABLE.CREATE.AGENTTY_RUNS.evil", false, "take runs (older API)"},
	{"submit", false, "$JS.API.CONSUMER.CREATE.AGENTTY_RUNS", false, "take runs (an ephemeral consumer, older API: the bare subject)"},
	{"submit", false, "$JS.API.CONSUMER.DELETE.AGENTTY_RUNS.workers-default", false, "delete a pool's consumer"},
	{"submit", false, "$KV.AGENTTY_WRITERS.s1", false, "forge a session's lease"},
	{"submit", false, "$KV.AGENTTY_SESSIONS.s1", false, "change or delete a session's record"},
	{"submit", false, "$KV.AGENTTY_WORKERS.w1", false, "forge a worker's heartbeat"},
	{"submit", false, "$KV.AGENTTY_CONFIG.operator-steer", false, "make its key the operator's"},
	{"submit", false, "agentty.journal.s1", false, "write into a journal"},
	{"submit", false, "agentty.cancel.s1", false, "cancel a run"},
	{"submit", false, "$JS.API.STREAM.DELETE.AGENTTY_JOURNAL", false, "delete the journals"},
	{"submit", false, "$JS.API.STREAM.PURGE.AGENTTY_RUNS", false, "empty the queue"},
	{"submit", false, "$JS.API.STREAM.UPDATE.AGENTTY_JOURNAL", false, "cut the journals' limits"},
	{"submit", false, "$JS.API.STREAM.MSG.DELETE.AGENTTY_JOURNAL", false, "delete a journal's events"},
	{"submit", false, "$JS.API.STREAM.CREATE.EVIL", false, "make a stream"},
	{"submit", false, "_INBOX.someone.else", false, "reply into another's inbox"},
	{"submit", true, "agentty.runs.>", false, "read the queue's requests as they come"},
	{"submit", true, "agentty.ask.>", false, "see other people's answers"},
	{"submit", true, "agentty.journal.>", false, "read journals as they are written"},
	{"submit", true, "$JS.API.>", false, "see everyone's API calls"},
	// The worker.
	{"worker", false, "agentty.journal.s1", true, "journal a run"},
	{"worker", false, "agentty.events.s1.r1.step_started", true, "publish a run's events"},
	{"worker", false, "agentty.gate.s1", true, "ask a console at a pause"},
	{"worker", false, "agentty.runs.default.s1", true, "put a drained run back on the queue"},
	{"worker", false, "$KV.AGENTTY_WRITERS.s1", true, "hold a session's lease"},
	{"worker", false, "$KV.AGENTTY_SESSIONS.s1", true, "write a session's meta"},
	{"worker", false, "$KV.AGENTTY_WORKERS.w1", true, "put its heartbeat"},
	{"worker", false, "$JS.API.CONSUMER.CREATE.AGENTTY_RUNS.workers-default", true, "make its pool's consumer (again)"},
	{"worker", false, "$JS.API.CONSUMER.MSG.NEXT.AGENTTY_RUNS.workers-default", true, "take a run"},
	{"worker", false, "$JS.ACK.AGENTTY_RUNS.workers-default.1.1.1.1.0", true, "acknowledge a run"},
	{"worker", false, "$JS.API.STREAM.MSG.DELETE.AGENTTY_RUNS", true, "take a request the server gave up on off the queue"},
	{"worker", false, "$JS.API.STREAM.CREATE.AGENTTY_JOURNAL", true, "make the journal when it is missing"},
	{"worker", true, "agentty.ask.>", true, "wait for an answer"},
	{"worker", true, "agentty.cancel.*", true, "hear agentty cancel"},
	{"worker", true, "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.AGENTTY_RUNS.workers-default", true, "hear of a request given up"},
	{"worker", false, "$JS.API.STREAM.MSG.DELETE.AGENTTY_JOURNAL", false, "delete a journal's events"},
	{"worker", false, "$JS.API.STREAM.UPDATE.AGENTTY_JOURNAL", false, "cut each journal to its last event"},
	{"worker", false, "$JS.API.CONSUMER.DELETE.AGENTTY_RUNS.workers-default", false, "delete the pool's consumer"},
	{"worker", false, "$JS.API.STREAM.DELETE.AGENTTY_JOURNAL", false, "delete the journals"},
	{"worker", false, "$JS.API.STREAM.PURGE.AGENTTY_JOURNAL", false, "empty the journals"},
	{"worker", false, "$JS.API.STREAM.CREATE.EVIL", false, "make a stream of its own"},
	{"worker", false, "$JS.API.STREAM.CREATE.KV_AGENTTY_CONFIG", false, "make the config bucket"},
	{"worker", false, "$KV.AGENTTY_CONFIG.operator-steer", false, "make its key the operator's"},
	{"worker", false, "agentty.cancel.s1", false, "cancel a run"},
	{"worker", false, "_INBOX.someone.else", false, "reply into another's inbox"},
}

// TestRoleTable walks the role table as each user of the users file
// against a real server: every refused call comes back as the server's
// permissions violation, and no allowed one does. (The same roles doing
// their whole work, a worker taking a submitted run, the submitter
// following and answering it, is cli's TestRolesDoTheirWork.)
func TestRoleTable(t *testing.T) {
	u, srv := usersServer(t)
	walkRoles(t, srv.URL(), u)
}

// walkRoles walks the role table as each of u on the server at url.
func walkRoles(t *testing.T, url string, u Users) {
	users := map[string]Credential{"worker": u.Worker, "submit": u.Submit}
	var wg sync.WaitGroup
	for _, r := range roleTable {
		wg.Go(func() {
			err := tryAs(t, url, users[r.user], r)
			verb := map[bool]string{true: "subscribe to", false: "publish on"}[r.subscribe]
			refused := err != nil && strings.Contains(strings.ToLower(err.Error()), "permissions violation")
			switch {
			case r.allowed && err != nil:
				t.Errorf("%s may not %s %s (%s): %v", r.user, verb, r.subject, r.why, err)
			case !r.allowed && !refused:
				t.Errorf("%s may %s %s (%s): %v", r.user, verb, r.subject, r.why, err)
			}
		})
	}
	wg.Wait()
}

// usersServer starts a server that requires the users agentty serve
// makes, and returns them.
func usersServer(t *testing.T) (Users, *Server) {
	t.Helper()
	u, _, err := LoadOrMakeUsers(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := StartServer(ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Users: &u})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return u, srv
}

// tryAs publishes or subscribes as user, and returns the error the server
// sends back, if any: a permissions violation comes before the answer to
// the ping that follows (the server answers in order), and the error
// handler hears it at once after.
func tryAs(t *testing.T, url string, user Credential, r roleRow) error {
	errs := make(chan error, 8)
	nc, err := nats.Connect(url, nats.UserInfo(user.User, user.Password), nats.MaxReconnects(0),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	if err != nil {
		t.Errorf("%s connects: %v", user.User, err)
		return nil
	}
	defer nc.Close()
	if r.subscribe {
		_, err = nc.SubscribeSync(r.subject)
	} else {
		err = nc.Publish(r.subject, []byte("{}"))
	}
	if err == nil {
		err = nc.Flush()
	}
	if err != nil {
		return err
	}
	select {
	case err = <-errs:
		return err
	case <-time.After(2 * time.Second):
		return nil
	}
}
