package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ReplicasKey is the key of ConfigBucket that holds the fleet's replicas
// setting: how many copies of each stream and bucket it keeps.
const ReplicasKey = "replicas"

// Setup makes every stream and bucket agentty uses with replicas copies
// (or gives those there that many), records the setting in ConfigBucket
// for every agentty to make what is missing with it and to warn of what
// has fewer, and puts the operator's steering key there (when operator is
// set). agentty serve runs it with 1; on a cluster, the operator runs
// `agentty queue setup --replicas 3` once.
func Setup(ctx context.Context, nc *nats.Conn, replicas int, operator *Signer) error {
	if replicas < 1 || replicas > 5 {
		return fmt.Errorf("replicas %d: JetStream keeps 1 to 5 copies", replicas)
	}
	if err := MakeStreams(ctx, nc, replicas); err != nil {
		return err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	kv, err := js.KeyValue(ctx, ConfigBucket)
	if err == nil {
		_, err = kv.PutString(ctx, ReplicasKey, strconv.Itoa(replicas))
	}
	if err == nil && operator != nil {
		_, err = kv.PutString(ctx, OperatorKey, operator.Public())
	}
	if err != nil {
		return fmt.Errorf("nats: bucket %s: %w", ConfigBucket, err)
	}
	return nil
}

// fleetReplicas is the fleet's replicas setting, 1 when none was made: what
// a stream or bucket found missing is made with.
func fleetReplicas(ctx context.Context, js jetstream.JetStream) int {
	kv, err := js.KeyValue(ctx, ConfigBucket)
	if err != nil {
		return 1
	}
	e, err := kv.Get(ctx, ReplicasKey)
	if err != nil {
		return 1
	}
	n, err := strconv.Atoi(string(e.Value()))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// agenttyStreams are the streams agentty uses, the buckets' by their
// streams' names.
var agenttyStreams = []string{JournalStream, RunsStream, kvStream(SessionsBucket), kvStream(WritersBucket), kvStream(WorkersBucket), kvStream(ConfigBucket)}

// CheckReplicas says, one line each, which of agentty's streams and
// buckets keep fewer copies than the fleet's replicas setting (or are
// missing): a node lost would stop what they hold. None when all have it,
// or when no setting was made.
func CheckReplicas(ctx context.Context, nc *nats.Conn) ([]string, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	want := fleetReplicas(ctx, js)
	if want <= 1 {
		return nil, nil
	}
	var out []string
	for _, name := range agenttyStreams {
		st, err := js.Stream(ctx, name)
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			out = append(out, fmt.Sprintf("%s is missing (it will be made with %d replicas)", name, want))
		case err != nil:
			return out, fmt.Errorf("nats: stream %s: %w", name, err)
		case st.CachedInfo().Config.Replicas < want:
			out = append(out, fmt.Sprintf("%s keeps %d %s, the fleet's setting is %d: losing its node stops what it holds (agentty queue setup --replicas %d)",
				name, st.CachedInfo().Config.Replicas, plural(st.CachedInfo().Config.Replicas, "copy", "copies"), want, want))
		}
	}
	return out, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// MakeStreams makes agentty's streams and buckets with replicas copies of
// each (3 on a three-node cluster), or gives those there that many: the
// journal, the run queue, the sessions' meta, the writers' leases, the
// workers' heartbeats and the fleet's config. Setup runs it and records
// the setting.
func MakeStreams(ctx context.Context, nc *nats.Conn, replicas int) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	for _, cfg := range []jetstream.StreamConfig{journalStreamConfig(replicas), runsStreamConfig(replicas)} {
		if err := retryWithin(ctx, nc, func(ctx context.Context) error { _, err := js.CreateOrUpdateStream(ctx, cfg); return err }); err != nil {
			return noJetStream(nc, fmt.Errorf("nats: stream %s: %w", cfg.Name, err))
		}
	}
	for _, cfg := range []jetstream.KeyValueConfig{sessionsBucketConfig(replicas), writersBucketConfig(replicas), workersBucketConfig(replicas), configBucketConfig(replicas)} {
		if err := retryWithin(ctx, nc, func(ctx context.Context) error {
			if _, err := js.CreateOrUpdateKeyValue(ctx, cfg); err != nil {
				return err
			}
			return limitReaders(ctx, js, kvStream(cfg.Bucket))
		}); err != nil {
			return noJetStream(nc, fmt.Errorf("nats: bucket %s: %w", cfg.Bucket, err))
		}
	}
	return nil
}

// ReaderIdle is how long a consumer on a stream that is read (the journal,
// the buckets) lives unused: the server deletes it then, durable or not,
// and refuses one that asks to live longer. The submit role may make
// consumers there to read; none it makes is kept. (The ordered consumers
// of nats.go ask for 5 minutes.)
const ReaderIdle = 5 * time.Minute

// readerLimits bound the consumers of a stream that is read.
func readerLimits() jetstream.StreamConsumerLimits {
	return jetstream.StreamConsumerLimits{InactiveThreshold: ReaderIdle}
}

// limitReaders puts readerLimits on stream, a bucket's (a bucket's config
// has no place for them).
func limitReaders(ctx context.Context, js jetstream.JetStream, stream string) error {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return err
	}
	cfg := st.CachedInfo().Config
	if cfg.ConsumerLimits == readerLimits() {
		return nil
	}
	cfg.ConsumerLimits = readerLimits()
	_, err = js.UpdateStream(ctx, cfg)
	return err
}

// retryWithin runs op, each try bounded by attemptTimeout, again after a
// pause while it fails with a transient error (a cluster still electing
// its leaders drops requests), until ctx ends; a user who may not make
// streams is told at once.
func retryWithin(ctx context.Context, nc *nats.Conn, op func(ctx context.Context) error) error {
	for {
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		err := op(actx)
		cancel()
		if d := denied(nc, "$JS.API.STREAM.", "make or change agentty's streams and buckets"); err != nil && d != nil {
			return d
		}
		var final *finalError
		if errors.As(err, &final) {
			return final.error
		}
		if err == nil || !transient(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func journalStreamConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              JournalStream,
		Description:       "agentty's session journals: one message per event on " + JournalPrefix + ".<session>",
		Subjects:          []string{JournalPrefix + ".>"},
		Storage:           jetstream.FileStorage,
		Replicas:          replicas,
		Retention:         jetstream.LimitsPolicy,
		MaxMsgs:           -1,
		MaxBytes:          -1,
		MaxMsgsPerSubject: -1,
		AllowDirect:       true,
		ConsumerLimits:    readerLimits(),
		// No atomic batches: on one node each batch is staged in a
		// store of its own, which costs more than the syncs it saves
		// (BenchmarkJournalPerStep).
	}
}

func runsStreamConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        RunsStream,
		Description: "agentty run requests (agentty submit), one subject per pool and session",
		Subjects:    []string{runsPrefix + ".>"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		Duplicates:  10 * time.Minute,
	}
}

func sessionsBucketConfig(replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      SessionsBucket,
		Description: "agentty's session meta, by session id",
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
	}
}

func writersBucketConfig(replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      WritersBucket,
		Description: "agentty's session writers: a key per session being written, expiring unless renewed",
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		TTL:         LeaseTTL,
	}
}

func workersBucketConfig(replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      WorkersBucket,
		Description: "agentty's workers: a heartbeat per worker with its runs, expiring unless renewed",
		Storage:     jetstream.MemoryStorage,
		Replicas:    replicas,
		TTL:         BeatTTL,
	}
}

func configBucketConfig(replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      ConfigBucket,
		Description: "agentty's fleet settings that only the operator writes (the operator's steering key)",
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
	}
}

// noJS is err, made final when it says the server has no JetStream: no
// election ends that.
func noJS(err error) error {
	if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
		return &finalError{err}
	}
	return err
}

// finalError is an error retryWithin does not try again.
type finalError struct{ error }

func (e *finalError) Unwrap() error { return e.error }
