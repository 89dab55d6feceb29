package bus

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Partitions: the journal, the run queue and the sessions' and writers'
// buckets split over K streams, a session's subjects in one of them, so
// that the fleet's synced writes are ordered by K leaders, not one
// (issue 55). K = 1 is the layout of before: the names without a
// partition (AGENTTY_JOURNAL, agentty.journal.SESSION, …), which an
// existing deployment keeps.
//
// A session's partition is NATS subject mapping's partition(K, session):
// FNV-1a (32 bits) of its id, modulo K. With K > 1 its journal is the
// subject agentty.journal.P.SESSION of the stream AGENTTY_JOURNAL_P, its
// requests agentty.runs.P.POOL.SESSION of AGENTTY_RUNS_P, its meta and
// lease keys of AGENTTY_SESSIONS_P and AGENTTY_WRITERS_P. agentty
// computes P itself; a server given Mappings (serve does it, and
// `agentty queue users --partitions K` writes them for a cluster's nodes)
// maps the documented subjects (agentty.journal.SESSION,
// agentty.runs.POOL.SESSION) of any other client to the same place.

// PartitionsKey is the key of ConfigBucket that holds the fleet's
// partitions (K); none is K = 1.
const PartitionsKey = "partitions"

// MaxPartitions bounds K: the roles' permissions name each partition's
// streams up to it.
const MaxPartitions = 16

// Layout is how the fleet's streams are partitioned: K partitions, K < 2
// being one, under the names of before.
type Layout struct{ K int }

// N is the number of partitions, 1 at least.
func (l Layout) N() int { return max(l.K, 1) }

// split reports whether the names carry a partition.
func (l Layout) split() bool { return l.K > 1 }

// Of is session's partition: partition(K, session) as NATS maps it.
func (l Layout) Of(session string) int {
	if !l.split() {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(Token(session)))
	return int(h.Sum32() % uint32(l.K))
}

// name is base for partition p: base itself when unsplit, base_P else.
func (l Layout) name(base string, p int) string {
	if !l.split() {
		return base
	}
	return base + "_" + strconv.Itoa(p)
}

// JournalStream is partition p's journal stream.
func (l Layout) JournalStream(p int) string { return l.name(JournalStream, p) }

// RunsStream is partition p's run queue stream.
func (l Layout) RunsStream(p int) string { return l.name(RunsStream, p) }

// SessionsBucket is partition p's bucket of the sessions' meta.
func (l Layout) SessionsBucket(p int) string { return l.name(SessionsBucket, p) }

// WritersBucket is partition p's bucket of the writers' leases.
func (l Layout) WritersBucket(p int) string { return l.name(WritersBucket, p) }

// journalPrefix is what precedes a session's id in partition p's journal
// subjects.
func (l Layout) journalPrefix(p int) string {
	if !l.split() {
		return JournalPrefix
	}
	return JournalPrefix + "." + strconv.Itoa(p)
}

// JournalSubject is the subject of session id's journal.
func (l Layout) JournalSubject(id string) string { return l.journalPrefix(l.Of(id)) + "." + id }

// runsPrefix is what precedes the pool in partition p's request subjects.
func (l Layout) runsPrefix(p int) string {
	if !l.split() {
		return runsPrefix
	}
	return runsPrefix + "." + strconv.Itoa(p)
}

// SessionSubject is the subject of pool's run requests for session, in
// the session's partition.
func (l Layout) SessionSubject(pool, session string) string {
	return l.runsPrefix(l.Of(session)) + "." + Token(pool) + "." + Token(session)
}

// poolFilters are the subjects a pool's consumer takes in partition p:
// its sessions' requests, and, unsplit, any published on the pool's own
// subject (by an older submit, or by hand).
func (l Layout) poolFilters(pool string, p int) []string {
	if !l.split() {
		return poolFilters(pool)
	}
	return []string{l.runsPrefix(p) + "." + Token(pool) + ".*"}
}

// Mappings are the subject mappings that put the documented subjects of
// a session (its journal, its requests) in its partition, as a server's
// account takes them; none for one partition.
func (l Layout) Mappings() map[string]string {
	if !l.split() {
		return nil
	}
	k := strconv.Itoa(l.K)
	return map[string]string{
		JournalPrefix + ".*": JournalPrefix + ".{{partition(" + k + ",1)}}.{{wildcard(1)}}",
		runsPrefix + ".*.*":  runsPrefix + ".{{partition(" + k + ",2)}}.{{wildcard(1)}}.{{wildcard(2)}}",
	}
}

// partitionNames are base's names in every layout up to MaxPartitions:
// base, base_0 … base_15 (the roles' table).
func partitionNames(base string) []string {
	out := []string{base}
	for p := range MaxPartitions {
		out = append(out, base+"_"+strconv.Itoa(p))
	}
	return out
}

// fleetLayout is the fleet's partitions as recorded in ConfigBucket; K = 1
// when none is (no bucket, or no key in it). A bucket that cannot be read
// now (its leader being elected) is asked again within ctx, never taken
// for K = 1: a reader of one partition on a split fleet would look for
// streams that are not there.
func fleetLayout(ctx context.Context, nc *nats.Conn, js jetstream.JetStream) (Layout, error) {
	var k int
	err := retryWithin(ctx, nc, func(ctx context.Context) (err error) {
		k, err = recordedPartitions(ctx, js)
		if errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrKeyNotFound) {
			k, err = 1, nil
		}
		return err
	})
	if err != nil {
		return Layout{}, fmt.Errorf("nats: the fleet's partitions (%s): %w", ConfigBucket, err)
	}
	return Layout{K: max(k, 1)}, nil
}

// recordedPartitions is the K recorded in ConfigBucket, 0 when none is.
func recordedPartitions(ctx context.Context, js jetstream.JetStream) (int, error) {
	kv, err := js.KeyValue(ctx, ConfigBucket)
	if err != nil {
		return 0, err
	}
	e, err := kv.Get(ctx, PartitionsKey)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(string(e.Value()))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s %s: %q is not a number of partitions", ConfigBucket, PartitionsKey, e.Value())
	}
	return n, nil
}

// missingPartition says that a partition's stream or bucket is not there:
// only the operator's setup makes them (a role that may not must not, and
// one that may would make it with settings not the operator's).
func missingPartition(name string, l Layout) error {
	return &finalError{fmt.Errorf("%s is missing (the fleet has %d partitions): the operator makes it again with agentty queue setup --partitions %d", name, l.K, l.K)}
}
