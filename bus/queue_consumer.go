package bus

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// WorkerConfig says how a pool's workers take requests.
type WorkerConfig struct {
	Pool string
	// MaxDeliver is how many times a request is handed out before it is
	// given up (default 5); the worker that gets it once more ends its
	// run with the reason (Delivery.GiveUp). A consumer made beforehand
	// without a limit reads as 0: never given up.
	MaxDeliver int
	// AckWait is how long a worker may stay silent about a request before
	// the server hands it to another (default 30 s; a Delivery signals
	// progress every third of it while its run goes on).
	AckWait time.Duration
	// Partitions limits the worker to these partitions of the queue;
	// none is every one.
	Partitions []int
}

// Consumer returns the pool's durable consumer in each partition the
// worker takes from, shared by the pool's workers: each request goes to
// one of them at a time. The first worker makes them with cfg; a consumer
// that exists is used with its own settings (they are the server's, for
// every worker of the pool), and what it has is in the Consumer's Config,
// with a note when it differs from cfg.
func (q *Queue) Consumer(ctx context.Context, cfg WorkerConfig) (*Consumer, error) {
	cfg.Pool = cmp.Or(cfg.Pool, DefaultPool)
	if cfg.MaxDeliver <= 0 {
		cfg.MaxDeliver = 5
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = 30 * time.Second
	}
	parts := cfg.Partitions
	if len(parts) == 0 {
		parts = make([]int, q.layout.N())
		for p := range parts {
			parts[p] = p
		}
	}
	out := &Consumer{cfg: cfg, q: q}
	for _, p := range parts {
		if p < 0 || p >= q.layout.N() {
			return nil, UsageError{fmt.Errorf("partition %d: the queue has partitions 0 to %d", p, q.layout.N()-1)}
		}
		c, have, err := q.consumer(ctx, cfg, p)
		if err != nil {
			return nil, fmt.Errorf("nats: the workers of pool %s: %w", cfg.Pool, err)
		}
		out.parts = append(out.parts, &poolPart{p: p, c: c})
		out.cfg.MaxDeliver, out.cfg.AckWait = have.MaxDeliver, have.AckWait
		if (have.MaxDeliver != cfg.MaxDeliver || have.AckWait != cfg.AckWait) && out.Note == "" {
			out.Note = fmt.Sprintf("pool %s's workers share the settings of the first: --max-deliver %d --ack-wait %s (not %d and %s)", cfg.Pool, have.MaxDeliver, have.AckWait, cfg.MaxDeliver, cfg.AckWait)
		}
	}
	return out, nil
}

// consumer is the pool's consumer in partition p, found or made, and its
// settings.
func (q *Queue) consumer(ctx context.Context, cfg WorkerConfig, p int) (jetstream.Consumer, WorkerConfig, error) {
	pool, st := cfg.Pool, q.streams[p]
	name := "workers-" + Token(pool)
	if c, err := st.Consumer(ctx, name); err == nil {
		info := c.CachedInfo()
		if info.Config.FilterSubject == RunSubject(pool) {
			// Made before requests had their session's subject: it
			// takes those too from now on, its settings kept.
			up := info.Config
			up.FilterSubject, up.FilterSubjects = "", poolFilters(pool)
			if c, err = st.CreateOrUpdateConsumer(ctx, up); err != nil {
				return nil, cfg, err
			}
			info = c.CachedInfo()
		}
		return c, WorkerConfig{Pool: pool, MaxDeliver: max(info.Config.MaxDeliver-1, 0), AckWait: info.Config.AckWait}, nil
	} else if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, cfg, err
	}
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:        name,
		Description:    "agentty workers of pool " + pool,
		FilterSubjects: q.layout.poolFilters(pool, p),
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        cfg.AckWait,
		// One more than MaxDeliver: that delivery ends the run with why.
		MaxDeliver:    cfg.MaxDeliver + 1,
		MaxAckPending: -1,
	})
	return c, cfg, err
}

// Consumer hands out a pool's requests, from each partition it takes
// from in turn.
type Consumer struct {
	parts []*poolPart
	cfg   WorkerConfig
	q     *Queue
	next  int // the partition a sweep begins with, turning (Take)
	// held are requests that came in one wait beyond those asked for:
	// the next Take hands them out first.
	held []*Delivery
	// Note says when the pool's settings are not the ones asked for.
	Note string
}

// poolPart is the pool's consumer in partition p.
type poolPart struct {
	p int
	c jetstream.Consumer
}

// Config is the pool's settings, as the server has them.
func (c *Consumer) Config() WorkerConfig { return c.cfg }

// Partitions are the partitions c takes from.
func (c *Consumer) Partitions() []int {
	out := make([]int, len(c.parts))
	for i, pp := range c.parts {
		out[i] = pp.p
	}
	return out
}

// Next waits for the next request, up to wait; nil, nil when none came.
func (c *Consumer) Next(ctx context.Context, wait time.Duration) (*Delivery, error) {
	ds, err := c.Take(ctx, 1, wait)
	if len(ds) == 0 {
		return nil, err
	}
	return ds[0], err
}

// Held takes back the requests that came in a wait beyond those asked
// for (Take) and are not yet handed out: a worker that stops puts them
// back on the queue.
func (c *Consumer) Held() []*Delivery {
	out := c.held
	c.held = nil
	return out
}

// wait waits up to wait for the next request of each partition at once.
func (c *Consumer) wait(ctx context.Context, wait time.Duration) ([]*Delivery, error) {
	if len(c.parts) == 1 {
		d, err := c.nextIn(ctx, c.parts[0], wait)
		if d == nil {
			return nil, err
		}
		return []*Delivery{d}, err
	}
	var (
		mu   sync.Mutex
		out  []*Delivery
		errs []error
		wg   sync.WaitGroup
	)
	for _, pp := range c.parts {
		wg.Go(func() {
			d, err := c.nextIn(ctx, pp, wait)
			mu.Lock()
			defer mu.Unlock()
			if d != nil {
				out = append(out, d)
			}
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	if len(out) > 0 || len(errs) == 0 {
		return out, nil
	}
	var remade *ConsumerRemadeError
	if i := slices.IndexFunc(errs, func(e error) bool { return errors.As(e, &remade) }); i >= 0 {
		return nil, errs[i]
	}
	return nil, errs[0]
}

// nextIn waits for partition pp's next request, up to wait.
func (c *Consumer) nextIn(ctx context.Context, pp *poolPart, wait time.Duration) (*Delivery, error) {
	m, err := pp.c.Next(jetstream.FetchMaxWait(wait))
	if errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jetstream.ErrNoMessages) {
		if c.q != nil {
			return nil, denied(c.q.nc, "$JS.API.CONSUMER.MSG.NEXT."+c.q.layout.RunsStream(pp.p), "take runs (it is not a worker)")
		}
		return nil, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		if remade, rerr := c.remake(ctx, pp); rerr == nil && remade {
			return nil, &ConsumerRemadeError{Pool: c.cfg.Pool, Name: c.name(), Cause: err}
		}
		return nil, err
	}
	return c.delivery(m, pp.p), nil
}

// Take returns up to n requests: those waiting now, without waiting, from
// each partition in turn (the first partition asked turns with each
// Take, so none is served before the others), or when none is, the next
// to come within wait. A worker with n slots free takes n requests with
// one question to each partition, not n one after another. When the
// requests of several partitions come in the same wait, those beyond n
// are held for the next Take (Held gives them back). A Consumer is used
// by one goroutine.
func (c *Consumer) Take(ctx context.Context, n int, wait time.Duration) ([]*Delivery, error) {
	n = max(n, 1)
	if len(c.held) > 0 {
		k := min(n, len(c.held))
		out := slices.Clone(c.held[:k])
		c.held = c.held[k:]
		return out, nil
	}
	var out []*Delivery
	if n > 1 || len(c.parts) > 1 {
		start := c.next
		c.next = (c.next + 1) % len(c.parts)
		for i := range c.parts {
			if len(out) >= n {
				break
			}
			pp := c.parts[(start+i)%len(c.parts)]
			batch, err := pp.c.FetchNoWait(n - len(out))
			if err != nil {
				continue
			}
			for m := range batch.Messages() {
				out = append(out, c.delivery(m, pp.p))
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	ds, err := c.wait(ctx, wait)
	if len(ds) > n {
		c.held = append(c.held, ds[n:]...)
		ds = ds[:n]
	}
	return ds, err
}

// delivery is the request m of partition p, as a worker is handed it.
func (c *Consumer) delivery(m jetstream.Msg, p int) *Delivery {
	d := &Delivery{msg: m, ackWait: c.cfg.AckWait, Partition: p}
	md, err := m.Metadata()
	if err == nil {
		d.Attempt = int(md.NumDelivered)
	}
	if c.cfg.MaxDeliver > 0 && d.Attempt > c.cfg.MaxDeliver { // 0: a consumer made without a limit
		d.GiveUp = fmt.Sprintf("the request was handed to workers %d times and never finished (workers died or were stopped mid-run); given up", c.cfg.MaxDeliver)
	}
	if err := json.Unmarshal(m.Data(), &d.Req); err != nil || d.Req.Session == "" {
		d.Bad = fmt.Sprintf("not a run request (%v): %.80q", err, m.Data())
	} else if c.q != nil && c.q.layout.Of(d.Req.Session) != p {
		d.Misplaced = fmt.Sprintf("the request was published to partition %d of the run queue (%s), which does not hold session %s (its partition is %d): refused, not run out of its session's order",
			p, m.Subject(), d.Req.Session, c.q.layout.Of(d.Req.Session))
	}
	return d
}

// ConsumerRemadeError is Next's error when the pool's consumer was gone
// (deleted on the server) and was made again: the worker takes requests
// from the new one at once.
type ConsumerRemadeError struct {
	Pool, Name string
	Cause      error
}

func (e *ConsumerRemadeError) Error() string {
	return fmt.Sprintf("pool %s's consumer %s was gone from the server (%v); made it again with the pool's settings", e.Pool, e.Name, e.Cause)
}

func (c *Consumer) name() string { return "workers-" + Token(cmp.Or(c.cfg.Pool, DefaultPool)) }

// remake makes the pool's consumer of partition pp again when the server
// has none by its name; remade says it did.
func (c *Consumer) remake(ctx context.Context, pp *poolPart) (remade bool, err error) {
	if c.q == nil {
		return false, nil
	}
	_, err = c.q.streams[pp.p].Consumer(ctx, c.name())
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return false, err
	}
	n, _, err := c.q.consumer(ctx, c.cfg, pp.p)
	if err != nil {
		return false, err
	}
	pp.c = n
	return true, nil
}
