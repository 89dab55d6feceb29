package cli

import (
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/bus/bustest"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/worker"
)

// BenchmarkServeRuns is runs per second through the work queue: an
// embedded JetStream server syncing every write (as agentty serve runs
// it), a worker in this process taking N runs at once, an instant model
// (one decision, the answer), each run journaled in JetStream. b.N
// requests are submitted, and the clock stops when the last is
// acknowledged. Beside runs/s: cores-busy, the process's CPU (server,
// worker and submitter) over the time the runs took, out of the machine's
// cores; the synced writes a second the runs made
// (the messages of agentty's file-stored streams: the journal, the queue,
// the sessions' meta, the writers' leases), to hold against the bus's own
// limit, measured on the same server for a second before the runs and a
// second after, with as many publishers as runs at once (bustest): its
// mean is bus-writes/s, and share is the runs' writes/s over it. The same
// way, floor-runs/s is the bus's runs a second for a run's own operations
// with nothing between them (bustest.RunOps: the queue's floor, as
// bench/floor is the engine's), and of-floor is runs/s over it.
func BenchmarkServeRuns(b *testing.B) {
	for _, n := range []int{1, 2, 4, 16, 64} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			srv := natsServer(b)
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
			getenv := func(k string) string { return env[k] }
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				q := worker.QueueConfig{Pool: bus.DefaultPool, Concurrency: n, MaxDeliver: 5, AckWait: 30 * time.Second}
				if _, err := worker.Run(ctx, o, q, srv.URL(), getenv, func(string, ...any) {}); err != nil {
					b.Error(err)
				}
			}()
			defer func() { cancel(); <-done }()
			nc, err := bus.Connect(bus.Config{URL: srv.URL()})
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			queue, err := bus.OpenQueue(ctx, nc)
			if err != nil {
				b.Fatal(err)
			}
			// One run first, so that the worker's setup is made.
			submitAndDrain(b, ctx, queue, 1)
			js, _ := jetstream.New(nc)
			limit, floor := busLimit(b, ctx, js, n), queueFloor(b, ctx, js, n)
			before := syncedWrites(b, ctx, js)
			b.ResetTimer()
			start, cpu := time.Now(), cpuTime()
			submitAndDrain(b, ctx, queue, b.N)
			took, cpu := time.Since(start).Seconds(), cpuTime()-cpu
			b.ReportMetric(float64(b.N)/took, "runs/s")
			writes := syncedWrites(b, ctx, js) - before
			b.StopTimer()
			limit = (limit + busLimit(b, ctx, js, n)) / 2
			floor = (floor + queueFloor(b, ctx, js, n)) / 2
			b.ReportMetric(float64(writes)/took, "writes/s")
			b.ReportMetric(float64(writes)/float64(b.N), "writes/run")
			b.ReportMetric(limit, "bus-writes/s")
			b.ReportMetric(100*float64(writes)/took/limit, "share-%")
			b.ReportMetric(cpu.Seconds()/took, "cores-busy")
			b.ReportMetric(floor, "floor-runs/s")
			b.ReportMetric(100*float64(b.N)/took/floor, "of-floor-%")
		})
	}
}

// busLimit is the bus's synced publishes a second from p publishers, for
// a second.
func busLimit(b *testing.B, ctx context.Context, js jetstream.JetStream, p int) float64 {
	rate, err := bustest.SyncedPublishes(ctx, js, p, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	return rate
}

// cpuTime is the CPU the process has used, server and worker alike.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// queueFloor is the bus's runs a second for a run's own operations with
// nothing of agentty's between them (bustest.RunOps), n at once, for a
// second.
func queueFloor(b *testing.B, ctx context.Context, js jetstream.JetStream, n int) float64 {
	rate, err := bustest.RunOps(ctx, js, n, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	return rate
}

// submitAndDrain submits n requests and waits until the queue is empty.
func submitAndDrain(b testing.TB, ctx context.Context, queue *bus.Queue, n int) {
	for range n {
		req := bus.RunRequest{ID: sessions.NewID(), Session: sessions.NewID(), Task: "go"}
		if _, err := queue.Submit(ctx, bus.DefaultPool, req); err != nil {
			b.Fatal(err)
		}
	}
	for {
		left, err := queue.Pending(ctx, bus.DefaultPool)
		if err != nil {
			b.Fatal(err)
		}
		if left == 0 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// syncedWrites sums the messages ever stored in agentty's file-stored
// streams (the heartbeats' bucket is in memory and syncs nothing).
func syncedWrites(b *testing.B, ctx context.Context, js jetstream.JetStream) uint64 {
	var n uint64
	for _, name := range []string{bus.JournalStream, bus.RunsStream, "KV_" + bus.SessionsBucket, "KV_" + bus.WritersBucket} {
		st, err := js.Stream(ctx, name)
		if err != nil {
			b.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			b.Fatal(err)
		}
		n += info.State.LastSeq
	}
	return n
}
