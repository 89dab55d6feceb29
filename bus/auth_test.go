package bus

import (
	"strings"
	"testing"
)

// The operator's password goes to the address of the serve that made it,
// never to another server named with --nats.
func TestUsersFileGoesToItsServerOnly(t *testing.T) {
	dir := t.TempDir()
	u, made, err := LoadOrMakeUsers(dir)
	if err != nil || !made {
		t.Fatal(made, err)
	}
	file := dir + "/" + UsersFile
	if got, _ := withUsersFile(Config{URL: "nats://127.0.0.1:4222", UsersFile: file}); got != "nats://127.0.0.1:4222" {
		t.Errorf("no address recorded: %q", got)
	}
	if err := RecordURL(dir, "nats://127.0.0.1:4222"); err != nil {
		t.Fatal(err)
	}
	got, _ := withUsersFile(Config{URL: "nats://127.0.0.1:4222,nats://evil.example:4222", UsersFile: file})
	if !strings.Contains(got, "nats://agentty:"+u.Operator.Password+"@127.0.0.1:4222") || strings.Contains(got, u.Operator.Password+"@evil") {
		t.Errorf("URL %q", got)
	}
	if got, _ := withUsersFile(Config{URL: "nats://127.0.0.1:5555", UsersFile: file}); got != "nats://127.0.0.1:5555" {
		t.Errorf("another port got the password: %q", got)
	}
}
