package bus_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentty/agentty/bus"
)

// BenchmarkSyncedPublishes is the bus's own limit, which agentty's queue
// is measured against (BenchmarkServeRuns in cli reports the synced writes
// a second its runs make): the embedded server as agentty serve runs it
// (file storage, every write synced), P publishers each publishing an
// event-sized message (300 bytes) and waiting for its acknowledgement, as
// the journal and the queue do. Reported: publishes a second.
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
			ctx := context.Background()
			if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "LIMIT", Subjects: []string{"limit.>"}, Storage: jetstream.FileStorage}); err != nil {
				b.Fatal(err)
			}
			msg := []byte(strings.Repeat("x", 300))
			var wg sync.WaitGroup
			next := make(chan int, p)
			b.ResetTimer()
			start := time.Now()
			for w := range p {
				wg.Go(func() {
					for i := range next {
						if _, err := js.Publish(ctx, fmt.Sprintf("limit.%d.%d", w, i%64), msg); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			for i := range b.N {
				next <- i
			}
			close(next)
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "publishes/s")
		})
	}
}
