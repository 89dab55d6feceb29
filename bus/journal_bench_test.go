package bus_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
	"github.com/nats-io/nats-server/v2/server"
)

// BenchmarkJournalPerStep is the journal's cost per step: one run of 1,000
// steps, each one tool call (an instant model, an echo tool), journaled to
// the local files ("file", fsynced at every step) or to JetStream on an
// embedded server reached over loopback TCP, its store synced on every
// write ("jetstream", every line acknowledged before the run goes on).
// "file-pure" and "jetstream-pure" are the first two with a tool that is
// Inline and Repeatable (as the calculator, memory and clock are): its
// tool_started need not be stored before it runs, so a step is one write.
// "jetstream-atomic" is the same on a stream that takes atomic batches (one
// batch per flush); "jetstream-nosync" a server left to JetStream's default
// (its store synced every two minutes), to tell the syncs from the rest.
// ns/step is the run's wall time per step; cpu-ns/step the process's CPU
// time per step (the embedded server's included).
func BenchmarkJournalPerStep(b *testing.B) {
	const steps = 1000
	for _, v := range []string{"file", "jetstream", "file-pure", "jetstream-pure", "jetstream-atomic", "jetstream-nosync"} {
		b.Run(v, func(b *testing.B) {
			e := stepEngineWith(b, steps, strings.HasSuffix(v, "-pure"))
			var store *sessions.Store
			switch strings.TrimSuffix(v, "-pure") {
			case "file":
				var err error
				if store, err = sessions.Open(b.TempDir()); err != nil {
					b.Fatal(err)
				}
			case "jetstream":
				journals, _ := openJournals(b, startServer(b).URL())
				store = sessions.OpenWith(b.TempDir(), journals)
			case "jetstream-atomic":
				srv := startServer(b)
				preCreate(b, srv.URL(), true)
				journals, _ := openJournals(b, srv.URL())
				store = sessions.OpenWith(b.TempDir(), journals)
			case "jetstream-nosync":
				journals, _ := openJournals(b, startUnsynced(b))
				store = sessions.OpenWith(b.TempDir(), journals)
			}
			cpu0 := cpuTime()
			b.ReportAllocs()
			for b.Loop() {
				j, err := store.Create()
				if err != nil {
					b.Fatal(err)
				}
				if res := e.Run(context.Background(), engine.NewSession(j.ID), "go", j); res.StopReason != engine.StopAnswered {
					b.Fatalf("run: %s %v", res.StopReason, res.Err)
				}
				if err := j.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*steps), "cpu-ns/step")
		})
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startUnsynced runs a server with JetStream's default durability and
// returns its URL, for comparison only: agentty's own server syncs every
// write.
func startUnsynced(b *testing.B) string {
	b.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: b.TempDir(), NoSigs: true, NoLog: true})
	if err != nil {
		b.Fatal(err)
	}
	go ns.Start()
	b.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		b.Fatal("server not ready")
	}
	return ns.ClientURL()
}
