package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentty/agentty/sessions"
	"github.com/nats-io/nats.go/jetstream"
)

// A session's meta: as stored in AGENTTY_SESSIONS, or, when none is, from
// its journal (rebuilt by the Store) or its request waiting on the queue.

// metaOf is ReadMeta, asking hasJournal only when no meta is stored.
func (j *Journals) metaOf(id string, hasJournal func() (bool, error)) (sessions.Meta, bool, error) {
	raw, found, err := j.storedMeta(id)
	if err != nil || found {
		return parseMeta(id, raw, err)
	}
	has, err := hasJournal()
	if err != nil || has {
		return sessions.Meta{}, false, err
	}
	return j.notStored(id)(j.queuedMeta(id))
}

// storedMeta is session id's meta as stored; found is false when none is.
func (j *Journals) storedMeta(id string) (raw []byte, found bool, err error) {
	err = retry(func(ctx context.Context) error {
		e, err := j.at(id).kv.Get(ctx, id)
		if err == nil {
			raw = e.Value()
		}
		return err
	})
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("sessions: %s: meta: %w", id, err)
	}
	return raw, true, nil
}

// parseMeta is the meta stored as raw; ok is false when it cannot be read
// (the store rebuilds it from the journal).
func parseMeta(id string, raw []byte, err error) (sessions.Meta, bool, error) {
	var m sessions.Meta
	if err != nil || json.Unmarshal(raw, &m) != nil || m.ID != id {
		return sessions.Meta{}, false, err
	}
	return m, true, nil
}

// notStored is the meta of session id when none is stored and its
// journal is empty: that of its request on the queue (queuedMeta's
// answer), or ErrNotFound when none waits.
func (j *Journals) notStored(id string) func(sessions.Meta, bool, error) (sessions.Meta, bool, error) {
	return func(m sessions.Meta, ok bool, err error) (sessions.Meta, bool, error) {
		if err != nil || ok {
			return m, ok, err
		}
		return sessions.Meta{}, false, fmt.Errorf("sessions: %s: %w", id, sessions.ErrNotFound)
	}
}
