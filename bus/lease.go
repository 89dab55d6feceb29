package bus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/agentty/agentty/sessions"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// WritersBucket is the KV bucket of the sessions' writer leases: the key
// <session> exists while one agentty writes the session. The bucket's
// entries expire LeaseTTL after their last write (the server removes
// them, so no two machines' clocks are compared); the writer renews its
// lease every third of that, and a writer that died gives the session up
// within LeaseTTL.
const WritersBucket = "AGENTTY_WRITERS"

// LeaseTTL is how long a writer's lease lasts unrenewed.
const LeaseTTL = 15 * time.Second

// lease is what a writer holds: a key in WritersBucket.
type lease struct {
	kv   jetstream.KeyValue
	id   string
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	rev  uint64
	lost error // set when the lease was taken or could not be renewed
}

// leaseHolder is the value of a lease: who writes, for messages.
type leaseHolder struct {
	Host string    `json:"host"`
	PID  int       `json:"pid"`
	At   time.Time `json:"at"`
}

// takeLease makes the caller session id's one writer, or says who is:
// an error wrapping sessions.ErrLocked.
func takeLease(nc *nats.Conn, kv jetstream.KeyValue, id string) (*lease, error) {
	host, _ := os.Hostname()
	val, _ := json.Marshal(leaseHolder{Host: host, PID: os.Getpid(), At: time.Now().UTC()})
	var rev uint64
	err := retry(func(ctx context.Context) error {
		var err error
		if rev, err = kv.Create(ctx, id, val); err != nil {
			if d := denied(nc, "$KV."+kv.Bucket(), "write sessions (take a session's writer's lease)"); d != nil {
				return d
			}
		}
		return err
	})
	if errors.Is(err, jetstream.ErrKeyExists) {
		// A try whose answer was lost may have made it: then it is ours.
		if r, ok := ours(kv, id, val); ok {
			rev, err = r, nil
		}
	}
	if errors.Is(err, jetstream.ErrKeyExists) {
		who := "another agentty"
		if e, gerr := kv.Get(context.Background(), id); gerr == nil {
			var h leaseHolder
			if json.Unmarshal(e.Value(), &h) == nil && h.Host != "" {
				who = fmt.Sprintf("agentty %d on %s", h.PID, h.Host)
			}
		}
		return nil, fmt.Errorf("sessions: open %s: %w (%s is writing it)", id, sessions.ErrLocked, who)
	}
	if err != nil {
		return nil, fmt.Errorf("sessions: open %s: the writer's lease in %s: %w", id, kv.Bucket(), err)
	}
	l := &lease{kv: kv, id: id, rev: rev, stop: make(chan struct{}), done: make(chan struct{})}
	go l.renew(val)
	return l, nil
}

// renew keeps the lease until release.
func (l *lease) renew(val []byte) {
	defer close(l.done)
	t := time.NewTicker(LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		rev := l.rev
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), LeaseTTL/3)
		next, err := l.kv.Update(ctx, l.id, val, rev)
		cancel()
		l.mu.Lock()
		if err != nil && (errors.Is(err, jetstream.ErrKeyExists) || isWrongLast(err)) {
			// An update whose answer was lost may have been made.
			if r, ok := ours(l.kv, l.id, val); ok {
				next, err = r, nil
			}
		}
		switch {
		case err == nil:
			l.rev = next
		case errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyNotFound) || isWrongLast(err):
			// It expired (this process stalled past LeaseTTL) and
			// perhaps another took it: the expected sequence of the
			// journal still fences what this writer publishes.
			l.lost = fmt.Errorf("sessions: %s: this agentty's lease on the session ran out: %w", l.id, sessions.ErrLocked)
		}
		lost := l.lost != nil
		l.mu.Unlock()
		if lost {
			return
		}
	}
}

// isWrongLast reports a KV update refused for its revision.
func isWrongLast(err error) bool { return wrongLast(err) }

// release gives the lease up at once.
func (l *lease) release() {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	rev, lost := l.rev, l.lost
	l.mu.Unlock()
	if lost == nil {
		ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
		l.kv.Purge(ctx, l.id, jetstream.LastRevision(rev))
		cancel()
	}
}

// Writing reports whether a writer holds session id's lease.
func (j *Journals) Writing(id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	_, err := j.at(id).writers.Get(ctx, id)
	return err == nil
}

// ours returns the revision of id's lease when it holds val (this
// writer's, which names its host, process and start): a write whose
// answer was lost was made after all.
func ours(kv jetstream.KeyValue, id string, val []byte) (uint64, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	e, err := kv.Get(ctx, id)
	if err != nil || !bytes.Equal(e.Value(), val) {
		return 0, false
	}
	return e.Revision(), true
}

// LastLine returns the last event of session id's journal.
func (j *Journals) LastLine(id string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	m, err := j.at(id).stream.GetLastMsgForSubject(ctx, j.subject(id))
	if err != nil {
		return nil, err
	}
	// A message may hold several lines: a step's, packed.
	return m.Data[bytes.LastIndexByte(m.Data, '\n')+1:], nil
}
