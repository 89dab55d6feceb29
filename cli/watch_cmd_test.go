package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/console"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/tools"
	"github.com/nats-io/nats.go"
)

// natsServer is an embedded NATS server with JetStream on a free loopback
// port, its store in a temporary folder, for one test.
func natsServer(t testing.TB) *bus.Server {
	t.Helper()
	s, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

// liveBuf is a writer a command writes to while the test reads it.
type liveBuf struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newLiveBuf() *liveBuf { return &liveBuf{changed: make(chan struct{}, 1)} }

func (l *liveBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case l.changed <- struct{}{}:
	default:
	}
	return l.b.Write(p)
}

func (l *liveBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor waits, with a deadline, until cond holds of what was written.
func (l *liveBuf) waitFor(t *testing.T, what string, cond func(string) bool) string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		if s := l.String(); cond(s) {
			return s
		}
		select {
		case <-l.changed:
		case <-deadline:
			t.Fatalf("never saw %s; have:\n%s", what, l.String())
		}
	}
}

// startCLI runs agentty in the background; wait returns its exit code.
func startCLI(ctx context.Context, env map[string]string, stdout, stderr *liveBuf, args ...string) (wait func() int) {
	done := make(chan int, 1)
	go func() {
		done <- Execute(ctx, args, strings.NewReader(""), stdout, stderr, func(k string) string { return env[k] })
	}()
	return func() int {
		select {
		case c := <-done:
			return c
		case <-time.After(60 * time.Second):
			return -1
		}
	}
}

func testEnv(t *testing.T) map[string]string {
	return map[string]string{"AGENTTY_HOME": t.TempDir(), "AGENTTY_CONFIG": filepath.Join(t.TempDir(), "no-config.json")}
}

// journalLines is a session's journal, one event per line: in JetStream on
// the server at url, or with url "" in the folder home.
func journalLines(t *testing.T, home, id, url string) []string {
	t.Helper()
	var b []byte
	var err error
	if url == "" {
		b, err = os.ReadFile(filepath.Join(home, "sessions", id, "events.jsonl"))
	} else {
		b, err = natsJournal(url, id)
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// natsJournal reads a session's journal from JetStream.
func natsJournal(url, id string) ([]byte, error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := bus.OpenJournals(ctx, nc)
	if err != nil {
		return nil, err
	}
	return js.ReadJournal(id)
}

func sessionOf(t *testing.T, stderr string) string {
	t.Helper()
	for _, ln := range strings.Split(stderr, "\n") {
		if id, ok := strings.CutPrefix(ln, "session: "); ok {
			return id
		}
	}
	t.Fatalf("no session line in %q", stderr)
	return ""
}

// subscribe takes every event published on the server, in order.
func subscribe(t *testing.T, url string) *nats.Subscription {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	sub, err := nc.SubscribeSync(bus.Filter(""))
	if err != nil {
		t.Fatal(err)
	}
	sub.SetPendingLimits(-1, -1)
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return sub
}

// nextEvent is the next message of sub and its event.
func nextEvent(t *testing.T, sub *nats.Subscription) (*nats.Msg, engine.Event) {
	t.Helper()
	m, err := sub.NextMsg(30 * time.Second)
	if err != nil {
		t.Fatalf("no event: %v", err)
	}
	ev, err := engine.DecodeEvent(m.Data)
	if err != nil {
		t.Fatalf("%s: %v", m.Subject, err)
	}
	return m, ev
}

func kindOf(t *testing.T, line string) engine.Kind {
	t.Helper()
	var k struct {
		Kind engine.Kind `json:"kind"`
	}
	if err := json.Unmarshal([]byte(line), &k); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return k.Kind
}

// toolScript is n calculator calls, each decided after delay ms, then a
// streamed answer (text deltas).
func toolScript(t *testing.T, n, delay int, slowAt int) string {
	var turns []string
	for i := range n {
		d := delay
		if i == slowAt {
			d = 1500
		}
		turns = append(turns, fmt.Sprintf(`{"tool_calls":[{"id":"call.%d *>","name":"calculator","arguments":{"expression":"%d+1"}}],"delay_ms":%d}`, i, i, d))
	}
	turns = append(turns, `{"answer":"all the sums are done","stream":true}`)
	return writeScript(t, `{"turns":[`+strings.Join(turns, ",")+`]}`)
}

// TestRunPublishesEveryEvent: run --nats publishes every journaled event, in
// the journal's order, byte for byte, on its subject; text deltas too,
// before their decision.
func TestRunPublishesEveryEvent(t *testing.T) {
	srv := natsServer(t)
	sub := subscribe(t, srv.URL())
	env := testEnv(t)
	code, _, errs := runCLI(t, context.Background(), env, "run", "--nats", srv.URL(), "--model", "script:"+toolScript(t, 4, 0, -1), "add them")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(errs, "nats") {
		t.Errorf("a notice about NATS: %s", errs)
	}
	id := sessionOf(t, errs)
	journal := journalLines(t, env["AGENTTY_HOME"], id, srv.URL())
	var got []string
	deltas, decided := 0, false
	for {
		m, ev := nextEvent(t, sub)
		if m.Subject != bus.Subject(ev) || ev.Session != id {
			t.Errorf("event %s %s of session %s on %s", ev.Run, ev.Kind, ev.Session, m.Subject)
		}
		if ev.Kind == engine.KindTextDelta {
			deltas++
			decided = false
			continue
		}
		if ev.Kind == engine.KindDecision && deltas > 0 {
			decided = true
		}
		got = append(got, string(m.Data))
		if ev.Kind == engine.KindRunFinished {
			break
		}
	}
	if strings.Join(got, "\n") != strings.Join(journal, "\n") {
		t.Errorf("published (%d events):\n%s\njournal (%d events):\n%s", len(got), strings.Join(got, "\n"), len(journal), strings.Join(journal, "\n"))
	}
	if deltas == 0 || !decided {
		t.Errorf("%d text deltas published, the last followed by its decision: %v", deltas, decided)
	}
	if !strings.Contains(strings.Join(got, "\n"), `"id":"call.0 *>"`) {
		t.Errorf("the odd call id is not in the events")
	}
}

// TestWatchAcrossTheBoundary: watch --json of a running session prints
// every journaled event once, in the journal's order: what the journal held
// when it started, then the live events.
func TestWatchAcrossTheBoundary(t *testing.T) {
	srv := natsServer(t)
	sub := subscribe(t, srv.URL())
	env := testEnv(t)
	env["AGENTTY_NATS_URL"] = srv.URL()
	// Step 4's decision takes 1.5 s: watch starts when step 3 is done,
	// so the run goes on live after the journal is read.
	script := toolScript(t, 8, 20, 3)
	runOut, runErr := newLiveBuf(), newLiveBuf()
	waitRun := startCLI(context.Background(), env, runOut, runErr, "run", "--model", "script:"+script, "add them")
	for {
		_, ev := nextEvent(t, sub)
		if d, ok := ev.Data.(*engine.StepFinished); ok && ev.Step == 3 && d.ToolCalls == 1 {
			break
		}
	}
	id := sessionOf(t, runErr.String())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errs := newLiveBuf(), newLiveBuf()
	waitWatch := startCLI(ctx, env, out, errs, "watch", id, "--json")
	out.waitFor(t, "run_finished", func(s string) bool { return strings.Contains(s, `"kind":"run_finished"`) })
	cancel()
	if code := waitWatch(); code != 0 {
		t.Errorf("watch: exit %d: %s", code, errs)
	}
	if code := waitRun(); code != 0 {
		t.Fatalf("run: exit %d: %s", code, runErr)
	}
	journal := journalLines(t, env["AGENTTY_HOME"], id, srv.URL())
	var got []string
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for i, ln := range lines {
		if kindOf(t, ln) == engine.KindTextDelta {
			// Live only: a delta comes before its decision.
			if !strings.Contains(strings.Join(lines[i:], "\n"), `"kind":"decision"`) {
				t.Errorf("text delta after the last decision: %s", ln)
			}
			continue
		}
		got = append(got, ln)
	}
	if strings.Join(got, "\n") != strings.Join(journal, "\n") {
		t.Errorf("watch printed (%d events):\n%s\njournal (%d events):\n%s", len(got), strings.Join(got, "\n"), len(journal), strings.Join(journal, "\n"))
	}
	if strings.Contains(errs.String(), "warning") {
		t.Errorf("watch warned: %s", errs)
	}
	// The boundary was crossed: some events came from the journal, the
	// rest live.
	var fromJournal int
	if _, err := fmt.Sscanf(strings.TrimPrefix(errs.String(), "agentty watch: session "+id+": "), "%d events", &fromJournal); err != nil ||
		fromJournal == 0 || fromJournal >= len(journal) {
		t.Errorf("%d of %d events from the journal (%v): %s", fromJournal, len(journal), err, errs)
	}
}

// TestWatchMerge: the live stream repeats the journal from any point on,
// with text deltas between, and only what the journal lacks comes out.
func TestWatchMerge(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ev := func(i int, k engine.Kind) engine.Event {
		return engine.Event{Session: "s", Run: "run-1", Step: i, Kind: k, Time: at.Add(time.Duration(i) * time.Millisecond)}
	}
	delta := func(i int) engine.Event {
		e := ev(i, engine.KindTextDelta)
		e.Time = e.Time.Add(time.Microsecond)
		return e
	}
	// The whole stream: events 0..5, deltas before each decision (2, 5).
	stream := []engine.Event{ev(0, engine.KindRunStarted), ev(1, engine.KindStepStarted), delta(1), ev(2, engine.KindDecision),
		ev(3, engine.KindToolFinished), delta(4), delta(4), ev(5, engine.KindDecision), ev(6, engine.KindRunFinished)}
	journaled := func(n int) []engine.Event { // the first n journaled events
		var out []engine.Event
		for _, e := range stream {
			if e.Kind != engine.KindTextDelta && len(out) < n {
				out = append(out, e)
			}
		}
		return out
	}
	name := func(e engine.Event) string { return fmt.Sprintf("%s%d", e.Kind, e.Step) }
	for j := 0; j <= 7; j++ { // the journal holds j events
		for from := 0; from < len(stream); from++ { // the subscription began before stream[from]
			past := journaled(j)
			// Published after journaled: the subscription cannot have
			// missed an event the journal lacks.
			missed := 0
			for _, e := range stream[:from] {
				if e.Kind != engine.KindTextDelta {
					missed++
				}
			}
			if missed > j {
				continue
			}
			m := console.NewMerge(past)
			var got []string
			for _, e := range past {
				got = append(got, name(e))
			}
			for _, e := range stream[from:] {
				for _, it := range m.Add(e, nil) {
					got = append(got, name(it.Ev))
				}
			}
			// Want: every journaled event once, in order, and the deltas
			// of the decisions the journal lacked.
			var want []string
			for i, e := range stream {
				if e.Kind == engine.KindTextDelta {
					decisionJournaled := false
					for _, p := range past {
						if p.Kind == engine.KindDecision && p.Step == e.Step+1 {
							decisionJournaled = true
						}
					}
					if decisionJournaled || i < from {
						continue
					}
				}
				want = append(want, name(e))
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("journal of %d, subscribed before %d:\n got %v\nwant %v", j, from, got, want)
			}
		}
	}
}

// TestWatchReadable: watch of every session, one readable line per event.
func TestWatchReadable(t *testing.T) {
	srv := natsServer(t)
	env := testEnv(t)
	env["AGENTTY_NATS_URL"] = srv.URL()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errs := newLiveBuf(), newLiveBuf()
	waitWatch := startCLI(ctx, env, out, errs, "watch")
	errs.waitFor(t, "following", func(s string) bool { return strings.Contains(s, "following every session live") })
	code, _, runErrs := runCLI(t, context.Background(), env, "run", "--model", "offline", "what is 17*23?")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, runErrs)
	}
	id := sessionOf(t, runErrs)
	s := out.waitFor(t, "run_finished", func(s string) bool { return strings.Contains(s, "run_finished") })
	cancel()
	if code := waitWatch(); code != 0 {
		t.Errorf("watch: exit %d: %s", code, errs)
	}
	for _, want := range []string{
		" " + id + " run-1 #0 run_started what is 17*23?",
		"tool_finished calculator ok: 17*23 = 391",
		"run_finished answered: ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in:\n%s", want, s)
		}
	}
	for _, ln := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.HasPrefix(ln, "{") || strings.Contains(ln, "text_delta") {
			t.Errorf("not a readable line: %q", ln)
		}
	}
}

func TestWatchUsage(t *testing.T) {
	code, _, errs := runCLI(t, context.Background(), nil, "watch")
	if code != 2 || !strings.Contains(errs, "--nats URL or set AGENTTY_NATS_URL") {
		t.Errorf("no server: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI(t, context.Background(), nil, "watch", "a", "b", "--nats", "nats://127.0.0.1:1")
	if code != 2 {
		t.Errorf("two sessions: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI(t, context.Background(), nil, "watch", "--nats", "nats://u:pw@127.0.0.1:1")
	if code != 1 || !strings.Contains(errs, "127.0.0.1:1") || strings.Contains(errs, ":pw@") {
		t.Errorf("unreachable: exit %d, %q", code, errs)
	}
}

// TestSlowWatcherDoesNotSlowARun: a subscriber stuck on the first event
// does not hold the run back: the run answers, all its steps journaled,
// while that subscriber has taken one event.
func TestSlowWatcherDoesNotSlowARun(t *testing.T) {
	srv := natsServer(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	release := make(chan struct{})
	var mu sync.Mutex
	taken := 0
	if _, err := nc.Subscribe(bus.Filter(""), func(*nats.Msg) {
		mu.Lock()
		taken++
		mu.Unlock()
		<-release
	}); err != nil {
		t.Fatal(err)
	}
	defer close(release)
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	env := testEnv(t)
	const steps = 300
	code, _, errs := runCLI(t, context.Background(), env, "run", "--nats", srv.URL(), "--max-steps", fmt.Sprint(steps+1),
		"--model", "script:"+toolScript(t, steps, 0, -1), "add them")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	mu.Lock()
	n := taken
	mu.Unlock()
	journal := journalLines(t, env["AGENTTY_HOME"], sessionOf(t, errs), srv.URL())
	if n != 1 || len(journal) < 5*steps || kindOf(t, journal[len(journal)-1]) != engine.KindRunFinished {
		t.Errorf("the run finished with %d events journaled while the stuck subscriber had taken %d", len(journal), n)
	}
	if strings.Contains(errs, "nats") {
		t.Errorf("publishing failed: %s", errs)
	}
}

// TestNATSOnlyWhenAsked: without --nats or AGENTTY_NATS_URL nothing
// connects; with the variable, the run connects once and publishes.
func TestNATSOnlyWhenAsked(t *testing.T) {
	srv := natsServer(t)
	conns := func() uint64 {
		v, err := srv.NATS().Varz(nil)
		if err != nil {
			t.Fatal(err)
		}
		return v.TotalConnections
	}
	env := testEnv(t)
	code, out, errs := runCLI(t, context.Background(), env, "run", "--model", "offline", "what is 2+2")
	if code != 0 || !strings.Contains(out, "4") || strings.Contains(errs, "nats") {
		t.Fatalf("without NATS: exit %d, %q, %q", code, out, errs)
	}
	if n := conns(); n != 0 {
		t.Errorf("%d connections without --nats", n)
	}
	sub := subscribe(t, srv.URL()) // connection 1
	env["AGENTTY_NATS_URL"] = srv.URL()
	if code, _, errs = runCLI(t, context.Background(), env, "run", "--model", "offline", "what is 2+2"); code != 0 {
		t.Fatalf("with AGENTTY_NATS_URL: exit %d, %q", code, errs)
	}
	if n := conns(); n != 3 {
		t.Errorf("%d connections, want the subscriber's and the run's two (its journal in JetStream, its publisher)", n)
	}
	if _, ev := nextEvent(t, sub); ev.Kind != engine.KindRunStarted || ev.Session != sessionOf(t, errs) {
		t.Errorf("first event published: %s of %s", ev.Kind, ev.Session)
	}
	// Not reachable: with --nats the sessions live on the server, so
	// nothing can be journaled: the run does not start, and says why.
	code, out, errs = runCLI(t, context.Background(), env, "run", "--nats", "nats://127.0.0.1:1", "--model", "offline", "what is 2+2")
	if code != 1 || out != "" || !strings.Contains(errs, "nats://127.0.0.1:1") {
		t.Errorf("unreachable server: exit %d, %q, %q", code, out, errs)
	}
	code, _, errs = runCLI(t, context.Background(), testEnv(t), "run", "--nats-creds", "x.creds", "--model", "offline", "hi")
	if code != 2 || !strings.Contains(errs, "--nats-creds needs --nats") {
		t.Errorf("creds alone: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI(t, context.Background(), testEnv(t), "run", "--nats", srv.URL(), "--nats-creds", "/nonexistent.creds", "--model", "offline", "hi")
	if code != 2 || !strings.Contains(errs, "/nonexistent.creds") {
		t.Errorf("missing creds file: exit %d, %q", code, errs)
	}
}

// collect reads the next n journaled events (text deltas left out) of
// session id from sub, as they came.
func collect(t *testing.T, sub *nats.Subscription, id string, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		m, ev := nextEvent(t, sub)
		if ev.Session != id {
			t.Fatalf("an event of session %s, want %s", ev.Session, id)
		}
		if ev.Kind != engine.KindTextDelta {
			got = append(got, string(m.Data))
		}
	}
	return got
}

// TestConsoleAndWorkflowPublish: the console's runs (its backend's sink)
// and a workflow run publish what they journal, in order.
func TestConsoleAndWorkflowPublish(t *testing.T) {
	srv := natsServer(t)
	sub := subscribe(t, srv.URL())
	env := agentEnv(t)
	env["AGENTTY_NATS_URL"] = srv.URL()
	getenv := func(k string) string { return env[k] }

	o := app.Options{Model: "offline", MaxSteps: 5, Workspace: t.TempDir()}
	st, err := app.Build(context.Background(), o, nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bus == nil {
		t.Fatalf("no NATS sink with AGENTTY_NATS_URL set; notices %v", st.Notices)
	}
	home := t.TempDir()
	store, err := sessions.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	con := &console.Console{Store: store, Setup: st, Opts: o, Getenv: getenv}
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	b := con.Open(j, engine.NewSession(j.ID))
	for range b.Start(context.Background(), "what is 17*23?") {
	}
	b.Close()
	st.Close()
	want := journalLines(t, home, j.ID, "")
	if got := collect(t, sub, j.ID, len(want)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the console published:\n%s\nit journaled:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	code, _, errs := runCLI(t, context.Background(), env, "workflow", "run", filepath.Join("..", "examples", "workflows", "arithmetic.yaml"), "--model", "offline")
	if code != 0 {
		t.Fatalf("workflow: exit %d: %s", code, errs)
	}
	id := sessionOf(t, errs)
	want = journalLines(t, env["AGENTTY_HOME"], id, env["AGENTTY_NATS_URL"])
	got := collect(t, sub, id, len(want))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the workflow published:\n%s\nit journaled:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(strings.Join(got, "\n"), `"kind":"workflow_finished"`) {
		t.Errorf("no workflow_finished published")
	}
}

// remoteRun is a session run as a worker runs one: journaled in JetStream,
// each event published once written, its gate asking over NATS.
type remoteRun struct {
	nc      *nats.Conn
	journal *sessions.Journal
	sess    *engine.Session
}

func newRemoteRun(t *testing.T, url, home string) *remoteRun {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := bus.OpenJournals(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	j, err := sessions.OpenWith(home, js).Create()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return &remoteRun{nc: nc, journal: j, sess: engine.NewSession(j.ID)}
}

// start runs task with the offline model and the built-in tools, its gate
// in step mode when step is set; the result comes on the channel.
func (r *remoteRun) start(t *testing.T, task string, step bool) <-chan engine.Result {
	t.Helper()
	reg, err := engine.NewRegistry(tools.Builtins()...)
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Config{Model: offline.Model{}, ModelName: "offline", Tools: reg,
		Gate: bus.NewRemoteGate(r.nc, r.journal.ID, step, 0)})
	done := make(chan engine.Result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		done <- e.Run(ctx, r.sess, task, engine.Sinks{r.journal, bus.NewSink(r.nc)})
	}()
	return done
}

func result(t *testing.T, done <-chan engine.Result) engine.Result {
	t.Helper()
	select {
	case res := <-done:
		return res
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end")
		return engine.Result{}
	}
}

// TestWatchConsoleInTmux: `agentty watch ID` opens the console on a
// session whose runs go on elsewhere: its journal, then a run submitted in
// step mode, whose pauses the console shows in the pause bar and answers
// with enter (step) and esc (abort); a task typed is refused.
func TestWatchConsoleInTmux(t *testing.T) {
	tm := newTmux(t)
	srv := natsServer(t)
	home := t.TempDir()
	r := newRemoteRun(t, srv.URL(), home)
	if res := result(t, r.start(t, "what is 17*23?", false)); res.StopReason != engine.StopAnswered {
		t.Fatalf("first run: %s (%v)", res.StopReason, res.Err)
	}

	tm.start(home, "watch", r.journal.ID, "--nats", srv.URL())
	tm.wait("the journal's run and the read-only input", func(s string) bool {
		return strings.Contains(chatPane(s), "17*23 = 391") && strings.Contains(s, "watching "+r.journal.ID+": read-only")
	})
	tm.keys("what is 2+2?", "Enter")
	tm.wait("the task refused", func(s string) bool {
		return strings.Contains(s, "watching (read-only) · watching "+r.journal.ID+": read-only")
	})
	tm.keys("C-u")

	done := r.start(t, "what is 6*7?", true)
	tm.waitArmed("the pause before deciding", "Paused before deciding (step 3)")
	tm.keys("Enter")
	tm.waitArmed("the pause before the call", `Paused before calling calculator {"expression":"6*7"}`)
	tm.keys("Enter")
	tm.waitArmed("the pause before the answer", "Paused before deciding (step 4)")
	tm.keys("Enter")
	if res := result(t, done); res.StopReason != engine.StopAnswered || !strings.Contains(res.Answer, "42") {
		t.Fatalf("stepped run: %s %q (%v)", res.StopReason, res.Answer, res.Err)
	}
	tm.wait("the answer in the watching console", func(s string) bool {
		return strings.Contains(chatPane(s), "6*7 = 42") && strings.Contains(s, "step 4 · idle")
	})

	done = r.start(t, "what is 5*5?", true)
	tm.waitArmed("the next run's pause", "Paused before deciding (step 5)")
	tm.keys("Escape")
	if res := result(t, done); res.StopReason != engine.StopCancelled {
		t.Fatalf("aborted run: %s (%v)", res.StopReason, res.Err)
	}
	tm.wait("the aborted run in the timeline", func(s string) bool {
		return strings.Contains(timelinePane(s), "cancelled") && strings.Contains(s, "idle")
	})
	tm.keys("C-d")
	tm.waitGone()
}

// TestWatchJournalFromNATS: watch reads a session's journal from the store
// --nats names, says where it looked when the session is not there (not the
// local folder), and closes the store's connection either way.
func TestWatchJournalFromNATS(t *testing.T) {
	s := natsServer(t)
	home := t.TempDir()
	o := app.Options{NATS: s.URL(), DataDir: home}
	noEnv := func(string) string { return "" }
	store, err := o.Store(noEnv)
	if err != nil {
		t.Fatal(err)
	}
	j, err := store.CreateID("there")
	if err != nil {
		t.Fatal(err)
	}
	ev := engine.Event{Session: "there", Run: "run-1", Kind: engine.KindRunStarted, Time: time.Now(), Data: &engine.RunStarted{Task: "hi"}}
	if err := j.Emit(ev); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	store.Close()
	clients := func(want int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for s.NATS().NumClients() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections to the server, want %d: watch's store was left open", s.NATS().NumClients(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	clients(0)
	for _, tc := range []struct {
		id, warning string
		events      int
	}{
		{"there", "", 1},
		{"elsewhere", "session elsewhere is not in NATS JetStream stream AGENTTY_JOURNAL at " + s.URL() + "; following its live events only", 0},
	} {
		var warnings []string
		past := watchJournal(tc.id, o, noEnv, func(format string, a ...any) { warnings = append(warnings, fmt.Sprintf(format, a...)) })
		if len(past) != tc.events {
			t.Errorf("watch %s: %d events from the journal, want %d", tc.id, len(past), tc.events)
		}
		if got := strings.Join(warnings, "\n"); got != tc.warning {
			t.Errorf("watch %s: warnings %q, want %q", tc.id, got, tc.warning)
		}
		clients(0)
	}
}
