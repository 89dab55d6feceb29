package cli

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/worker"
)

// BenchmarkPartitionedRuns is issue 55's table, side by side in one run:
// runs per second through the work queue (a worker in this process, an
// instant model, each run journaled) at 1, 16 and 64 runs at once, for
// one embedded node (synced on every write, as agentty serve runs it)
// with K = 1 and K = 4 partitions, and three nats-server nodes (three
// replicas, JetStream's default sync: a write is acknowledged once a
// majority has it) with K = 1 and K = 3, each set up as docs/scale-out.md
// says (queue setup: the leaders spread). Beside runs/s, the synced writes
// (messages stored in the file-stored streams: journals, queues, sessions'
// meta, writers' leases) a run makes, and each node's share of them as the
// leader that ordered them (lead-n1-% …; max-lead-% the largest): what one
// leader's limit bounds.
func BenchmarkPartitionedRuns(b *testing.B) {
	for _, c := range []struct{ nodes, k int }{{1, 1}, {1, 4}, {3, 1}, {3, 3}} {
		b.Run(fmt.Sprintf("nodes=%d,K=%d", c.nodes, c.k), func(b *testing.B) {
			url := benchFleet(b, c.nodes, c.k)
			for _, n := range []int{1, 16, 64} {
				b.Run(fmt.Sprintf("at-once=%d", n), func(b *testing.B) { benchRuns(b, url, n) })
			}
		})
	}
}

// benchFleet starts nodes servers (one embedded, or a cluster of
// nats-server processes) set up with k partitions, and returns their URL.
func benchFleet(b *testing.B, nodes, k int) string {
	url, replicas := "", 1
	if nodes == 1 {
		url = natsServer(b).URL()
	} else {
		var urls []string
		for _, nd := range startCluster(b, nodes) {
			urls = append(urls, nd.client)
		}
		url, replicas = strings.Join(urls, ","), 3
	}
	nc, err := bus.Connect(bus.Config{URL: url})
	for deadline := time.Now().Add(30 * time.Second); err != nil && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		nc, err = bus.Connect(bus.Config{URL: url}) // the nodes still starting
	}
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		if _, err = bus.SetupWith(ctx, nc, bus.Settings{Replicas: replicas, Partitions: k}, nil); err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond) // the cluster still forming
	}
	if err == nil {
		err = bus.SpreadLeaders(ctx, nc)
	}
	if err != nil {
		b.Fatal(err)
	}
	return url
}

// benchRuns is b.N runs, n at once, through the fleet at url.
func benchRuns(b *testing.B, url string, n int) {
	script := filepath.Join(b.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"turns":[{"answer":"ok"}]}`), 0o600)
	var o app.Options
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	addGlobalFlags(fs, &o)
	addRunFlags(fs, &o)
	if err := fs.Parse([]string{"--model", "script:" + script, "--workspace", b.TempDir(), "--data-dir", b.TempDir()}); err != nil {
		b.Fatal(err)
	}
	env := map[string]string{"AGENTTY_CONFIG": filepath.Join(b.TempDir(), "none.json")}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		q := worker.QueueConfig{Pool: bus.DefaultPool, Concurrency: n, MaxDeliver: 5, AckWait: 30 * time.Second}
		if _, err := worker.Run(ctx, o, q, url, func(k string) string { return env[k] }, func(string, ...any) {}); err != nil {
			b.Error(err)
		}
	}()
	defer func() { cancel(); <-done }()
	nc, err := bus.Connect(bus.Config{URL: url})
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	queue, err := bus.OpenQueue(ctx, nc)
	if err != nil {
		b.Fatal(err)
	}
	submitAndDrain(b, ctx, queue, 1) // the worker's setup made
	before := leaderWrites(b, nc, queue.Layout())
	b.ResetTimer()
	start := time.Now()
	submitAndDrain(b, ctx, queue, b.N)
	took := time.Since(start).Seconds()
	b.StopTimer()
	after := leaderWrites(b, nc, queue.Layout())
	b.ReportMetric(float64(b.N)/took, "runs/s")
	var total, most uint64
	for node, w := range after {
		w -= before[node]
		total += w
		most = max(most, w)
	}
	b.ReportMetric(float64(total)/float64(b.N), "writes/run")
	b.ReportMetric(float64(total)/took, "writes/s")
	for _, node := range slices.Sorted(maps.Keys(after)) {
		b.ReportMetric(100*float64(after[node]-before[node])/float64(max(total, 1)), "lead-"+node+"-%")
	}
	b.ReportMetric(100*float64(most)/float64(max(total, 1)), "max-lead-%")
}

// leaderWrites is the messages ever stored in the file-stored streams of
// layout l, summed by the node that leads each stream now (leaders do not
// move while nothing fails).
func leaderWrites(b *testing.B, nc *nats.Conn, l bus.Layout) map[string]uint64 {
	js, _ := jetstream.New(nc)
	out := map[string]uint64{}
	for p := range l.N() {
		for _, name := range []string{l.JournalStream(p), l.RunsStream(p), "KV_" + l.SessionsBucket(p), "KV_" + l.WritersBucket(p)} {
			st, err := js.Stream(context.Background(), name)
			if err != nil {
				b.Fatal(err)
			}
			info := st.CachedInfo()
			leader := "node"
			if info.Cluster != nil && info.Cluster.Leader != "" && len(info.Cluster.Replicas) > 0 {
				leader = info.Cluster.Leader
			}
			out[leader] += info.State.LastSeq
		}
	}
	return out
}
