package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentty/agentty/bus"
)

// natsNode is one nats-server process of a test cluster.
type natsNode struct {
	args   []string
	cmd    *exec.Cmd
	client string // its client URL
	name   string
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startCluster builds nats-server from the module (the server agentty
// embeds) and runs n nodes of one cluster on loopback.
func startCluster(t *testing.T, n int) []*natsNode {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "nats-server")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2").CombinedOutput(); err != nil {
		t.Fatalf("building nats-server: %v\n%s", err, out)
	}
	routes := make([]string, n)
	ports := make([]int, n)
	for i := range n {
		ports[i] = freePort(t)
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", freePort(t))
	}
	nodes := make([]*natsNode, n)
	for i := range n {
		nodes[i] = &natsNode{name: fmt.Sprintf("n%d", i+1), client: fmt.Sprintf("nats://127.0.0.1:%d", ports[i]),
			args: []string{"-js", "-sd", t.TempDir(), "-a", "127.0.0.1", "-p", fmt.Sprint(ports[i]), "-n", fmt.Sprintf("n%d", i+1),
				"--cluster_name", "agentty", "-cluster", routes[i], "-routes", strings.Join(routes, ",")}}
		nodes[i].start(t, bin)
	}
	t.Cleanup(func() {
		for _, nd := range nodes {
			nd.kill()
		}
	})
	return nodes
}

func (nd *natsNode) start(t *testing.T, bin string) {
	t.Helper()
	nd.cmd = exec.Command(bin, nd.args...)
	logf, _ := os.Create(filepath.Join(t.TempDir(), nd.name+".log"))
	nd.cmd.Stdout, nd.cmd.Stderr = logf, logf
	if err := nd.cmd.Start(); err != nil {
		t.Fatal(err)
	}
}

func (nd *natsNode) kill() {
	if nd.cmd != nil && nd.cmd.Process != nil {
		nd.cmd.Process.Signal(syscall.SIGKILL)
		nd.cmd.Wait()
	}
}

// TestClusterLosesANode: three NATS nodes, agentty's streams at three
// replicas, three workers and 100 runs; the node that leads the run queue
// is killed with SIGKILL mid-load and brought back later. Every run is
// answered exactly once, no isolated tool call runs twice, no acknowledged
// journal line is lost, and top keeps answering through the failover.
func TestClusterLosesANode(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster under load: not with -short")
	}
	nodes := startCluster(t, 3)
	var urls []string
	for _, nd := range nodes {
		urls = append(urls, nd.client)
	}
	url := strings.Join(urls, ",")
	var nc *nats.Conn
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if nc, err = bus.Connect(bus.Config{URL: url}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
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
			t.Fatalf("the cluster never took streams at three replicas: %v", err)
		}
	}
	script := queueScript(t, 4, 300) // about 1.2 s a run: the kill comes mid-load
	for range 3 {
		startWorker(t, url, script)
	}
	ids := submitN(t, url, 100)
	store := natsStoreAt(t, url)
	// The run queue's leader goes once a fifth of the runs are answered.
	js, _ := jetstream.New(nc)
	queue, err := bus.OpenQueue(context.Background(), nc)
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for deadline := time.Now().Add(3 * time.Minute); done < 20; time.Sleep(50 * time.Millisecond) {
		if n, err := queue.Pending(context.Background(), bus.DefaultPool); err == nil {
			done = 100 - int(n) // acknowledged: answered and journaled
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 100 runs answered before the kill", done)
		}
	}
	st, err := js.Stream(context.Background(), bus.RunsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Info(context.Background())
	victim := nodes[0]
	for _, nd := range nodes {
		if info.Cluster != nil && nd.name == info.Cluster.Leader {
			victim = nd
		}
	}
	// watch follows every session's events live, through the failover.
	watchOut := filepath.Join(t.TempDir(), "watch.jsonl")
	wf, _ := os.Create(watchOut)
	watch := exec.Command(binary, "watch", "--nats", url, "--json")
	watch.Env = append(os.Environ(), "AGENTTY_HOME="+t.TempDir(), "AGENTTY_CONFIG="+filepath.Join(t.TempDir(), "none.json"))
	watch.Stdout = wf
	watch.Stderr = wf
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { watch.Process.Kill(); watch.Wait() }()
	time.Sleep(500 * time.Millisecond) // subscribed
	victim.kill()
	t.Logf("killed %s, the leader of %s, with %d of 100 runs answered", victim.name, bus.RunsStream, done)
	if done > 80 {
		t.Fatalf("%d runs were answered before the kill: it proves little", done)
	}
	// top answers through the failover.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		code, out, errs := runCLI(t, context.Background(), testEnv(t), "top", "--json", "--nats", url)
		if code == 0 && strings.Contains(out, `"workers"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("top after the kill: %d %s %s", code, out, errs)
		}
	}
	time.Sleep(3 * time.Second)
	victim.start(t, victim.cmd.Path)
	continued := 0
	for id, l := range waitAnswered(t, store, ids) {
		if checkExactlyOnce(t, id, l) {
			continued++
		}
	}
	t.Logf("100 runs answered once each; %d continued a call interrupted by the failover", continued)
	time.Sleep(500 * time.Millisecond)
	b, _ := os.ReadFile(watchOut)
	if n := strings.Count(string(b), `"kind":"run_finished"`); n == 0 {
		t.Errorf("watch saw no run end after the kill:\n%.2000s", b)
	} else {
		t.Logf("watch saw %d runs end after the kill", n)
	}
	q, err := bus.OpenQueue(context.Background(), nc)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if n, err := q.Pending(context.Background(), bus.DefaultPool); err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("requests are left on the queue after every run answered")
		}
	}
}
