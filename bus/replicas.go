package bus

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// MakeStreams makes agentty's streams and buckets with replicas copies of
// each (3 on a three-node cluster), or gives those there that many: the
// journal, the run queue, the sessions' meta, the writers' leases and the
// workers' heartbeats. agentty makes what is missing with one replica;
// run this first on a cluster, so that a node lost loses nothing.
func MakeStreams(ctx context.Context, nc *nats.Conn, replicas int) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	for _, cfg := range []jetstream.StreamConfig{journalStreamConfig(replicas), runsStreamConfig(replicas)} {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			return noJetStream(nc, fmt.Errorf("nats: stream %s: %w", cfg.Name, err))
		}
	}
	for _, cfg := range []jetstream.KeyValueConfig{sessionsBucketConfig(replicas), writersBucketConfig(replicas), workersBucketConfig(replicas), configBucketConfig(replicas)} {
		if _, err := js.CreateOrUpdateKeyValue(ctx, cfg); err != nil {
			return noJetStream(nc, fmt.Errorf("nats: bucket %s: %w", cfg.Bucket, err))
		}
	}
	return nil
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
