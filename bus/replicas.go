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
// (or gives those there that many), in the fleet's partitions (those
// recorded, or one), records the setting in ConfigBucket for every
// agentty to make what is missing with it and to warn of what has fewer,
// and puts the operator's steering key there (when operator is set).
// agentty serve runs it with 1; on a cluster, the operator runs `agentty
// queue setup --replicas 3` once. SetupWith sets the partitions too.
func Setup(ctx context.Context, nc *nats.Conn, replicas int, operator *Signer) error {
	_, err := SetupWith(ctx, nc, Settings{Replicas: replicas}, operator)
	return err
}

// Settings are what the operator's setup decides for the fleet.
type Settings struct {
	// Replicas is the copies of each stream and bucket (1 to 5).
	Replicas int
	// Partitions is K, the partitions of the journal, the run queue and
	// the sessions' and writers' buckets; 0 keeps the fleet's (1 for a
	// new one). A fleet that has a K keeps it: another is refused.
	Partitions int
}

// SetupWith is Setup with the fleet's partitions: it returns the layout
// made (for the server's subject mappings, Layout.Mappings).
func SetupWith(ctx context.Context, nc *nats.Conn, s Settings, operator *Signer) (Layout, error) {
	if s.Replicas < 1 || s.Replicas > 5 {
		return Layout{}, fmt.Errorf("replicas %d: JetStream keeps 1 to 5 copies", s.Replicas)
	}
	if s.Partitions < 0 || s.Partitions > MaxPartitions {
		return Layout{}, fmt.Errorf("partitions %d: agentty splits its streams in 1 to %d", s.Partitions, MaxPartitions)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return Layout{}, err
	}
	cur, err := livePartitions(ctx, nc, js)
	if err != nil {
		return Layout{}, err
	}
	l := Layout{K: s.Partitions}
	if s.Partitions == 0 {
		l.K = max(cur, 1)
	}
	if cur != 0 && cur != l.K {
		return Layout{}, fmt.Errorf("the fleet's streams are in %d %s; changing it to %d on a live deployment would split sessions' histories over two layouts: keep --partitions %d, or set up a new server (or account) with %d and move to it",
			cur, plural(cur, "partition", "partitions"), l.K, cur, l.K)
	}
	if err := makeStreams(ctx, nc, s.Replicas, l); err != nil {
		return l, err
	}
	kv, err := js.KeyValue(ctx, ConfigBucket)
	if err == nil {
		_, err = kv.PutString(ctx, ReplicasKey, strconv.Itoa(s.Replicas))
	}
	if err == nil {
		_, err = kv.PutString(ctx, PartitionsKey, strconv.Itoa(l.K))
	}
	if err == nil && operator != nil {
		_, err = kv.PutString(ctx, OperatorKey, operator.Public())
	}
	if err != nil {
		return l, fmt.Errorf("nats: bucket %s: %w", ConfigBucket, err)
	}
	return l, nil
}

// livePartitions is the partitions the fleet's streams are in: as
// recorded, else 1 when the journal or the queue of one partition is
// there (a deployment from before partitions), else 0 (none yet).
func livePartitions(ctx context.Context, nc *nats.Conn, js jetstream.JetStream) (int, error) {
	var k int
	err := retryWithin(ctx, nc, func(ctx context.Context) (err error) {
		k, err = recordedPartitions(ctx, js)
		if errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		return err
	})
	if err != nil || k > 0 {
		return k, err
	}
	for _, name := range []string{JournalStream, RunsStream} {
		err := retryWithin(ctx, nc, func(ctx context.Context) error { _, err := js.Stream(ctx, name); return err })
		if err == nil {
			return 1, nil
		}
		if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return 0, noJetStream(nc, fmt.Errorf("nats: stream %s: %w", name, err))
		}
	}
	return 0, nil
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

// agenttyStreams are the streams agentty uses in layout l, the buckets'
// by their streams' names.
func agenttyStreams(l Layout) []string {
	var out []string
	for p := range l.N() {
		out = append(out, l.JournalStream(p), l.RunsStream(p), kvStream(l.SessionsBucket(p)), kvStream(l.WritersBucket(p)))
	}
	return append(out, kvStream(WorkersBucket), kvStream(ConfigBucket))
}

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
	l, err := fleetLayout(ctx, nc, js)
	if err != nil {
		return nil, err
	}
	for _, name := range agenttyStreams(l) {
		var st jetstream.Stream
		err := retryWithin(ctx, nc, func(ctx context.Context) (err error) { st, err = js.Stream(ctx, name); return err })
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
// each (3 on a three-node cluster), or gives those there that many, in
// the fleet's partitions: the journal, the run queue, the sessions' meta,
// the writers' leases, the workers' heartbeats and the fleet's config.
// Setup runs it and records the setting.
func MakeStreams(ctx context.Context, nc *nats.Conn, replicas int) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	l, err := fleetLayout(ctx, nc, js)
	if err != nil {
		return err
	}
	return makeStreams(ctx, nc, replicas, l)
}

// makeStreams is MakeStreams in layout l.
func makeStreams(ctx context.Context, nc *nats.Conn, replicas int, l Layout) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	streams, buckets := l.streamConfigs(replicas)
	for _, cfg := range streams {
		if err := retryWithin(ctx, nc, func(ctx context.Context) error { _, err := js.CreateOrUpdateStream(ctx, cfg); return err }); err != nil {
			return noJetStream(nc, fmt.Errorf("nats: stream %s: %w", cfg.Name, err))
		}
	}
	for _, cfg := range buckets {
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

// streamConfigs are the streams and buckets of layout l, each partition's
// named and bound to its subjects.
func (l Layout) streamConfigs(replicas int) ([]jetstream.StreamConfig, []jetstream.KeyValueConfig) {
	var streams []jetstream.StreamConfig
	var buckets []jetstream.KeyValueConfig
	for p := range l.N() {
		j, r := journalStreamConfig(replicas), runsStreamConfig(replicas)
		s, w := sessionsBucketConfig(replicas), writersBucketConfig(replicas)
		if l.split() {
			j.Name, j.Subjects = l.JournalStream(p), []string{l.journalPrefix(p) + ".*"}
			j.Description += fmt.Sprintf(" (partition %d of %d)", p, l.K)
			r.Name, r.Subjects = l.RunsStream(p), []string{l.runsPrefix(p) + ".*.*"}
			r.Description += fmt.Sprintf(" (partition %d of %d)", p, l.K)
			s.Bucket, w.Bucket = l.SessionsBucket(p), l.WritersBucket(p)
		}
		streams = append(streams, j, r)
		buckets = append(buckets, s, w)
	}
	return streams, append(buckets, workersBucketConfig(replicas), configBucketConfig(replicas))
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
