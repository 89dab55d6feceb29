package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// openPart finds partition p's journal stream and buckets. Unsplit (K =
// 1), what is missing is made with the fleet's replicas, as before; a
// partition's (K > 1) is made by the operator's setup alone
// (missingPartition).
func (j *Journals) openPart(ctx context.Context, p int) (*journalPart, error) {
	js, l := j.js, j.layout
	part := &journalPart{p: p}
	var err error
	err = retryWithin(ctx, j.nc, func(ctx context.Context) (err error) {
		part.stream, err = js.Stream(ctx, l.JournalStream(p))
		return err
	})
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if l.split() {
			return nil, fmt.Errorf("sessions: %w", missingPartition(l.JournalStream(p), l))
		}
		part.stream, err = js.CreateStream(ctx, journalStreamConfig(fleetReplicas(ctx, js)))
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) { // made meanwhile by another agentty
			part.stream, err = js.Stream(ctx, JournalStream)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sessions: stream %s at %s: %w", l.JournalStream(p), j.url(), err)
	}
	part.atomic = part.stream.CachedInfo().Config.AllowAtomicPublish
	if part.kv, err = j.bucket(ctx, l.SessionsBucket(p), sessionsBucketConfig); err != nil {
		return nil, err
	}
	if part.writers, err = j.bucket(ctx, l.WritersBucket(p), writersBucketConfig); err != nil {
		return nil, err
	}
	return part, nil
}

// bucket finds the KV bucket name, or, unsplit, makes it with cfg and
// the fleet's replicas when missing.
func (j *Journals) bucket(ctx context.Context, name string, cfg func(int) jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	var kv jetstream.KeyValue
	err := retryWithin(ctx, j.nc, func(ctx context.Context) (err error) { kv, err = j.js.KeyValue(ctx, name); return err })
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		if j.layout.split() {
			return nil, fmt.Errorf("sessions: %w", missingPartition(kvStream(name), j.layout))
		}
		kv, err = j.js.CreateKeyValue(ctx, cfg(fleetReplicas(ctx, j.js)))
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = j.js.KeyValue(ctx, name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sessions: KV bucket %s at %s: %w", name, j.url(), err)
	}
	return kv, nil
}
