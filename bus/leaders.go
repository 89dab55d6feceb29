package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Leaders: on a cluster each stream and bucket is ordered by one node, its
// leader, and a node that leads most of them orders most of the fleet's
// synced writes whatever the cluster's size. Setup spreads them (a leader
// asked to step down in favour of a node: NATS's preferred placement), and
// `agentty queue setup --check` says who leads what.

// Lead is who leads one of agentty's streams.
type Lead struct {
	Stream   string   `json:"stream"`
	Leader   string   `json:"leader"` // "" when it has none now (an election)
	Replicas []string `json:"replicas,omitempty"`
}

// Leaders says who leads each of agentty's streams and buckets, in the
// fleet's layout; a stream missing is left out.
func Leaders(ctx context.Context, nc *nats.Conn) ([]Lead, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	l, err := fleetLayout(ctx, nc, js)
	if err != nil {
		return nil, err
	}
	var out []Lead
	for _, name := range agenttyStreams(l) {
		var st jetstream.Stream
		err := retryWithin(ctx, nc, func(ctx context.Context) (err error) { st, err = js.Stream(ctx, name); return err })
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("nats: stream %s: %w", name, err)
		}
		l := Lead{Stream: name}
		if c := st.CachedInfo().Cluster; c != nil {
			l.Leader = c.Leader
			for _, r := range c.Replicas {
				l.Replicas = append(l.Replicas, r.Name)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// Crowded names the node that leads more than half of leads' streams
// when the streams have nodes to spread over, and how many it leads.
func Crowded(leads []Lead) (node string, n int) {
	count := map[string]int{}
	nodes := map[string]bool{}
	for _, l := range leads {
		count[l.Leader]++
		nodes[l.Leader] = true
		for _, r := range l.Replicas {
			nodes[r] = true
		}
	}
	for who, c := range count {
		if who != "" && len(nodes) > 1 && 2*c > len(leads) && c > n {
			node, n = who, c
		}
	}
	return node, n
}

// SpreadLeaders asks each of agentty's streams in turn to be led by the
// next node of the cluster (in the order of their names), so that each
// node leads a share of each kind (journal, queue, sessions, writers) of
// partitions: the i-th stream by node i mod N. A stream whose chosen node
// leads it already, or holds no copy of it, is left as it is. One node
// (no cluster) is nothing to spread.
func SpreadLeaders(ctx context.Context, nc *nats.Conn) error {
	leads, err := Leaders(ctx, nc)
	if err != nil {
		return err
	}
	var nodes []string
	for _, l := range leads {
		for _, n := range append([]string{l.Leader}, l.Replicas...) {
			if n != "" && !slices.Contains(nodes, n) {
				nodes = append(nodes, n)
			}
		}
	}
	slices.Sort(nodes)
	if len(nodes) < 2 {
		return nil
	}
	var errs []error
	for i, l := range leads {
		want := nodes[i%len(nodes)]
		if l.Leader == want || !slices.Contains(l.Replicas, want) {
			continue
		}
		if err := stepDown(ctx, nc, l.Stream, want); err != nil {
			errs = append(errs, fmt.Errorf("nats: stream %s: lead it from %s: %w", l.Stream, want, err))
		}
	}
	return errors.Join(errs...)
}

// stepDown asks stream's leader to step down in favour of node, and waits
// (a few seconds at most) for the new leader to be elected.
func stepDown(ctx context.Context, nc *nats.Conn, stream, node string) error {
	req, _ := json.Marshal(map[string]any{"placement": map[string]string{"preferred": node}})
	actx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	resp, err := nc.RequestWithContext(actx, "$JS.API.STREAM.LEADER.STEPDOWN."+stream, req)
	if err != nil {
		return err
	}
	var r struct {
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return err
	}
	if r.Error != nil {
		return r.Error
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	// Each look bounded: a stream electing its leader may not answer.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(100 * time.Millisecond) {
		lctx, cancel := context.WithTimeout(ctx, time.Second)
		st, err := js.Stream(lctx, stream)
		cancel()
		if err == nil && st.CachedInfo().Cluster != nil && st.CachedInfo().Cluster.Leader == node {
			return nil
		}
	}
	return nil
}
