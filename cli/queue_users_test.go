package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/agentty/agentty/bus"
)

// TestQueueUsersPrintsServesUsers: agentty queue users prints the users of
// the data folder agentty serve keeps them in (made when missing, the
// same on the next call), as config a nats-server takes, each with its
// password; the operator's is said nowhere else.
func TestQueueUsersPrintsServesUsers(t *testing.T) {
	env := testEnv(t)
	code, out, errs := runCLI(t, context.Background(), env, "queue", "users")
	if code != 0 {
		t.Fatalf("queue users: exit %d: %s", code, errs)
	}
	if code, again, _ := runCLI(t, context.Background(), env, "queue", "users"); code != 0 || again != out {
		t.Errorf("queue users again: exit %d, another config", code)
	}
	b, err := os.ReadFile(filepath.Join(env["AGENTTY_HOME"], "nats", bus.UsersFile))
	if err != nil {
		t.Fatal(err)
	}
	var users bus.Users
	if err := json.Unmarshal(b, &users); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "node.conf")
	os.WriteFile(conf, []byte("listen: 127.0.0.1:-1\n"+out), 0o600)
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("the config: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, u := range opts.Users {
		got[u.Username] = u.Password
	}
	for _, c := range []bus.Credential{users.Operator, users.Worker, users.Submit} {
		if got[c.User] != c.Password {
			t.Errorf("user %s is not in the config with its password", c.User)
		}
	}
	if strings.Contains(errs, users.Operator.Password) {
		t.Errorf("stderr says the operator's password: %s", errs)
	}
}
