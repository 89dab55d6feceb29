package bus_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/sessions"
)

// sniffer counts what clients ask the server: JetStream API requests and
// the publishes to the sessions' and writers' buckets.
type sniffer struct {
	t  *testing.T
	nc *nats.Conn
	ch chan *nats.Msg
}

func sniff(t *testing.T, url string) *sniffer {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	s := &sniffer{t: t, nc: nc, ch: make(chan *nats.Msg, 4096)}
	for _, subj := range []string{"$JS.API.>", "$KV.>"} {
		if _, err := nc.ChanSubscribe(subj, s.ch); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return s
}

// during returns what was asked while f ran. Whatever the server had
// routed to the sniffer before f returned is in its channel once a round
// trip on its connection is done: the server answers it after them.
func (s *sniffer) during(f func()) []string {
	s.drain()
	f()
	if err := s.nc.Flush(); err != nil {
		s.t.Fatal(err)
	}
	out := s.drain()
	sort.Strings(out)
	return out
}

// drain takes what the sniffer has been handed.
func (s *sniffer) drain() []string {
	var out []string
	for {
		select {
		case m := <-s.ch:
			out = append(out, m.Subject)
		default:
			return out
		}
	}
}

// TestOpeningAQueuedSessionAsksLittle: a worker opening a session that is
// only its request on the queue (issue 42: every question is a round trip
// in the run's path) takes the lease, asks three questions, and writes
// nothing else until the run has something to say; the meta is the
// request's, and is written when the journal closes. A session that does
// not exist is refused.
func TestOpeningAQueuedSessionAsksLittle(t *testing.T) {
	srv := startServer(t)
	journals, nc := openJournals(t, srv.URL())
	store := sessions.OpenWith(t.TempDir(), journals)
	queue, err := bus.OpenQueue(context.Background(), nc)
	if err != nil {
		t.Fatal(err)
	}
	id := sessions.NewID()
	req := bus.RunRequest{ID: sessions.NewID(), Session: id, Task: "count the orders"}
	if _, err := queue.Submit(context.Background(), bus.DefaultPool, req); err != nil {
		t.Fatal(err)
	}
	// A session that does not exist is refused (and the queue's stream,
	// looked up once, is known from here on).
	if _, _, err := store.OpenWriter(sessions.NewID()); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("opening a session that does not exist: %v, want ErrNotFound", err)
	}
	s := sniff(t, srv.URL())

	var j *sessions.Journal
	var l *sessions.Loaded
	asked := s.during(func() {
		if j, l, err = store.OpenWriter(id); err != nil {
			t.Fatal(err)
		}
	})
	var writes, questions []string
	for _, a := range asked {
		if strings.HasPrefix(a, "$KV.") {
			writes = append(writes, a)
		} else {
			questions = append(questions, a)
		}
	}
	if len(writes) != 1 || !strings.HasPrefix(writes[0], "$KV."+bus.WritersBucket+".") {
		t.Errorf("opening wrote %q; want the writer's lease alone", writes)
	}
	if len(questions) > 3 {
		t.Errorf("opening asked %d questions, want at most 3:\n%s", len(questions), strings.Join(questions, "\n"))
	}
	if l.Meta.Title != "count the orders" {
		t.Errorf("the meta's title is %q, want the request's task", l.Meta.Title)
	}

	closed := s.during(func() {
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	})
	if strings.Count(strings.Join(closed, " "), "$KV."+bus.SessionsBucket+"."+id) != 1 {
		t.Errorf("closing wrote %q; want the session's meta once", closed)
	}
	if m, ok, err := journals.ReadMeta(id); err != nil || !ok || m.Title != "count the orders" {
		t.Errorf("stored meta after close: %+v %v %v", m, ok, err)
	}

	// Its lease was given back: it opens again.
	j, _, err = store.OpenWriter(id)
	if err != nil {
		t.Fatalf("opening the session again: %v", err)
	}
	j.Close()
}
