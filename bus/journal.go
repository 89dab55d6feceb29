package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/agentty/agentty/sessions"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The names Journals keeps sessions under.
const (
	// JournalStream is the stream of every session's journal.
	JournalStream = "AGENTTY_JOURNAL"
	// JournalPrefix is the first two tokens of a journal's subject,
	// agentty.journal.<session>.
	JournalPrefix = "agentty.journal"
	// SessionsBucket is the KV bucket of the sessions' meta, by session id.
	SessionsBucket = "AGENTTY_SESSIONS"
)

// retryFor bounds how long a request is retried while the server cannot
// answer (restarting, a leader being elected, the connection
// reconnecting); attemptTimeout bounds one try.
const (
	retryFor       = 30 * time.Second
	attemptTimeout = 5 * time.Second
)

// DefaultReadIdle is how long a read of a journal waits for its next
// message before it gives the try up (and tries again from there).
const DefaultReadIdle = 5 * time.Second

// Journals is a sessions.Backend that keeps sessions in NATS JetStream:
// each session's journal is the subject agentty.journal.<session> of the
// stream AGENTTY_JOURNAL, one message per event (its JSON line without the
// newline), and its meta is the key <session> of the KV bucket
// AGENTTY_SESSIONS, so any machine that reaches the server sees the same
// sessions.
//
// One writer per session is enforced by the server, not by a lock: a
// Writer knows the subject's last sequence and every publish says so
// (Nats-Expected-Last-Subject-Sequence); when another writer wrote first
// the publish is refused and Append returns sessions.ErrLocked. Two
// writers may therefore both open a session: the first to write keeps it.
// Lines are published one at a time, each once the one before it is
// acknowledged; on a stream made with atomic batches allowed (an
// operator's replicated one, say) the lines of one Append go as one
// batch, stored whole or not at all, the first line carrying the
// expected sequence.
//
// Append returns once the server has acknowledged every line, which is
// what makes a line durable (the server's store, synced as it is
// configured: `agentty serve` syncs every write). Requests that fail
// because the server cannot answer for now are retried for up to 30 s,
// a publish safely: its message id (Nats-Msg-Id) is the session, the
// line's index in the journal and a hash of the line, so a line the
// server stored before its acknowledgement was lost is not stored twice.
// Safe for concurrent use; it does not close the connection it was given.
type Journals struct {
	nc *nats.Conn
	js jetstream.JetStream
	// layout is the fleet's partitions; parts are each one's streams
	// and buckets (partition.go).
	layout Layout
	parts  []*journalPart

	// ReadIdle bounds how long ReadJournal waits for the next message of
	// a journal (DefaultReadIdle when 0); nothing bounds the whole read
	// while messages keep coming, however long the journal. Set it before
	// the Journals is used.
	ReadIdle time.Duration

	// lagging, when set (tests), says that the replica a read meets has
	// not got the message of stream sequence seq yet: the read ends
	// before it, as one from a node catching up after a failover does.
	lagging func(seq uint64) bool
}

// journalPart is one partition's journal stream and buckets.
type journalPart struct {
	p      int
	stream jetstream.Stream
	kv     jetstream.KeyValue
	// writers holds a lease per session being written (lease.go).
	writers jetstream.KeyValue
	atomic  bool // the stream takes atomic batches
	// runsStream caches the partition's queue stream once found
	// (queued.go): finding it asks the server for its info, a large answer.
	runsStream atomic.Pointer[jetstream.Stream]
}

// at is session id's partition.
func (j *Journals) at(id string) *journalPart { return j.parts[j.layout.Of(id)] }

// subject is the subject of session id's journal.
func (j *Journals) subject(id string) string { return j.layout.JournalSubject(id) }

var _ sessions.Backend = (*Journals)(nil)

// OpenJournals returns the sessions kept on nc's server, making the stream
// and the bucket when missing, with the fleet's replicas (Setup); existing
// ones are used as they are. No JetStream is an error saying so.
func OpenJournals(ctx context.Context, nc *nats.Conn) (*Journals, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("sessions: NATS: %w", err)
	}
	j := &Journals{nc: nc, js: js}
	if err := retryWithin(ctx, nc, func(ctx context.Context) error { _, err := js.AccountInfo(ctx); return noJS(err) }); err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return nil, fmt.Errorf("sessions: the NATS server at %s has no JetStream: start it with -js, or use agentty serve", j.url())
		}
		return nil, fmt.Errorf("sessions: NATS JetStream at %s: %w", j.url(), err)
	}
	if j.layout, err = fleetLayout(ctx, nc, js); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	for p := range j.layout.N() {
		part, err := j.openPart(ctx, p)
		if err != nil {
			return nil, err
		}
		j.parts = append(j.parts, part)
	}
	return j, nil
}

// url is the server's URL, without credentials.
func (j *Journals) url() string {
	u := j.nc.ConnectedUrl()
	if u == "" {
		u = j.nc.Opts.Url
	}
	return Redact(u)
}

// Where says where the sessions are, for messages.
func (j *Journals) Where() string {
	if j.layout.split() {
		return fmt.Sprintf("NATS JetStream streams %s_0…%d at %s", JournalStream, j.layout.K-1, j.url())
	}
	return "NATS JetStream stream " + JournalStream + " at " + j.url()
}

// checkToken refuses an id that is not one safe subject token and KV key.
func checkToken(id string) error {
	if id == "" {
		return errors.New("sessions: an empty session id")
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r == '-') {
			return fmt.Errorf("sessions: %q is not a session id that NATS can hold (letters, digits, '_' and '-' only)", id)
		}
	}
	return nil
}

// IDs lists the sessions: those with a meta and those with a journal (a
// session whose meta was never written is listed all the same).
func (j *Journals) IDs() ([]string, error) {
	seen := map[string]bool{}
	for _, part := range j.parts {
		if err := j.partIDs(part, seen); err != nil {
			return nil, err
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		if checkToken(id) == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// partIDs adds to seen the sessions of one partition: those with a meta,
// with a journal, or with a request waiting. One found in a partition not
// its own (put there by hand) is not listed: it is read in its own.
func (j *Journals) partIDs(part *journalPart, all map[string]bool) error {
	seen := map[string]bool{}
	defer func() {
		for id := range seen {
			if j.layout.Of(id) == part.p {
				all[id] = true
			}
		}
	}()
	err := retry(func(ctx context.Context) error {
		keys, err := part.kv.ListKeys(ctx)
		if err != nil {
			return err
		}
		for k := range keys.Keys() {
			seen[k] = true
		}
		return nil
	})
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return fmt.Errorf("sessions: list %s: %w", j.layout.SessionsBucket(part.p), err)
	}
	prefix := j.layout.journalPrefix(part.p)
	err = retry(func(ctx context.Context) error {
		info, err := part.stream.Info(ctx, jetstream.WithSubjectFilter(prefix+".>"))
		if err != nil {
			return err
		}
		for subj := range info.State.Subjects {
			seen[subj[len(prefix)+1:]] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sessions: list %s: %w", j.layout.JournalStream(part.p), err)
	}
	if err := j.queuedIDs(part, seen); err != nil {
		return fmt.Errorf("sessions: list %s: %w", j.layout.RunsStream(part.p), err)
	}
	return nil
}

// ReadMeta returns the meta stored for session id.
func (j *Journals) ReadMeta(id string) (sessions.Meta, bool, error) {
	if err := checkToken(id); err != nil {
		return sessions.Meta{}, false, err
	}
	return j.metaOf(id, func() (bool, error) { return j.has(id) })
}

// ReadJournal returns every message of session id's journal, in order,
// each followed by a newline; ErrNotFound when the session has neither a
// journal nor a meta.
func (j *Journals) ReadJournal(id string) ([]byte, error) {
	if err := checkToken(id); err != nil {
		return nil, err
	}
	n, err := j.count(id)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		if _, _, err := j.ReadMeta(id); err != nil {
			return nil, err
		}
		return nil, nil
	}
	return j.readAll(id, n)
}

// readAll reads session id's journal, which the stream's leader counted n
// messages of.
func (j *Journals) readAll(id string, n uint64) ([]byte, error) {
	// A try that fails part way (no message for ReadIdle, the server
	// restarting) is followed by one from the message after the last one
	// read, so a long journal is read to its end however long it takes,
	// as long as it is read at all. A try that ends short of the n
	// messages the stream's leader counted read a replica that is behind
	// (on a cluster the read's consumer may be placed on one that is
	// catching up after a failover): it is not the journal's end, and
	// whoever continued the session from it would do again what is done.
	var (
		out  []byte
		from uint64 // the stream sequence to read from (0: the start)
		got  uint64 // the messages read
	)
	err := retryProgress(func(ctx context.Context) (bool, error) {
		start := from
		err := j.read(ctx, id, from, func(m jetstream.Msg, seq uint64) {
			out = append(append(out, m.Data()...), '\n')
			from = seq + 1
			got++
		})
		if err == nil && got < n {
			// Behind, or removed meanwhile: the leader counts again.
			if m, cerr := j.count(id); cerr == nil && m <= got {
				n = m
			} else {
				err = fmt.Errorf("%w: %d of the %d messages", ErrBehind, got, n)
			}
		}
		return from != start, err
	})
	if err != nil {
		return nil, fmt.Errorf("sessions: %s: read the journal: %w", id, err)
	}
	return out, nil
}

// read hands each message of session id's journal from stream sequence
// from on (0: the first) to f with its sequence, in order, through an
// ordered consumer, until the last one there is. ctx bounds making the
// consumer; each message is waited for ReadIdle at most, and the read as a
// whole is not bounded.
func (j *Journals) read(ctx context.Context, id string, from uint64, f func(m jetstream.Msg, seq uint64)) error {
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{j.subject(id)},
		InactiveThreshold: 30 * time.Second,
	}
	if from > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from
	}
	c, err := j.at(id).stream.OrderedConsumer(ctx, cfg)
	if err != nil {
		return err
	}
	it, err := c.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	idle := j.ReadIdle
	if idle <= 0 {
		idle = DefaultReadIdle
	}
	for {
		m, err := it.Next(jetstream.NextMaxWait(idle)) // nats.ErrTimeout past idle: transient
		if err != nil {
			return err
		}
		md, err := m.Metadata()
		if err != nil {
			return err
		}
		if j.lagging != nil && j.lagging(md.Sequence.Stream) {
			return nil
		}
		f(m, md.Sequence.Stream)
		if md.NumPending == 0 {
			return nil
		}
	}
}

// Lock returns session id's writer. Nothing is locked: the writer notes
// the journal's last sequence, and the server refuses its publishes if
// another writer has written since (see Journals). create asks for a new
// session: an error if its journal has messages.
func (j *Journals) Lock(id string, create bool) (sessions.Writer, error) {
	if err := checkToken(id); err != nil {
		return nil, err
	}
	if !create {
		if _, err := j.exists(id); err != nil {
			return nil, err
		}
	}
	w, err := j.leased(id)
	if err != nil {
		return nil, err
	}
	switch {
	case w.last != 0 && create:
		err = fmt.Errorf("sessions: create %s: the session already exists in %s", id, j.Where())
	case w.last == 0 && !create: // gone since, as the leader has it
		_, _, err = j.metaOf(id, func() (bool, error) { return false, nil })
	}
	if err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// leased takes session id's writer's lease and returns its writer, which
// continues from the journal's last message as the stream's leader has it.
func (j *Journals) leased(id string) (*journalWriter, error) {
	l, err := takeLease(j.nc, j.at(id).writers, id)
	if err != nil {
		return nil, err
	}
	last, n, err := j.tail(id)
	if err != nil {
		l.release()
		return nil, err
	}
	return &journalWriter{j: j, part: j.at(id), id: id, subj: j.subject(id), last: last, next: n, lease: l}, nil
}

// tail is the sequence of session id's journal's last message as the
// stream's leader has it (0: none) and the journal's number of messages.
func (j *Journals) tail(id string) (last, n uint64, err error) {
	err = retry(func(ctx context.Context) error {
		m, err := j.lastMsg(ctx, id)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			last = 0
			return nil
		}
		if err == nil {
			last = m.Sequence
		}
		return err
	})
	if err == nil && last != 0 {
		n, err = j.count(id)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("sessions: open %s: %w", id, err)
	}
	return last, n, nil
}

// Remove purges session id's journal and deletes its meta. The server
// cannot tell whether another agentty is writing the session: one that
// is will find its next publish refused (its expected sequence is gone)
// only if it had written before; a writer that opened the session and has
// not written yet starts it again from nothing.
func (j *Journals) Remove(id string) error {
	if err := checkToken(id); err != nil {
		return err
	}
	if _, err := j.exists(id); err != nil {
		return fmt.Errorf("sessions: rm %s: %w", id, errors.Unwrap(err))
	}
	l, err := takeLease(j.nc, j.at(id).writers, id)
	if err != nil {
		return err // it is being written: ErrLocked, saying by whom
	}
	defer l.release()
	n, err := j.count(id)
	if err != nil {
		return err
	}
	if n == 0 {
		if _, _, err := j.ReadMeta(id); err != nil {
			return fmt.Errorf("sessions: rm %s: %w", id, errors.Unwrap(err))
		}
	}
	err = retry(func(ctx context.Context) error {
		return j.at(id).stream.Purge(ctx, jetstream.WithPurgeSubject(j.subject(id)))
	})
	if err == nil {
		err = retry(func(ctx context.Context) error { return j.at(id).kv.Purge(ctx, id) })
	}
	if err != nil {
		return fmt.Errorf("sessions: rm %s: %w", id, err)
	}
	return nil
}

// lastMsg is the last message of session id's journal as its stream's
// leader has it. A direct get (GetLastMsgForSubject on a stream that allows them) may
// be answered by a replica that is behind, and what a writer continues
// from, or takes for its own line stored, must be the journal's end.
func (j *Journals) lastMsg(ctx context.Context, id string) (*jetstream.RawStreamMsg, error) {
	subj := j.subject(id)
	req, err := json.Marshal(map[string]string{"last_by_subj": subj})
	if err != nil {
		return nil, err
	}
	resp, err := j.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+j.layout.JournalStream(j.layout.Of(id)), req)
	if errors.Is(err, nats.ErrNoResponders) {
		return nil, jetstream.ErrNoStreamResponse // no leader yet
	}
	if err != nil {
		return nil, err
	}
	var r struct {
		Error   *jetstream.APIError `json:"error"`
		Message *struct {
			Subject string `json:"subject"`
			Seq     uint64 `json:"seq"`
			Hdrs    []byte `json:"hdrs"`
			Data    []byte `json:"data"`
		} `json:"message"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return nil, fmt.Errorf("the last message of %s: %w", subj, err)
	}
	switch {
	case r.Error != nil && r.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, jetstream.ErrMsgNotFound
	case r.Error != nil:
		return nil, r.Error
	case r.Message == nil:
		return nil, jetstream.ErrInvalidJSAck
	}
	m := &jetstream.RawStreamMsg{Subject: r.Message.Subject, Sequence: r.Message.Seq, Data: r.Message.Data}
	if len(r.Message.Hdrs) > 0 {
		if m.Header, err = nats.DecodeHeadersMsg(r.Message.Hdrs); err != nil {
			return nil, fmt.Errorf("the last message of %s: %w", subj, err)
		}
	}
	return m, nil
}
