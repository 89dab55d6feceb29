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
	return perSecond(publishers, d, func(w, i int) error {
		_, err := js.Publish(ctx, fmt.Sprintf("bustest.limit.%d.%d", w, i%64), msg)
		return err
	})
}

// perSecond runs f(w, i) in n goroutines w, for i = 0, 1, … until about d
// has passed or f fails, and returns the calls done a second and the first
// error.
func perSecond(n int, d time.Duration, f func(w, i int) error) (float64, error) {
	var (
		wg    sync.WaitGroup
		done  atomic.Int64
		first error
		once  sync.Once
	)
	start := time.Now()
	stop := start.Add(d)
	for w := range n {
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				if err := f(w, i); err != nil {
					once.Do(func() { first = err })
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(done.Load()) / time.Since(start).Seconds(), first
}
