package cli

import (
	"github.com/spf13/pflag"

	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/sessions"
)

// BenchmarkServeRuns is runs per second through the work queue: an
// embedded JetStream server syncing every write (as agentty serve runs
// it), a worker in this process taking N runs at once, an instant model
// (one decision, the answer), each run journaled in JetStream. b.N
// requests are submitted, and the clock stops when the last is
// acknowledged.
func BenchmarkServeRuns(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
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
				q := app.QueueConfig{Pool: bus.DefaultPool, Concurrency: n, MaxDeliver: 5, AckWait: 30 * time.Second}
				if _, err := app.RunWorker(ctx, o, q, srv.URL(), getenv, func(string, ...any) {}); err != nil {
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
			b.ResetTimer()
			start := time.Now()
			submitAndDrain(b, ctx, queue, b.N)
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
		})
	}
}

// submitAndDrain submits n requests and waits until the queue is empty.
func submitAndDrain(b *testing.B, ctx context.Context, queue *bus.Queue, n int) {
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
