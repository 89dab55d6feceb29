package bus

import (
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// The roles of agentty serve's users, least privilege by subject and by
// JetStream API (docs/scale-out.md has the table, and
// cli/roles_test.go walks it as each user against the real server). The
// operator may do everything. What a role may publish is an allow list:
// anything not named is refused.

// Role is what one user may publish and subscribe to.
type Role struct {
	Publish, Subscribe []string
}

func (r Role) permissions() *server.Permissions {
	return &server.Permissions{Publish: &server.SubjectPermission{Allow: r.Publish}, Subscribe: &server.SubjectPermission{Allow: r.Subscribe},
		// A reply goes only to the inbox of a request the user received
		// (a pause, a question), once, within a gate's asking again:
		// no user may publish into another's inbox.
		Response: &server.ResponsePermission{MaxMsgs: 1, Expires: 5 * time.Minute}}
}

// jsReads are the JetStream API's reads: account, stream and consumer
// info, and messages by sequence or subject.
var jsReads = []string{
	"$JS.API.INFO", "$JS.API.STREAM.INFO.>", "$JS.API.STREAM.NAMES", "$JS.API.STREAM.LIST",
	"$JS.API.STREAM.MSG.GET.>", "$JS.API.DIRECT.GET.>", "$JS.API.CONSUMER.INFO.>",
	"$JS.API.CONSUMER.NAMES.>", "$JS.API.CONSUMER.LIST.>", "$JS.FC.>",
}

// readers are the JetStream API calls of the short-lived consumers that
// read a stream (a journal read, a bucket's keys, a watch): made, pulled
// from, deleted. A durable consumer is made the same way; it takes nothing
// from anyone (these streams keep their messages: limits retention), and
// the streams' consumer limits (ReaderIdle) have the server delete it once
// unused, so none is kept.
func readers(streams ...string) []string {
	var out []string
	for _, s := range streams {
		out = append(out, "$JS.API.CONSUMER.CREATE."+s, "$JS.API.CONSUMER.CREATE."+s+".>",
			"$JS.API.CONSUMER.DELETE."+s+".>", "$JS.API.CONSUMER.MSG.NEXT."+s+".>")
	}
	return out
}

// kvStream is the stream of KV bucket b.
func kvStream(b string) string { return "KV_" + b }

// every is each name of bases in every layout up to MaxPartitions, with
// each of pre before it and each of post after it: the role table covers
// every partition a fleet may have (partition.go).
func every(pre []string, bases []string, post ...string) []string {
	if len(pre) == 0 {
		pre = []string{""}
	}
	if len(post) == 0 {
		post = []string{""}
	}
	var out []string
	for _, b := range bases {
		for _, n := range partitionNames(b) {
			for _, a := range pre {
				for _, z := range post {
					out = append(out, a+n+z)
				}
			}
		}
	}
	return out
}

// WorkerRole takes runs and carries them out: it journals them, holds the
// sessions' leases and its heartbeat, asks on the gate, makes agentty's
// streams of one partition when missing (a partitioned fleet's are the
// operator's setup's), takes a request the server gave up on off the
// queue. It may not cancel, delete or purge a stream, update one, delete
// a journal's messages, delete the pool's consumer, or write the config
// bucket (the operator's steering key).
var WorkerRole = Role{
	Publish: concat(jsReads, readers(concat(every(nil, []string{JournalStream}), every([]string{"KV_"}, []string{SessionsBucket, WritersBucket}), []string{kvStream(WorkersBucket), kvStream(ConfigBucket)})...), []string{
		JournalPrefix + ".>", Prefix + ".>", GatePrefix + ".>", runsPrefix + ".>",
		"$KV." + WorkersBucket + ".>",
		"$JS.API.STREAM.CREATE." + JournalStream, "$JS.API.STREAM.CREATE." + RunsStream,
		"$JS.API.STREAM.CREATE." + kvStream(SessionsBucket), "$JS.API.STREAM.CREATE." + kvStream(WritersBucket), "$JS.API.STREAM.CREATE." + kvStream(WorkersBucket),
	}, every([]string{"$KV."}, []string{SessionsBucket, WritersBucket}, ".>"),
		every([]string{"$JS.API.STREAM.MSG.DELETE."}, []string{RunsStream}),
		every([]string{"$JS.API.CONSUMER.CREATE.", "$JS.API.CONSUMER.DURABLE.CREATE.", "$JS.API.CONSUMER.MSG.NEXT.", "$JS.ACK."}, []string{RunsStream}, ".>")),
	Subscribe: concat([]string{"_INBOX.>", AskPrefix + ".>", cancelPrefix + ".>"},
		every([]string{"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES."}, []string{RunsStream}, ".>")),
}

// SubmitRole queues runs, follows them (their events, the journals, the
// queue, the workers' heartbeats) and answers the pauses and questions
// of the runs it submitted (signed with its steering key; steer.go). It
// writes no bucket and makes no consumer on the run queue: it may not take
// runs, cancel them, hold or forge a session's lease, change or delete a
// session's record, or change a stream.
var SubmitRole = Role{
	Publish: concat(jsReads, readers(concat(every(nil, []string{JournalStream}), every([]string{"KV_"}, []string{SessionsBucket, WritersBucket}), []string{kvStream(WorkersBucket)})...), []string{
		runsPrefix + ".>", AskPrefix + ".>",
	}),
	Subscribe: []string{"_INBOX.>", Prefix + ".>", GatePrefix + ".>"},
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
