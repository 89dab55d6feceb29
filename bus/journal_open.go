package bus

import (
	"errors"
	"sync"

	"github.com/agentty/agentty/sessions"
)

var _ sessions.Opener = (*Journals)(nil)

// Open makes the caller session id's one writer and reads the session:
// what Lock, ReadJournal and ReadMeta would each ask the bus again, asked
// once, all of it after the lease is taken (sessions.Store.OpenWriter uses
// it). A new session's first open asked the bus fifteen questions one
// after another; this takes the lease, then asks three at once (the
// journal's last message, the stored meta, the request on the queue), and
// reads the journal when it has messages.
func (j *Journals) Open(id string) (sessions.Writer, []byte, sessions.Meta, bool, error) {
	if err := checkToken(id); err != nil {
		return nil, nil, sessions.Meta{}, false, err
	}
	l, err := takeLease(j.nc, j.at(id).writers, id)
	if err != nil {
		if errors.As(err, new(*DeniedError)) { // a session that is not there is not there to anyone
			if _, _, nerr := j.ReadMeta(id); errors.Is(nerr, sessions.ErrNotFound) {
				err = nerr
			}
		}
		return nil, nil, sessions.Meta{}, false, err
	}
	var (
		wg        sync.WaitGroup
		last, n   uint64
		tailErr   error
		stored    []byte
		found     bool
		storedErr error
		queued    sessions.Meta
		waits     bool
		queuedErr error
	)
	wg.Go(func() { last, n, tailErr = j.tail(id) })
	wg.Go(func() { stored, found, storedErr = j.storedMeta(id) })
	wg.Go(func() { queued, waits, queuedErr = j.queuedMeta(id) })
	wg.Wait()
	m, ok, err := sessions.Meta{}, false, tailErr
	switch {
	case err != nil:
	case found:
		m, ok, _ = parseMeta(id, stored, nil)
	case last != 0: // a journal: the meta is rebuilt from it when it cannot be read
	case storedErr != nil:
		err = storedErr
	default: // nothing stored and no journal: a request waiting, or nothing
		m, ok, err = j.notStored(id)(queued, waits, queuedErr)
	}
	var raw []byte
	if err == nil && last != 0 {
		raw, err = j.readAll(id, n)
	}
	if err != nil {
		l.release()
		return nil, nil, sessions.Meta{}, false, err
	}
	return &journalWriter{j: j, part: j.at(id), id: id, subj: j.subject(id), last: last, next: n, lease: l}, raw, m, ok, nil
}
