package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Whether a session is there: its journal's messages, asked cheaply.

// count returns the number of messages in session id's journal.
func (j *Journals) count(id string) (uint64, error) {
	var n uint64
	err := retry(func(ctx context.Context) error {
		info, err := j.at(id).stream.Info(ctx, jetstream.WithSubjectFilter(j.subject(id)))
		if err != nil {
			return err
		}
		n = info.State.Subjects[j.subject(id)]
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sessions: %s: %w", id, err)
	}
	return n, nil
}

// has reports whether session id's journal has a message: one direct
// read of its last, where count asks for the stream's info (a larger
// answer the server builds for each call). A new session's first open
// asks it. With replicas, a "none" is confirmed by count.
func (j *Journals) has(id string) (bool, error) {
	found := false
	err := retry(func(ctx context.Context) error {
		_, err := j.at(id).stream.GetLastMsgForSubject(ctx, j.subject(id))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("sessions: %s: %w", id, err)
	}
	if !found && j.replicated() {
		// A direct read may be answered by a replica that lags: "none"
		// is asked again of the leader.
		n, err := j.count(id)
		return n > 0, err
	}
	return found, nil
}

// replicated reports whether the journal's stream keeps more than one
// copy (as its info said when it was opened).
func (j *Journals) replicated() bool {
	info := j.parts[0].stream.CachedInfo()
	return info != nil && info.Config.Replicas > 1
}

// exists reports ErrNotFound (wrapped) for a session with neither
// messages nor meta.
func (j *Journals) exists(id string) (bool, error) {
	has, err := j.has(id)
	if err != nil || has {
		return has, err
	}
	if _, _, err := j.ReadMeta(id); err != nil {
		return false, err
	}
	return true, nil
}
