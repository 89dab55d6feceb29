package bus_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// partitioned starts a server set up with k partitions, its mappings
// given, and connects to it.
func partitioned(t *testing.T, k int) (*bus.Server, *nats.Conn) {
	t.Helper()
	srv := startServer(t)
	nc, err := bus.Connect(bus.Config{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	l, err := bus.SetupWith(context.Background(), nc, bus.Settings{Replicas: 1, Partitions: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.K != k {
		t.Fatalf("set up %d partitions, want %d", l.K, k)
	}
	if err := srv.MapPartitions(l); err != nil {
		t.Fatal(err)
	}
	return srv, nc
}

// TestPartitionIsNATSMapping: the partition agentty computes for a
// session is the one the server's partition() mapping sends its
// documented subjects to, so a client that knows nothing of partitions
// lands where agentty reads.
func TestPartitionIsNATSMapping(t *testing.T) {
	_, nc := partitioned(t, 4)
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	l := bus.Layout{K: 4}
	hit := map[int]bool{}
	for i := range 40 {
		id := fmt.Sprintf("s%03dx", i)
		ack, err := js.Publish(ctx, bus.JournalPrefix+"."+id, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if want := l.JournalStream(l.Of(id)); ack.Stream != want {
			t.Fatalf("session %s's documented journal subject landed in %s, agentty reads it in %s", id, ack.Stream, want)
		}
		ack, err = js.Publish(ctx, "agentty.runs.default."+id, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if want := l.RunsStream(l.Of(id)); ack.Stream != want {
			t.Fatalf("session %s's documented request subject landed in %s, want %s", id, ack.Stream, want)
		}
		hit[l.Of(id)] = true
	}
	if len(hit) != 4 {
		t.Errorf("40 sessions fell in partitions %v, want all four", hit)
	}
}

// TestPartitionedJournals: with four partitions, sessions are written,
// read, listed and removed each in its own partition's stream and
// buckets, and a session listed is one that can be read.
func TestPartitionedJournals(t *testing.T) {
	_, nc := partitioned(t, 4)
	ctx := context.Background()
	j, err := bus.OpenJournals(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 12 {
		id := fmt.Sprintf("p%02d", i)
		w, err := j.Lock(id, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append([]byte(fmt.Sprintf(`{"line":%d}`+"\n", i)), true); err != nil {
			t.Fatal(err)
		}
		w.Close()
		ids = append(ids, id)
	}
	got, err := j.IDs()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, ids) {
		t.Fatalf("listed %v, want %v", got, ids)
	}
	js, _ := jetstream.New(nc)
	l := bus.Layout{K: 4}
	used := 0
	for p := range 4 {
		st, err := js.Stream(ctx, l.JournalStream(p))
		if err != nil {
			t.Fatal(err)
		}
		if n := st.CachedInfo().State.Msgs; n > 0 {
			used++
		}
	}
	if used < 3 {
		t.Errorf("12 sessions used %d of 4 journal partitions", used)
	}
	b, err := j.ReadJournal("p05")
	if err != nil || string(b) != `{"line":5}`+"\n" {
		t.Fatalf("read p05: %q %v", b, err)
	}
	if err := j.Remove("p05"); err != nil {
		t.Fatal(err)
	}
	if _, err := j.ReadJournal("p05"); err == nil {
		t.Error("p05 read after it was removed")
	}
}

// TestPartitionsChangeRefused: a fleet set up with one number of
// partitions refuses another (a session's history would be split), and
// one from before partitions (its streams there, nothing recorded) is
// taken as one partition; the same number again is fine.
func TestPartitionsChangeRefused(t *testing.T) {
	_, nc := partitioned(t, 4)
	ctx := context.Background()
	_, err := bus.SetupWith(ctx, nc, bus.Settings{Replicas: 1, Partitions: 3}, nil)
	if err == nil || !strings.Contains(err.Error(), "live deployment") {
		t.Fatalf("setup with 3 partitions over 4: %v", err)
	}
	if l, err := bus.SetupWith(ctx, nc, bus.Settings{Replicas: 1}, nil); err != nil || l.K != 4 {
		t.Fatalf("setup keeping the partitions: %v %v", l, err)
	}
	old := startServer(t)
	onc, err := bus.Connect(bus.Config{URL: old.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer onc.Close()
	if _, err := bus.OpenJournals(ctx, onc); err != nil { // a fleet of before: the streams, no setting
		t.Fatal(err)
	}
	if _, err := bus.SetupWith(ctx, onc, bus.Settings{Replicas: 1, Partitions: 4}, nil); err == nil {
		t.Fatal("a fleet of one partition, from before partitions, was split in four")
	}
	if l, err := bus.SetupWith(ctx, onc, bus.Settings{Replicas: 1}, nil); err != nil || l.K != 1 {
		t.Fatalf("setup of the fleet of before: %v %v", l, err)
	}
}

// TestMissingPartitionNotMade: a partition's stream deleted on the server
// is not made again by whoever opens the journals or the queue (a worker's
// start), which says to run the operator's setup; the setup makes it, and
// the next open works.
func TestMissingPartitionNotMade(t *testing.T) {
	_, nc := partitioned(t, 3)
	ctx := context.Background()
	js, _ := jetstream.New(nc)
	l := bus.Layout{K: 3}
	for _, name := range []string{l.JournalStream(1), l.RunsStream(2)} {
		if err := js.DeleteStream(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := bus.OpenJournals(octx, nc); err == nil || !strings.Contains(err.Error(), "queue setup --partitions 3") {
		t.Fatalf("journals opened with a partition missing: %v", err)
	}
	if _, err := bus.OpenQueue(octx, nc); err == nil || !strings.Contains(err.Error(), "queue setup --partitions 3") {
		t.Fatalf("queue opened with a partition missing: %v", err)
	}
	if _, err := js.Stream(ctx, l.JournalStream(1)); err == nil {
		t.Fatal("a partition's stream was made by opening")
	}
	if _, err := bus.SetupWith(ctx, nc, bus.Settings{Replicas: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.OpenJournals(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.OpenQueue(ctx, nc); err != nil {
		t.Fatal(err)
	}
}

// TestPartitionedQueue: requests land in their session's partition, a
// consumer takes from every partition in turn (none left behind while
// another has work), one limited to some partitions takes only theirs,
// and a request published to a partition not its session's is marked.
func TestPartitionedQueue(t *testing.T) {
	_, nc := partitioned(t, 4)
	ctx := context.Background()
	q, err := bus.OpenQueue(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	l := q.Layout()
	for i := range 40 {
		id := fmt.Sprintf("q%02d", i)
		if _, err := q.Submit(ctx, bus.DefaultPool, bus.RunRequest{ID: "r" + id, Session: id, Task: "t", Submitted: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := q.List(ctx, "")
	if err != nil || len(list) != 40 {
		t.Fatalf("listed %d requests (%v), want 40", len(list), err)
	}
	for _, r := range list {
		if r.Partition != l.Of(r.Request.Session) {
			t.Fatalf("request of %s listed in partition %d, its session's is %d", r.Request.Session, r.Partition, l.Of(r.Request.Session))
		}
	}
	only, err := q.Consumer(ctx, bus.WorkerConfig{Partitions: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := only.Take(ctx, 40, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Partition != 2 || d.Misplaced != "" {
			t.Fatalf("a worker of partition 2 took one of %d (%s)", d.Partition, d.Misplaced)
		}
		d.HandBack(0)
	}
	all, err := q.Consumer(ctx, bus.WorkerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// Four at a time: each Take begins with the next partition, so the
	// first takes reach every partition, not the first one's forty.
	seen := map[int]bool{}
	for range 4 {
		ds, err := all.Take(ctx, 4, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			seen[d.Partition] = true
			if err := d.Done(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(seen) < 3 {
		t.Errorf("16 requests taken four at a time came from partitions %v", seen)
	}
	// By hand, on partition 0's subject, a session of another.
	id := "elsewhere"
	for l.Of(id) == 0 {
		id += "x"
	}
	js, _ := jetstream.New(nc)
	if _, err := js.Publish(ctx, fmt.Sprintf("agentty.runs.0.%s.%s", bus.DefaultPool, id), fmt.Appendf(nil, `{"id":"bad","session":%q,"task":"t"}`, id)); err != nil {
		t.Fatal(err)
	}
	zero, err := q.Consumer(ctx, bus.WorkerConfig{Partitions: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		d, err := zero.Next(ctx, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if d == nil {
			continue
		}
		d.Done(ctx)
		if d.Req.Session == id {
			if !strings.Contains(d.Misplaced, "does not hold session "+id) {
				t.Fatalf("a request in the wrong partition was taken as %q", d.Misplaced)
			}
			return
		}
		if d.Misplaced != "" {
			t.Fatalf("a request in its own partition marked: %s", d.Misplaced)
		}
	}
	t.Fatal("the misplaced request never came")
}

// TestPartitionedEarlier: the per-session order check looks in the
// session's own partition: the later of a session's two requests, taken
// while the earlier one is still on the queue, waits for it.
func TestPartitionedEarlier(t *testing.T) {
	_, nc := partitioned(t, 4)
	ctx := context.Background()
	q, err := bus.OpenQueue(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	id := "ordered"
	for q.Layout().Of(id) == 0 {
		id += "x"
	}
	at := time.Now()
	for i, name := range []string{"first", "second"} {
		if _, err := q.Submit(ctx, bus.DefaultPool, bus.RunRequest{ID: name, Session: id, Task: name, Submitted: at.Add(time.Duration(i) * time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := q.Consumer(ctx, bus.WorkerConfig{Partitions: []int{q.Layout().Of(id)}})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := c.Take(ctx, 2, time.Second)
	if err != nil || len(ds) != 2 {
		t.Fatalf("took %d (%v), want both", len(ds), err)
	}
	for _, d := range ds {
		earlier, err := q.Earlier(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if want := d.Req.ID == "second"; earlier != want {
			t.Errorf("request %s: an earlier one waits: %v, want %v", d.Req.ID, earlier, want)
		}
	}
}
