package bus

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
	"github.com/nats-io/nats.go/jetstream"
)

// A session submitted and not yet started has no meta and no journal: it
// is its request on the run queue (agentty submit writes nothing else, so
// that the submit user needs no write to the sessions' buckets). The
// sessions listed and read here include those, from the queue.

// runs returns partition part's run queue stream, nil when there is none.
func (j *Journals) runs(ctx context.Context, part *journalPart) (jetstream.Stream, error) {
	if st := part.runsStream.Load(); st != nil {
		return *st, nil
	}
	st, err := j.js.Stream(ctx, j.layout.RunsStream(part.p))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err == nil {
		part.runsStream.Store(&st)
	}
	return st, err
}

// runsGone forgets the queue's stream after err said it is not there
// (an operator deleted it): the next look finds it again, or none.
func (j *Journals) runsGone(part *journalPart, err error) error {
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		part.runsStream.Store(nil)
		return nil
	}
	return err
}

// queuedIDs adds to seen the sessions that have a request waiting in
// partition part.
func (j *Journals) queuedIDs(part *journalPart, seen map[string]bool) error {
	return retry(func(ctx context.Context) error {
		st, err := j.runs(ctx, part)
		if st == nil || err != nil {
			return err
		}
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(j.layout.runsPrefix(part.p)+".*.*"))
		if err != nil {
			return j.runsGone(part, err)
		}
		for subj := range info.State.Subjects {
			seen[subj[strings.LastIndexByte(subj, '.')+1:]] = true
		}
		return nil
	})
}

// queuedMeta is the meta of session id from its latest request waiting on
// the queue; ok is false when none waits.
func (j *Journals) queuedMeta(id string) (m sessions.Meta, ok bool, err error) {
	err = retry(func(ctx context.Context) error {
		part := j.at(id)
		st, err := j.runs(ctx, part)
		if st == nil || err != nil {
			return err
		}
		// One direct read of the latest request of the session in any pool
		// (the subject's wildcard), not the stream's info: a new session's
		// first open asks it.
		msg, err := st.GetLastMsgForSubject(ctx, j.layout.runsPrefix(part.p)+".*."+Token(id))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil // none waits, or it was taken meanwhile
		}
		if err != nil {
			return j.runsGone(part, err)
		}
		var req RunRequest
		if json.Unmarshal(msg.Data, &req) == nil && req.Session == id {
			m, ok = sessions.Meta{ID: id, Title: sessions.Title(req.Task), Created: req.Submitted, Updated: req.Submitted, Format: engine.SchemaVersion}, true
		}
		return nil
	})
	return m, ok, err
}
