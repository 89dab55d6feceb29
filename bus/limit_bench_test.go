package bus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/bus/bustest"
)

// BenchmarkSyncedPublishes is the bus's own limit, which agentty's queue
// is measured against (BenchmarkServeRuns in cli measures it again beside
// its runs, on the same server, and reports its share): the embedded
// server as agentty serve runs it (file storage, every write synced), P
// publishers each publishing an event-sized message and waiting for its
// acknowledgement, as the journal and the queue do, for a second an
// iteration. Reported: publishes a second.
func BenchmarkSyncedPublishes(b *testing.B) {
	for _, p := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("publishers=%d", p), func(b *testing.B) {
			srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Shutdown()
			nc, err := bus.Connect(bus.Config{URL: srv.URL()})
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			js, _ := jetstream.New(nc)
			var sum float64
			for b.Loop() {
				rate, err := bustest.SyncedPublishes(context.Background(), js, p, time.Second)
				if err != nil {
					b.Fatal(err)
				}
				sum += rate
			}
			b.ReportMetric(sum/float64(b.N), "publishes/s")
		})
	}
}
