package bus

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"
	"time"

	"github.com/agentty/agentty/sessions"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// journalWriter publishes one session's lines, each expecting the last
// sequence the one before it got.
type journalWriter struct {
	j        *Journals
	part     *journalPart // the session's partition
	id, subj string

	mu     sync.Mutex // guards the fields below
	last   uint64     // the journal's last sequence, as this writer left it
	next   uint64     // the index in the journal of the next line
	acked  []byte     // the lines of a failed Append that the server has
	err    error      // set once another writer wrote: every Append fails
	closed bool
	lease  *lease // the session's writer lease, released by Close
}

// maxBatch bounds the lines of one atomic batch (the server's default
// limit is 1,000).
const maxBatch = 500

// Append publishes lines in order, as few messages as fit them. On a stream that
// allows atomic batches (one an operator made so; the one OpenJournals
// makes does not) the lines of one Append go as one batch, which the server stores whole or not at all and
// acknowledges once (one sync of its store, not one per line); otherwise
// each line is published once the one before it is acknowledged. sync
// changes nothing: every line is acknowledged before Append returns, which
// is what durable means here. When it fails part way the lines already
// stored are remembered, and an Append that begins with them again (the
// Journal retries what it could not write) does not publish them twice.
func (w *journalWriter) Append(lines []byte, sync bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("sessions: %s: append: the writer is closed", w.id)
	}
	if w.err != nil {
		return w.err
	}
	done := 0
	if len(w.acked) > 0 && bytes.HasPrefix(lines, w.acked) {
		done = len(w.acked)
	}
	w.acked = w.acked[:0]
	var split [][]byte
	for rest := lines[done:]; len(rest) > 0; {
		end := bytes.IndexByte(rest, '\n')
		if end < 0 { // a last line without its newline: the whole of it
			end = len(rest)
			rest = append(rest[:len(rest):len(rest)], '\n')
		}
		split = append(split, rest[:end])
		rest = rest[end+1:]
	}
	for len(split) > 0 {
		n := 1
		var err error
		if w.part.atomic && len(split) > 1 {
			n, err = w.publishBatch(split[:min(len(split), maxBatch)])
		} else {
			// The lines of one Append (a step's events, flushed at
			// its boundary) go as one message, up to maxPacked bytes:
			// one acknowledgement and one sync of the server's store,
			// not one per line.
			var packed []byte
			packed, n = pack(split)
			if err = w.publish(packed); err != nil {
				n = 0 // not stored: an Append of them again sends them
			}
		}
		for _, l := range split[:n] {
			done += len(l) + 1
		}
		if err != nil {
			w.acked = append(w.acked, lines[:min(done, len(lines))]...)
			return err
		}
		split = split[n:]
	}
	return nil
}

// publish sends one line and waits for its acknowledgement, retrying
// while the server cannot answer.
func (w *journalWriter) publish(line []byte) error {
	id := msgID(w.id, w.next, line)
	var ack *jetstream.PubAck
	err := retry(func(ctx context.Context) error {
		var err error
		m := &nats.Msg{Subject: w.subj, Data: line, Header: nats.Header{}}
		ack, err = w.j.js.PublishMsg(ctx, m, jetstream.WithMsgID(id),
			jetstream.WithExpectLastSequencePerSubject(w.last), jetstream.WithRetryAttempts(0))
		if wrongLast(err) {
			// Our own line, stored before its acknowledgement was lost and
			// no longer de-duplicated (a restart, the window passed)?
			if seq, k := w.stored(ctx, []string{id}); k == 0 {
				ack = &jetstream.PubAck{Stream: w.part.stream.CachedInfo().Config.Name, Sequence: seq, Duplicate: true}
				return nil
			}
		}
		return err
	})
	if err != nil {
		return w.failed(err)
	}
	w.last = ack.Sequence // a duplicate's is the sequence the line has
	w.next++
	return nil
}

// maxPacked bounds the lines packed into one message (the server's
// default limit on a message is 1 MB).
const maxPacked = 256 << 10

// pack joins lines into one message's data, a newline between them, as
// many as fit in maxPacked (one at least), and says how many.
func pack(lines [][]byte) ([]byte, int) {
	if len(lines) == 1 {
		return lines[0], 1
	}
	size, n := len(lines[0]), 1
	for n < len(lines) && size+1+len(lines[n]) <= maxPacked {
		size += 1 + len(lines[n])
		n++
	}
	out := make([]byte, 0, size)
	for i, l := range lines[:n] {
		if i > 0 {
			out = append(out, '\n')
		}
		out = append(out, l...)
	}
	return out, n
}

// The headers of an atomic batch.
const (
	batchIDHeader     = "Nats-Batch-Id"
	batchSeqHeader    = "Nats-Batch-Sequence"
	batchCommitHeader = "Nats-Batch-Commit"
	// errBatchDuplicate is the server's refusal of a batch holding a
	// message id it has seen.
	errBatchDuplicate = 10201
	// errBatchIncomplete is its refusal of a batch with a message
	// missing (lost while the connection reconnected).
	errBatchIncomplete = 10176
)

// publishBatch sends lines as one atomic batch, the first expecting the
// journal's last sequence, and waits for the server to commit it. It
// returns how many of the lines the journal holds: all of them, or, when
// the server already had the first ones (a commit whose acknowledgement
// was lost, retried), those.
func (w *journalWriter) publishBatch(lines [][]byte) (int, error) {
	ids := make([]string, len(lines))
	for i, l := range lines {
		ids[i] = msgID(w.id, w.next+uint64(i), l)
	}
	var seq uint64
	n := 0
	err := retry(func(ctx context.Context) error {
		var b [16]byte
		rand.Read(b[:])
		batch := hex.EncodeToString(b[:]) // a new batch each try: a failed one is gone
		var commit *nats.Msg
		for i, l := range lines {
			m := &nats.Msg{Subject: w.subj, Data: l, Header: nats.Header{
				jetstream.MsgIDHeader: {ids[i]},
				batchIDHeader:         {batch},
				batchSeqHeader:        {strconv.Itoa(i + 1)},
			}}
			if i == 0 {
				m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(w.last, 10))
			}
			if i == len(lines)-1 {
				m.Header.Set(batchCommitHeader, "1")
				commit = m
				break
			}
			if err := w.j.nc.PublishMsg(m); err != nil {
				return err
			}
		}
		resp, err := w.j.nc.RequestMsgWithContext(ctx, commit)
		if errors.Is(err, nats.ErrNoResponders) {
			return jetstream.ErrNoStreamResponse
		}
		if err != nil {
			return err
		}
		var ack struct {
			Error  *jetstream.APIError `json:"error"`
			Stream string              `json:"stream"`
			Seq    uint64              `json:"seq"`
		}
		if err := json.Unmarshal(resp.Data, &ack); err != nil {
			return fmt.Errorf("%w: %s", jetstream.ErrInvalidJSAck, resp.Data)
		}
		if ack.Error != nil {
			if ack.Error.ErrorCode == errBatchDuplicate || wrongLast(ack.Error) {
				// Lines stored by an earlier try whose acknowledgement
				// was lost?
				if last, k := w.stored(ctx, ids); k >= 0 {
					seq, n = last, k+1
					return nil
				}
			}
			return ack.Error
		}
		if ack.Stream == "" {
			return fmt.Errorf("%w: %s", jetstream.ErrInvalidJSAck, resp.Data)
		}
		seq, n = ack.Seq, len(lines)
		return nil
	})
	if err != nil {
		return 0, w.failed(err)
	}
	w.last = seq
	w.next += uint64(n)
	return n, nil
}

// stored looks at the journal's last message: when it is one of ids
// (lines this writer sent, stored though no acknowledgement came back),
// it returns its sequence and index in ids; otherwise k is -1.
func (w *journalWriter) stored(ctx context.Context, ids []string) (seq uint64, k int) {
	last, err := w.j.lastMsg(ctx, w.id)
	if err != nil {
		return 0, -1
	}
	id := last.Header.Get(jetstream.MsgIDHeader)
	for i, want := range ids {
		if id == want {
			return last.Sequence, i
		}
	}
	return 0, -1
}

// failed says why a publish failed: another writer wrote (ErrLocked, from
// then on), or the server could not be reached in time.
func (w *journalWriter) failed(err error) error {
	if wrongLast(err) {
		w.err = fmt.Errorf("sessions: session %s was written by another agentty since this one opened it: %w", w.id, sessions.ErrLocked)
		return w.err
	}
	return fmt.Errorf("sessions: %s: append to %s: %w", w.id, w.j.Where(), err)
}

// msgID identifies line number index of session id's journal for the
// server's de-duplication. Where the server checks what comes first
// depends on the path a publish takes (nats-server v2.15.2):
//
//   - One line on a stream of one replica (stream.go, processJetStreamMsg):
//     the expected last subject sequence is checked (stream.go:6774)
//     before the message id (stream.go:7019). A retried line that the
//     server stored though its acknowledgement was lost is therefore
//     refused as a wrong last sequence, not acknowledged as a duplicate;
//     what makes the retry correct is stored(), which finds the line's id
//     on the journal's last message.
//   - An atomic batch, or any publish to a replicated stream
//     (checkMsgHeadersPreClusteredProposal in jetstream_batching.go): the
//     message id is checked first (jetstream_batching.go:608), the
//     expected sequence after (:766).
//
// On that second path the hash matters: a second writer's different line
// n must not be taken for the first writer's and silently dropped.
func msgID(id string, index uint64, line []byte) string {
	h := fnv.New64a()
	h.Write(line)
	return id + "." + strconv.FormatUint(index, 10) + "." + strconv.FormatUint(h.Sum64(), 36)
}

// WriteMeta replaces the session's meta in the bucket. It is fenced only
// as far as the writer knows: once a publish was refused its meta is
// stale and is not written (the meta can always be rebuilt from the
// journal).
func (w *journalWriter) WriteMeta(m sessions.Meta) error {
	w.mu.Lock()
	err := w.err
	w.mu.Unlock()
	if err != nil {
		return err
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("sessions: %s: meta: %w", w.id, err)
	}
	if err := retry(func(ctx context.Context) error {
		_, err := w.part.kv.Put(ctx, w.id, raw)
		return err
	}); err != nil {
		return fmt.Errorf("sessions: %s: write meta to %s: %w", w.id, w.j.layout.SessionsBucket(w.part.p), err)
	}
	return nil
}

// Close gives the writer up. There is nothing to sync: every line was
// acknowledged when Append returned.
func (w *journalWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed && w.lease != nil {
		w.lease.release()
	}
	w.closed = true
	w.acked = nil
	return nil
}

// wrongLast reports the server's refusal of a publish whose expected last
// sequence is not the subject's.
func wrongLast(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
}

// inProcess reports the refusal of a replicated stream's leader to check
// an expected last sequence while another message of the subject is on its
// way to the replicas (nats-server 2.15, jetstream_batching.go,
// checkMsgHeadersPreClusteredProposal): an earlier try of the same
// publish, whose answer did not come in time, or another writer's. It is
// no verdict: a later try is checked once that message is stored, and is
// then a duplicate of ours, or refused for another writer's.
func inProcess(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

// transient reports an error that a later try may not have: the server
// restarting or electing a leader, the connection reconnecting, a batch
// that lost messages on the way (nothing of it was stored) or had to wait
// for others.
func transient(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, ErrBehind) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
		errors.As(err, &apiErr) && (apiErr.Code == 503 || apiErr.Code == 429 || apiErr.ErrorCode == errBatchIncomplete) ||
		inProcess(err)
}

// retry runs op, each try bounded by attemptTimeout, again after a
// growing pause while it fails with a transient error, for up to
// retryFor.
func retry(op func(ctx context.Context) error) error {
	return retryProgress(func(ctx context.Context) (bool, error) { return false, op(ctx) })
}

// retryProgress is retry for an op that may get part way before it fails
// and goes on from there the next time: a try that made progress starts
// the retryFor and the pauses again (the server is answering).
func retryProgress(op func(ctx context.Context) (progress bool, err error)) error {
	const firstPause = 20 * time.Millisecond
	deadline := time.Now().Add(retryFor)
	pause := firstPause
	for {
		ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
		progress, err := op(ctx)
		cancel()
		if err == nil || !transient(err) {
			return err
		}
		if progress {
			deadline, pause = time.Now().Add(retryFor), firstPause
		}
		if time.Now().Add(pause).After(deadline) {
			return err
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Second)
	}
}

// ErrBehind is a read that ended before the journal's end as its stream's
// leader counts it: the replica it read is behind (a node catching up after
// a failover). It passes; try again later.
var ErrBehind = errors.New("the journal's replica read is behind its leader")

// Unavailable reports an error of the server's that a later try may not
// have (unreachable, electing a leader, a replica behind): a request whose
// session cannot be read for it goes back on the queue, not away.
func Unavailable(err error) bool { return transient(err) }
