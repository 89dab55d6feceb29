// Package bustest measures the bus itself, for the benchmarks that hold
// agentty's use of it against its limit.
package bustest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// LimitStream is the stream SyncedPublishes publishes to (made when
// missing, file-stored like agentty's own).
const LimitStream = "BUSTEST_LIMIT"

// SyncedPublishes is the bus's own limit for writes like agentty's:
// publishers publishers, each publishing an event-sized message (300
// bytes) and waiting for its acknowledgement before the next, as the
// journal and the queue do, for about d. It returns the publishes a second.
func SyncedPublishes(ctx context.Context, js jetstream.JetStream, publishers int, d time.Duration) (float64, error) {
	cfg := jetstream.StreamConfig{Name: LimitStream, Subjects: []string{"bustest.limit.>"}, Storage: jetstream.FileStorage}
	if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
		return 0, err
	}
	msg := []byte(strings.Repeat("x", 300))
	var (
		wg    sync.WaitGroup
		n     atomic.Int64
		first error
		once  sync.Once
	)
	start := time.Now()
	stop := start.Add(d)
	for w := range publishers {
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				if _, err := js.Publish(ctx, fmt.Sprintf("bustest.limit.%d.%d", w, i%64), msg); err != nil {
					once.Do(func() { first = err })
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds(), first
}
