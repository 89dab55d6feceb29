package bus_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentty/agentty/bus"
)

// clusterNode is one node of an in-process three-node cluster.
type clusterNode struct {
	opts *server.Options
	srv  *server.Server
}

func (n *clusterNode) start(t *testing.T) {
	t.Helper()
	s, err := server.NewServer(n.opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("node not ready")
	}
	n.srv = s
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startNodes runs three JetStream nodes of one cluster in this process.
func startNodes(t *testing.T) []*clusterNode {
	t.Helper()
	routes := make([]string, 3)
	ports := make([]int, 3)
	for i := range 3 {
		ports[i] = freeTCPPort(t)
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", ports[i])
	}
	nodes := make([]*clusterNode, 3)
	for i := range 3 {
		nodes[i] = &clusterNode{opts: &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1", Port: freeTCPPort(t),
			JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
			Cluster: server.ClusterOpts{Name: "agentty", Host: "127.0.0.1", Port: ports[i]},
			Routes:  server.RoutesFromStr(strings.Join(routes, ",")),
		}}
		nodes[i].start(t)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.srv.Shutdown()
		}
	})
	return nodes
}

// TestReadJournalFromAReplicaBehind: a node that was down while a session
// was written comes back, and a reader connected to it alone reads the
// session at once. Its read may be served by that node's replica before
// it has caught up; the journal read must still be the whole journal (a
// worker continuing a session from a short read would do again what is
// done: TestClusterLosesANode saw a run continued from its first message).
func TestReadJournalFromAReplicaBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster: not with -short")
	}
	nodes := startNodes(t)
	nc, err := bus.Connect(bus.Config{URL: nodes[0].srv.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = bus.MakeStreams(ctx, nc, 3)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no streams at three replicas: %v", err)
		}
	}
	const id = "behind"
	writer, _ := openJournals(t, nodes[0].srv.ClientURL())
	w, err := writer.Lock(id, true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Append([]byte(`{"n":0}`+"\n"), true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the first line on every replica
	late := nodes[2]
	late.srv.Shutdown()
	late.srv.WaitForShutdown()
	const lines = 200
	for i := 1; i < lines; i++ {
		if err := w.Append([]byte(fmt.Sprintf(`{"n":%d}`+"\n", i)), true); err != nil {
			t.Fatal(err)
		}
	}
	late.start(t)
	// The node answers JetStream's API before it has caught up its
	// replicas (on a loaded machine, some seconds after it starts).
	nc3, err := bus.Connect(bus.Config{URL: late.srv.ClientURL()}, nats.DontRandomize(), nats.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	defer nc3.Close()
	var reader *bus.Journals
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		reader, err = bus.OpenJournals(ctx, nc3)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node back never answered: %v", err)
		}
	}
	got, err := reader.ReadJournal(id)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(got), "\n"); n != lines {
		t.Fatalf("read %d lines of %d from the node that was down", n, lines)
	}
	// And the next good read, from the node that never left.
	if got, err = writer.ReadJournal(id); err != nil || strings.Count(string(got), "\n") != lines {
		t.Fatalf("read from the first node: %d lines, %v", strings.Count(string(got), "\n"), err)
	}
}

// TestUnavailable: a replica behind is a passing state of the server's (a
// worker hands its request back), as is a server that does not answer; a
// journal that is damaged is not.
func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("sessions: s: read the journal: %w: 1 of the 200 messages", bus.ErrBehind), true},
		{fmt.Errorf("sessions: s: read the journal: %w", nats.ErrTimeout), true},
		{fmt.Errorf("sessions: s: %w", nats.ErrNoResponders), true},
		// A replicated stream's leader with another message of the
		// subject on its way: no verdict yet.
		{&jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequenceConstant}, true},
		// Another writer's line is stored: a verdict.
		{&jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}, false},
		{errors.New("sessions: s: line 3: not JSON"), false},
		{nil, false},
	} {
		if got := bus.Unavailable(tc.err); got != tc.want {
			t.Errorf("Unavailable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
