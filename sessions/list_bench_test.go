package sessions_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkList1000 lists a store of 1,000 sessions, as `agentty sessions
// ls` does: meta.json only, no journal read. It reports CPU ms per listing
// (the target: ≤ 50 ms), which the machine's noise inflates less
// than wall time.
func BenchmarkList1000(b *testing.B) {
	store, _ := sessions.Open(b.TempDir())
	e := engine.New(engine.Config{Model: answers{}})
	for range 1000 {
		j, _ := store.Create()
		if res := e.Run(context.Background(), engine.NewSession(j.ID), "hello", j); res.StopReason != engine.StopAnswered {
			b.Fatal(res.Err)
		}
		j.Close()
	}
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		list, err := store.List()
		if err != nil || len(list) != 1000 {
			b.Fatalf("%d sessions, %v", len(list), err)
		}
	}
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
