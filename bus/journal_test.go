package bus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/engine/script"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/tools"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// openJournals connects to the server at url and opens the sessions kept there.
func openJournals(t testing.TB, url string, opts ...nats.Option) (*bus.Journals, *nats.Conn) {
	t.Helper()
	nc, err := bus.Connect(bus.Config{URL: url, Name: "journal test"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	j, err := bus.OpenJournals(context.Background(), nc)
	if err != nil {
		t.Fatal(err)
	}
	return j, nc
}

// modes runs f on the stream OpenJournals makes ("per-line": each line
// published once the one before it is acknowledged) and on one made
// beforehand that takes atomic batches ("atomic": a flush's lines in one
// batch).
func modes(t *testing.T, f func(t *testing.T, atomic bool)) {
	t.Run("per-line", func(t *testing.T) { f(t, false) })
	t.Run("atomic", func(t *testing.T) { f(t, true) })
}

// journalServer starts a server; with atomic, its journal stream is made
// beforehand, taking atomic batches.
func journalServer(t testing.TB, atomic bool) *bus.Server {
	t.Helper()
	s := startServer(t)
	preCreate(t, s.URL(), atomic)
	return s
}

// preCreate makes the journal stream as an operator would, taking atomic
// batches; without atomic it does nothing (OpenJournals makes it).
func preCreate(t testing.TB, url string, atomic bool) {
	t.Helper()
	if !atomic {
		return
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: bus.JournalStream, Subjects: []string{"agentty.journal.>"}, Storage: jetstream.FileStorage,
		AllowDirect: true, AllowAtomicPublish: true,
	}); err != nil {
		t.Fatal(err)
	}
}

func scriptEngine(t testing.TB, turns string) *engine.Engine {
	t.Helper()
	m, err := script.Parse("test", []byte(`{"turns":[`+turns+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	return engine.New(engine.Config{Model: m, Tools: enginetest.Registry(t, tools.Builtins()...), ModelName: "script"})
}

const rememberTurns = `{"tool_calls":[{"name":"remember","arguments":{"key":"name","value":"Ada"}},{"name":"calculator","arguments":{"expression":"6*7"}}]},
	{"tool_calls":[{"name":"clock"}]},{"answer":"done"}`

// journaled runs task in a new session of store, and returns the session's
// id and what the run emitted.
func journaled(t *testing.T, store *sessions.Store, e *engine.Engine, task string) (string, *enginetest.Recorder) {
	t.Helper()
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	rec := &enginetest.Recorder{}
	if res := e.Run(context.Background(), engine.NewSession(j.ID), task, engine.Sinks{j, rec}); res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %s %v", res.StopReason, res.Err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return j.ID, rec
}

// sameEvents fails unless got holds the events of want that are journaled
// (all but text deltas), encoded alike.
func sameEvents(t *testing.T, got []engine.Event, want []engine.Event) {
	t.Helper()
	var g, w bytes.Buffer
	for _, ev := range got {
		b, _ := ev.AppendJSON(nil)
		g.Write(append(b, '\n'))
	}
	for _, ev := range want {
		if ev.Kind != engine.KindTextDelta {
			b, _ := ev.AppendJSON(nil)
			w.Write(append(b, '\n'))
		}
	}
	if g.String() != w.String() {
		t.Errorf("journal differs from the run:\n got %s\nwant %s", g.String(), w.String())
	}
}

// TestJournalsStore: the Store's whole life on JetStream.
func TestJournalsStore(t *testing.T) { modes(t, testJournalsStore) }

func testJournalsStore(t *testing.T, atomic bool) {
	srv := journalServer(t, atomic)
	journals, nc := openJournals(t, srv.URL())
	if got := journals.Where(); got != "NATS JetStream stream AGENTTY_JOURNAL at "+srv.URL() {
		t.Errorf("Where = %q", got)
	}
	store := sessions.OpenWith(t.TempDir(), journals)
	id, rec := journaled(t, store, scriptEngine(t, rememberTurns), "remember my name")

	list, err := store.List()
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].Title != "remember my name" || list[0].Err != nil || list[0].Runs != 1 || list[0].LastStep != 3 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	m, err := store.Meta(id)
	if err != nil || m.Model != "script" || m.Interrupted {
		t.Errorf("Meta = %+v, %v", m, err)
	}
	l, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, l.Events, rec.Events())
	if l.Session.Steps != 3 || len(l.Session.Memory()) != 1 || l.Session.Interrupted() {
		t.Errorf("loaded: steps %d, memory %v, interrupted %v", l.Session.Steps, l.Session.Memory(), l.Session.Interrupted())
	}

	// Fork, and the fork continued.
	fork, err := store.Fork(id, 1)
	if err != nil {
		t.Fatal(err)
	}
	fj, fl, err := store.OpenWriter(fork)
	if err != nil {
		t.Fatal(err)
	}
	if fl.Session.Steps != 1 || !fl.Session.Interrupted() || !strings.Contains(fl.Meta.Title, "fork of "+id) {
		t.Errorf("fork: steps %d, interrupted %v, title %q", fl.Session.Steps, fl.Session.Interrupted(), fl.Meta.Title)
	}
	if res := scriptEngine(t, rememberTurns).Continue(context.Background(), fl.Session, fj); res.StopReason != engine.StopAnswered || res.Answer != "done" {
		t.Errorf("continued fork: %+v", res)
	}
	fj.Close()
	if l, err := store.Load(fork); err != nil || l.Session.Steps != 3 || l.Session.Interrupted() {
		t.Errorf("fork after its run: %v", err)
	}

	var md bytes.Buffer
	if err := store.Export(id, "md", &md); err != nil || !strings.Contains(md.String(), "`calculator` → ok: `6*7 = 42`") {
		t.Errorf("export: %v\n%s", err, md.String())
	}
	if err := store.Rename(id, "Ada's name"); err != nil {
		t.Fatal(err)
	}
	if m, err := store.Meta(id); err != nil || m.Title != "Ada's name" {
		t.Errorf("after rename: %+v, %v", m, err)
	}

	// A finished session takes a second run.
	j, l, err := store.OpenWriter(id)
	if err != nil {
		t.Fatal(err)
	}
	if res := scriptEngine(t, `{"answer":"again"}`).Run(context.Background(), l.Session, "and again", j); res.StopReason != engine.StopAnswered {
		t.Fatal(res.Err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := store.Load(id)
	if err != nil || l2.Session.Runs != 2 || l2.Meta.Runs != 2 || l2.Meta.Title != "Ada's name" {
		t.Errorf("after a second run: %v, runs %d, meta %+v", err, l2.Session.Runs, l2.Meta)
	}
	j, rl, readOnly, err := store.Resume(id)
	if err != nil || j == nil || readOnly != "" || rl.Session.Runs != 2 {
		t.Errorf("Resume: %v, %q", err, readOnly)
	}
	j.Close()

	// A journal whose meta was never written is listed all the same.
	js, _ := jetstream.New(nc)
	first, _ := l.Events[0].AppendJSON(nil)
	if _, err := js.Publish(context.Background(), "agentty.journal.nometa", first); err != nil {
		t.Fatal(err)
	}
	if list, err := store.List(); err != nil || len(list) != 3 {
		t.Errorf("List with a session without meta: %+v, %v", list, err)
	}

	if err := store.Remove(id); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Load(id); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("Load after rm: %v, want ErrNotFound", err)
	}
	if err := store.Remove(id); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("rm twice: %v, want ErrNotFound", err)
	}
	if _, err := store.Meta("nope"); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("Meta of nothing: %v", err)
	}
	if _, _, err := store.OpenWriter("nope"); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("OpenWriter of nothing: %v", err)
	}
	if list, err := store.List(); err != nil || len(list) != 2 {
		t.Errorf("List after rm: %+v, %v", list, err)
	}
	if _, err := journals.Lock("a b", true); err == nil || !strings.Contains(err.Error(), "letters, digits") {
		t.Errorf("an id with a space: %v", err)
	}
	if _, err := journals.Lock(fork, true); err == nil {
		t.Errorf("create with a taken id was accepted")
	}
}

// TestJournalsOneWriter: a second writer of a session is refused when it
// opens it (the first holds the lease), as the local lock does; and a
// writer whose lease ran out (a process stalled past LeaseTTL) while
// another took the session is refused by the server at its next write,
// leaving nothing.
func TestJournalsOneWriter(t *testing.T) { modes(t, testJournalsOneWriter) }

func testJournalsOneWriter(t *testing.T, atomic bool) {
	srv := journalServer(t, atomic)
	journals, nc := openJournals(t, srv.URL())
	store := sessions.OpenWith(t.TempDir(), journals)
	id, _ := journaled(t, store, scriptEngine(t, rememberTurns), "remember my name")

	stale, l1, err := store.OpenWriter(id)
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close()
	if _, _, err := store.OpenWriter(id); !errors.Is(err, sessions.ErrLocked) || !strings.Contains(err.Error(), "is writing it") {
		t.Fatalf("a second writer while the first holds the session: %v, want ErrLocked saying who writes", err)
	}
	if _, _, ro, err := store.Resume(id); err != nil || ro == "" {
		t.Errorf("resume of a session being written: %q %v, want it read-only", ro, err)
	}
	if err := store.Rename(id, "renamed"); !errors.Is(err, sessions.ErrLocked) {
		t.Errorf("rename of a session being written: %v, want ErrLocked", err)
	}
	if err := store.Remove(id); !errors.Is(err, sessions.ErrLocked) {
		t.Errorf("rm of a session being written: %v, want ErrLocked", err)
	}
	// The first writer's lease runs out (as if it stalled) and another
	// takes the session and writes.
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(context.Background(), bus.WritersBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	j2, l2, err := store.OpenWriter(id)
	if err != nil {
		t.Fatal(err)
	}
	rec := &enginetest.Recorder{}
	if res := scriptEngine(t, `{"answer":"second"}`).Run(context.Background(), l2.Session, "second", engine.Sinks{j2, rec}); res.StopReason != engine.StopAnswered {
		t.Fatal(res.Err)
	}
	j2.Close()
	res := scriptEngine(t, `{"answer":"stale"}`).Run(context.Background(), l1.Session, "stale", stale)
	if res.StopReason != engine.StopError || !errors.Is(res.Err, sessions.ErrLocked) || !strings.Contains(res.Err.Error(), "written by another agentty since this one opened it") {
		t.Errorf("the stale writer: %s %v, want an error wrapping ErrLocked", res.StopReason, res.Err)
	}
	if err := stale.Flush(); !errors.Is(err, sessions.ErrLocked) {
		t.Errorf("the stale writer, again: %v", err)
	}
	l, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	want := append(l2.Events, rec.Events()...)
	sameEvents(t, l.Events, want)
}

// restartable is a server that a test stops and starts again on the same
// port and store.
type restartable struct {
	t      *testing.T
	listen string
	dir    string
	srv    *bus.Server
}

func newRestartable(t *testing.T) *restartable {
	r := &restartable{t: t, listen: "127.0.0.1:0", dir: t.TempDir()}
	r.start()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(r.srv.URL(), "nats://"))
	r.listen = "127.0.0.1:" + port
	t.Cleanup(func() {
		if r.srv != nil {
			r.srv.Shutdown()
		}
	})
	return r
}

func (r *restartable) start() {
	s, err := bus.StartServer(bus.ServerConfig{Listen: r.listen, StoreDir: r.dir})
	if err != nil {
		r.t.Error(err)
		return
	}
	r.srv = s
}

// buffered is what nc holds for a server it is reconnecting to.
func buffered(nc *nats.Conn) int {
	n, _ := nc.Buffered()
	return n
}

// TestJournalsSurviveARestart: the server is stopped while the model
// decides and started again (same port, same store) once the journal is
// waiting to write; the run completes and its journal is whole, with no
// line twice.
func TestJournalsSurviveARestart(t *testing.T) { modes(t, testJournalsSurviveARestart) }

func testJournalsSurviveARestart(t *testing.T, atomic bool) {
	r := newRestartable(t)
	preCreate(t, r.srv.URL(), atomic)
	down := make(chan struct{}, 1)
	journals, nc := openJournals(t, r.srv.URL(), nats.ReconnectWait(20*time.Millisecond),
		nats.DisconnectErrHandler(func(*nats.Conn, error) {
			select {
			case down <- struct{}{}:
			default:
			}
		}))
	store := sessions.OpenWith(t.TempDir(), journals)
	restarted := make(chan struct{})
	args := json.RawMessage(`{"text":"x"}`)
	model := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		switch req.Turn {
		case 2:
			r.srv.Shutdown()
			r.srv = nil
			<-down
			go func() {
				// Started again only once the journal has a line waiting.
				defer close(restarted)
				for deadline := time.Now().Add(time.Minute); buffered(nc) == 0; time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Error("the journal wrote nothing while the server was down")
						return
					}
				}
				r.start()
			}()
		case 4:
			return engine.Decision{Text: "done"}, nil
		}
		return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "c", Name: "echo", Args: args}}}, nil
	})
	e := engine.New(engine.Config{Model: model, Tools: enginetest.Registry(t, enginetest.EchoTool())})
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	rec := &enginetest.Recorder{}
	res := e.Run(context.Background(), engine.NewSession(j.ID), "go", engine.Sinks{j, rec})
	<-restarted
	if res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %s %v", res.StopReason, res.Err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := store.Load(j.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, l.Events, rec.Events())
}

// TestJournalsCorruptMessage: garbage published on a journal's subject is
// a CorruptError at its line, with what comes before it loaded.
func TestJournalsCorruptMessage(t *testing.T) { modes(t, testJournalsCorruptMessage) }

func testJournalsCorruptMessage(t *testing.T, atomic bool) {
	srv := journalServer(t, atomic)
	journals, nc := openJournals(t, srv.URL())
	store := sessions.OpenWith(t.TempDir(), journals)
	id, rec := journaled(t, store, scriptEngine(t, rememberTurns), "remember my name")
	js, _ := jetstream.New(nc)
	for _, data := range []string{"{not json", `{"v":1}`} {
		if _, err := js.Publish(context.Background(), "agentty.journal."+id, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := store.Load(id)
	var corrupt *sessions.CorruptError
	if !errors.As(err, &corrupt) {
		t.Fatalf("Load: %v, want a CorruptError", err)
	}
	n := len(l.Events)
	if corrupt.Line != n+1 || !strings.Contains(corrupt.Error(), "session "+id) {
		t.Errorf("corrupt at line %d (%v), want %d", corrupt.Line, corrupt, n+1)
	}
	sameEvents(t, l.Events, rec.Events())
}

// TestJournalsNeedJetStream: a server without JetStream is named, with
// what to do.
func TestJournalsNeedJetStream(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_, err = bus.OpenJournals(context.Background(), nc)
	if err == nil || !strings.Contains(err.Error(), "the NATS server at "+ns.ClientURL()+" has no JetStream: start it with -js, or use agentty serve") {
		t.Errorf("OpenJournals without JetStream: %v", err)
	}
}

// TestJournalsKeepAnOperatorsStream: a stream made beforehand is used as
// it is.
func TestJournalsKeepAnOperatorsStream(t *testing.T) {
	srv := startServer(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	cfg := jetstream.StreamConfig{Name: bus.JournalStream, Subjects: []string{"agentty.journal.>"}, Storage: jetstream.FileStorage, Description: "the operator's", MaxAge: time.Hour}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	journals, _ := openJournals(t, srv.URL())
	store := sessions.OpenWith(t.TempDir(), journals)
	id, _ := journaled(t, store, scriptEngine(t, `{"answer":"ok"}`), "hi")
	if _, err := store.Load(id); err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, bus.JournalStream)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CachedInfo().Config; got.Description != "the operator's" || got.MaxAge != time.Hour || got.AllowDirect {
		t.Errorf("the operator's stream was changed: %+v", got)
	}
}

// unsyncedServer runs a server with JetStream's default durability (no
// sync on every write), to fill a journal quickly; it returns its URL.
func unsyncedServer(t testing.TB) string {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	return ns.ClientURL()
}

// slowLink dials connections whose every read brings 4 KiB at most and
// takes a millisecond at least: a remote link, on which a long journal
// takes a while to come.
type slowLink struct{}

func (slowLink) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return slowConn{c}, nil
}

type slowConn struct{ net.Conn }

func (c slowConn) Read(p []byte) (int, error) {
	time.Sleep(time.Millisecond) // the link's pace, not a wait for something
	return c.Conn.Read(p[:min(len(p), 4096)])
}

// TestJournalsReadALongJournal: a journal that takes far longer to read
// than ReadIdle (20,000 lines, about 3 MB on the wire, over a link of 4
// KiB a millisecond at best: 0.7 s at least) is read whole, in order,
// once: the idle bound is on the wait for each message, not on the read.
func TestJournalsReadALongJournal(t *testing.T) {
	url := unsyncedServer(t)
	const idle = 100 * time.Millisecond
	journals, _ := openJournals(t, url, nats.SetCustomDialer(slowLink{}))
	journals.ReadIdle = idle
	fill, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer fill.Close()
	js, _ := jetstream.New(fill)
	const n = 20000
	var want bytes.Buffer
	for i := range n {
		line := fmt.Sprintf(`{"n":%d}`, i)
		want.WriteString(line + "\n")
		if _, err := js.PublishAsync("agentty.journal.long", []byte(line)); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 { // another session's, between
			if _, err := js.PublishAsync("agentty.journal.other", []byte(line)); err != nil {
				t.Fatal(err)
			}
		}
		if i%1000 == 999 {
			// Bound what awaits an ack: past the client's limit (4,000) a
			// publish fails as stalled, on a machine that is busy.
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(2 * time.Minute):
				t.Fatal("the journal was not stored")
			}
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(2 * time.Minute):
		t.Fatal("the journal was not stored")
	}
	start := time.Now()
	got, err := journals.ReadJournal("long")
	if err != nil {
		t.Fatalf("ReadJournal of %d lines, waiting %v for each at most: %v", n, idle, err)
	}
	t.Logf("%d lines read in %v, each waited for %v at most", n, time.Since(start), idle)
	if !bytes.Equal(got, want.Bytes()) {
		gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want.Bytes(), []byte("\n"))
		for i := range min(len(gl), len(wl)) {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("line %d is %s, want %s (%d lines, want %d)", i+1, gl[i], wl[i], len(gl)-1, len(wl)-1)
			}
		}
		t.Fatalf("%d lines read, want %d", len(gl)-1, len(wl)-1)
	}
}

// TestJournalsAppendWithoutTrailingNewline: a last line without its
// newline is stored whole, as if it had one.
func TestJournalsAppendWithoutTrailingNewline(t *testing.T) {
	modes(t, func(t *testing.T, atomic bool) {
		journals, _ := openJournals(t, journalServer(t, atomic).URL())
		w, err := journals.Lock("nonl", true)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for _, lines := range []string{`{"a":1}` + "\n" + `{"b":22}`, `{"c":333}`} {
			if err := w.Append([]byte(lines), true); err != nil {
				t.Fatalf("Append(%q): %v", lines, err)
			}
		}
		got, err := journals.ReadJournal("nonl")
		if want := `{"a":1}` + "\n" + `{"b":22}` + "\n" + `{"c":333}` + "\n"; err != nil || string(got) != want {
			t.Errorf("journal %q (%v), want %q", got, err, want)
		}
	})
}

// One Append's lines go packed into as few messages as fit them: a step of
// seven lines is one message, and lines past the size of one message go in
// the next; the journal reads back as the lines were, and its last line is
// the last event.
func TestJournalPacksAStep(t *testing.T) {
	srv := startServer(t)
	j, nc := openJournals(t, srv.URL())
	w, err := j.Lock("0mxpacked001", true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var want []byte
	next := 0
	step := func(n, size int) []byte {
		var b []byte
		for range n {
			b = fmt.Appendf(b, `{"i":%d,"pad":"%s"}`+"\n", next, strings.Repeat("x", size))
			next++
		}
		return b
	}
	for _, lines := range [][]byte{step(7, 10), step(3, 200_000), step(1, 5)} {
		if err := w.Append(lines, true); err != nil {
			t.Fatal(err)
		}
		want = append(want, lines...)
	}
	got, err := j.ReadJournal("0mxpacked001")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(want))
	}
	js, _ := jetstream.New(nc)
	st, _ := js.Stream(context.Background(), bus.JournalStream)
	info, _ := st.Info(context.Background(), jetstream.WithSubjectFilter(bus.JournalPrefix+".0mxpacked001"))
	// 7 small lines: one message; 3 of 200 kB: three (one fits in 256 KiB);
	// 1: one.
	if n := info.State.Msgs; n != 5 {
		t.Errorf("%d messages for 11 lines in 3 appends", n)
	}
	last, err := j.LastLine("0mxpacked001")
	if err != nil || !strings.HasPrefix(string(last), `{"i":10,`) {
		t.Errorf("last line %q (%v)", last, err)
	}
}
