package console

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/ui"
)

// TestApprovalsNotRestoredFromASharedJournal: a session that says a tool
// was allowed for it comes back with that approval from this machine's
// own journal files, and not from a NATS journal, which others on the bus
// can write: there the console says the approval asks again.
func TestApprovalsNotRestoredFromASharedJournal(t *testing.T) {
	env := consoleEnv(t)
	getenv := func(k string) string { return env[k] }
	o := app.Options{Model: "offline", MaxSteps: 5, Workspace: t.TempDir()}
	ctx := context.Background()
	st, err := app.Build(ctx, o, nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := bus.OpenJournals(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	local, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := engine.NewSession(sessions.NewID())
	if err := s.Apply(engine.Event{Session: s.ID, Kind: engine.KindSettingsChanged, Data: &engine.Settings{Allowed: []string{"write_file"}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		store *sessions.Store
		want  bool
	}{{"the local files", local, true}, {"NATS", sessions.OpenWith(t.TempDir(), natsJournals{js}), false}} {
		con := &Console{Store: c.store, Setup: st, Opts: o, Getenv: getenv, gate: ui.NewGate(false)}
		notes := strings.Join(con.restore(s, restoreFlags{}), "\n")
		if got := slices.Contains(con.gate.Permissions(s.ID), "write_file"); got != c.want {
			t.Errorf("sessions in %s: write_file allowed again %v, want %v (%s)", c.name, got, c.want, notes)
		}
		if !c.want && !strings.Contains(notes, "ask again here: write_file") {
			t.Errorf("sessions in %s: the console says %q", c.name, notes)
		}
	}
}

// natsJournals are the sessions in JetStream, as app's store has them:
// the test closes the connection itself.
type natsJournals struct{ *bus.Journals }

func (natsJournals) Close() error { return nil }
