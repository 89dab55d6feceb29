package bus

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/agentty/agentty/sessions"
)

// TestSubmitterOpensNothing: the submit user, which may not write the
// writers' leases, opening a session for writing is told there is no such
// session when there is none (Journals.Open takes the lease before it
// reads: issue 42), and that it may not write one that is there; it still
// reads that one's meta after both refusals.
func TestSubmitterOpensNothing(t *testing.T) {
	u, srv := usersServer(t)
	as := func(c Credential) *nats.Conn {
		nc, err := Connect(Config{URL: srv.URL()}, nats.UserInfo(c.User, c.Password))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	ctx := context.Background()
	op := as(u.Operator)
	if _, err := OpenJournals(ctx, op); err != nil {
		t.Fatal(err)
	}
	q, err := OpenQueue(ctx, op)
	if err != nil {
		t.Fatal(err)
	}
	id := sessions.NewID()
	if _, err := q.Submit(ctx, DefaultPool, RunRequest{ID: sessions.NewID(), Session: id, Task: "count the orders"}); err != nil {
		t.Fatal(err)
	}

	j, err := OpenJournals(ctx, as(u.Submit))
	if err != nil {
		t.Fatal(err)
	}
	store := sessions.OpenWith(t.TempDir(), j)
	if _, _, err := store.OpenWriter(sessions.NewID()); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("the submitter opening a session that is not there: %v; want ErrNotFound", err)
	}
	_, _, err = store.OpenWriter(id)
	if !errors.As(err, new(*DeniedError)) || !strings.Contains(err.Error(), "may not write sessions") {
		t.Errorf("the submitter opening a queued session for writing: %v; want it refused as not its to write", err)
	}
	if m, ok, err := j.ReadMeta(id); err != nil || !ok || m.Title != "count the orders" {
		t.Errorf("the submitter reading the session after: %+v %v %v", m, ok, err)
	}
}
