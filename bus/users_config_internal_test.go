package bus

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// TestUsersConfigHoldsTheRoles (issue 52, hole 13): the users and roles
// agentty queue users prints, included in a nats-server config as the
// cluster recipe says, make a server that lets nobody in without a user,
// and on which the role table holds as on agentty serve's own.
func TestUsersConfigHoldsTheRoles(t *testing.T) {
	u, _, err := LoadOrMakeUsers(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	users := filepath.Join(dir, "agentty-users.conf")
	if err := os.WriteFile(users, []byte(UsersConfig(u)), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "node.conf")
	node := "listen: 127.0.0.1:-1\njetstream {store_dir: " + quote(filepath.Join(dir, "js")) + "}\ninclude ./agentty-users.conf\n"
	if err := os.WriteFile(conf, []byte(node), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("the config agentty prints: %v\n%s", err, UsersConfig(u))
	}
	for _, user := range opts.Users {
		if user.Username != u.Operator.User && (user.Permissions == nil || user.Permissions.Response == nil || user.Permissions.Response.MaxMsgs != 1) {
			t.Errorf("user %s may reply as it likes: %+v", user.Username, user.Permissions)
		}
	}
	opts.NoSigs = true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(s.Shutdown)
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the server did not start")
	}
	if nc, err := nats.Connect(s.ClientURL(), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Error("a client without a user was let in")
	}
	walkRoles(t, s.ClientURL(), u)
}
