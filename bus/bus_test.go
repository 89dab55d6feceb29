package bus_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startServer runs an embedded server on a free loopback port with its
// store in a temporary folder, stopped when the test ends.
func startServer(t testing.TB) *bus.Server {
	t.Helper()
	s, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func TestToken(t *testing.T) {
	tests := []struct{ in, want string }{
		{"run-1", "run-1"},
		{"run-1/3/call_0", "run-1/3/call_0"},
		{"", "_"},
		{"a.b", "a_b"},
		{"call*1>2", "call_1_2"},
		{"tab\there new\nline", "tab_here_new_line"},
		{"nbsp\u00a0ideo\u3000", "nbsp_ideo_"},
		{"ctl\x00\x7f", "ctl__"},
		{"ünïcødé", "ünïcødé"},
		{"bad\xffbyte", "bad\xffbyte"},
	}
	for _, tt := range tests {
		if got := bus.Token(tt.in); got != tt.want {
			t.Errorf("Token(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	ev := engine.Event{Session: "s1", Run: "run-1/2/call.x y", Kind: engine.KindToolFinished}
	if got, want := bus.Subject(ev), "agentty.events.s1.run-1/2/call_x_y.tool_finished"; got != want {
		t.Errorf("Subject = %q, want %q", got, want)
	}
	if got := bus.Filter(""); got != "agentty.events.>" {
		t.Errorf("Filter(\"\") = %q", got)
	}
	if got := bus.Filter("a.b"); got != "agentty.events.a_b.>" {
		t.Errorf("Filter(a.b) = %q", got)
	}
}

func TestRedact(t *testing.T) {
	got := bus.Redact("nats://alice:s3cret@h1:4222, tls://tok3n@h2:4443,nats://h3")
	if strings.Contains(got, "s3cret") || strings.Contains(got, "tok3n") || !strings.Contains(got, "h1:4222") || !strings.Contains(got, "nats://h3") {
		t.Errorf("Redact = %q", got)
	}
}

// TestSinkPublishes: each event on its subject, in order, its payload the
// event's JSON.
func TestSinkPublishes(t *testing.T) {
	s := startServer(t)
	sub, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ch := make(chan *nats.Msg, 16)
	if _, err := sub.ChanSubscribe(bus.Filter("sess"), ch); err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	nc, err := bus.Connect(bus.Config{URL: s.URL(), Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sink := bus.NewSink(nc)
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	evs := []engine.Event{
		{V: 1, Session: "sess", Run: "run-1", Kind: engine.KindRunStarted, Time: now, Data: &engine.RunStarted{Task: "go", MaxSteps: 3}},
		{V: 1, Session: "other", Run: "run-1", Kind: engine.KindRunStarted, Time: now},
		{V: 1, Session: "sess", Run: "run-1/1/c.1", Step: 1, Kind: engine.KindToolFinished, Time: now, Data: &engine.ToolFinished{ID: "c.1", Name: "echo", Status: engine.ToolOK, Result: "ok"}},
		{V: 1, Session: "sess", Run: "run-1", Step: 2, Kind: engine.KindRunFinished, Time: now, Data: &engine.RunFinished{StopReason: engine.StopAnswered, Answer: "done"}},
	}
	for _, ev := range evs {
		if err := sink.Emit(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 2, 3} {
		var m *nats.Msg
		select {
		case m = <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("event %d never came", i)
		}
		want, _ := evs[i].AppendJSON(nil)
		if m.Subject != bus.Subject(evs[i]) || string(m.Data) != string(want) {
			t.Errorf("message %d: %s %s; want %s %s", i, m.Subject, m.Data, bus.Subject(evs[i]), want)
		}
	}
	select {
	case m := <-ch:
		t.Errorf("unexpected message %s", m.Subject)
	default:
	}
}

// TestSinkNeverFails: a closed connection makes Emit count, not fail.
func TestSinkNeverFails(t *testing.T) {
	s := startServer(t)
	nc, err := bus.Connect(bus.Config{URL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	sink := bus.NewSink(nc)
	nc.Close()
	for range 3 {
		if err := sink.Emit(engine.Event{Session: "s", Run: "run-1", Kind: engine.KindStepStarted}); err != nil {
			t.Fatalf("Emit = %v, want nil", err)
		}
	}
	err = sink.Err()
	if err == nil || !strings.Contains(err.Error(), "3 event(s) were not published") || !errors.Is(err, nats.ErrConnectionClosed) {
		t.Errorf("Err = %v", err)
	}
}

func TestConnectErrors(t *testing.T) {
	_, err := bus.Connect(bus.Config{URL: "nats://127.0.0.1:1", Creds: "/nonexistent/user.creds"})
	if !errors.As(err, new(bus.UsageError)) || !strings.Contains(err.Error(), "/nonexistent/user.creds") {
		t.Errorf("missing creds: %v", err)
	}
	_, err = bus.Connect(bus.Config{URL: "nats://bob:hunter2@127.0.0.1:1"})
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "127.0.0.1:1") ||
		!strings.Contains(err.Error(), "agentty serve") {
		t.Errorf("unreachable server: %v; want where, without the password, and how to start one", err)
	}
	// The next good connection is not held back by the ones that failed.
	srv := startServer(t)
	nc, err := bus.Connect(bus.Config{URL: srv.URL()})
	if err != nil {
		t.Fatalf("connecting to a server that is there: %v", err)
	}
	nc.Close()
}

// TestServer: JetStream is on, its store in the folder given, and Shutdown
// stops it.
func TestServer(t *testing.T) {
	dir := t.TempDir()
	s, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL(), "nats://127.0.0.1:") || strings.HasSuffix(s.URL(), ":0") {
		t.Errorf("URL = %q", s.URL())
	}
	nc, err := nats.Connect(s.URL(), nats.MaxReconnects(0))
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "t.x", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	s.Shutdown()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the client was not disconnected by Shutdown")
	}
	// The stream is on disk: a server on the same store has the message.
	s2, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Shutdown()
	nc2, err := nats.Connect(s2.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc2.Close()
	js2, _ := jetstream.New(nc2)
	st, err := js2.Stream(ctx, "T")
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(ctx, 1)
	if err != nil || string(m.Data) != "hello" {
		t.Errorf("after a restart: %v %v", m, err)
	}
}

func TestServerBadListen(t *testing.T) {
	for _, l := range []string{"nohost", "127.0.0.1:x", "127.0.0.1:70000"} {
		if _, err := bus.StartServer(bus.ServerConfig{Listen: l, StoreDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), l) {
			t.Errorf("--listen %s: %v", l, err)
		}
	}
	dir := t.TempDir()
	s, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	busy := strings.TrimPrefix(s.URL(), "nats://")
	if s2, err := bus.StartServer(bus.ServerConfig{Listen: busy, StoreDir: t.TempDir()}); err == nil {
		s2.Shutdown()
		t.Errorf("a second server on %s started", busy)
	}
	if s2, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: dir}); err == nil || !strings.Contains(err.Error(), "in use by another server") {
		if s2 != nil {
			s2.Shutdown()
		}
		t.Errorf("a second server on the same store: %v", err)
	}
	s.Shutdown()
	s3, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: dir})
	if err != nil {
		t.Fatalf("the store after its server stopped: %v", err)
	}
	s3.Shutdown()
}
