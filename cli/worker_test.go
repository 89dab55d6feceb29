package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// queueScript is a run of turns steps, each reading a file (an isolated
// tool: a call a dead worker started is not run again) after delay ms.
func queueScript(t *testing.T, turns, delay int) string {
	var sb strings.Builder
	sb.WriteString(`{"turns":[`)
	for i := range turns {
		fmt.Fprintf(&sb, `{"delay_ms":%d,"tool_calls":[{"name":"read_file","arguments":{"path":"note.txt"}},{"name":"calculator","arguments":{"expression":"%d*2"}}]},`, delay, i)
	}
	sb.WriteString(`{"answer":"all done"}]}`)
	return writeScript(t, sb.String())
}

// startWorker runs `agentty worker` as a child process.
func startWorker(t *testing.T, url, script string, extra ...string) *exec.Cmd {
	t.Helper()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "note.txt"), []byte("hello"), 0o600)
	model := "offline"
	if script != "" {
		model = "script:" + script
	}
	args := append([]string{"worker", "--nats", url, "--model", model, "--workspace", ws,
		"--data-dir", t.TempDir(), "--concurrency", "4", "--ack-wait", "2s"}, extra...)
	cmd := exec.Command(binary, args...)
	// No key or server of the environment: an unknown model must fail
	// here as on a machine with none.
	cmd.Env = append(os.Environ(), "AGENTTY_CONFIG="+filepath.Join(t.TempDir(), "none.json"), "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
	logf, _ := os.Create(filepath.Join(t.TempDir(), "worker.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("worker %d log:\n%s", cmd.Process.Pid, b)
		}
	})
	return cmd
}

// submitN submits n runs through `agentty submit` and returns their
// sessions.
func submitN(t *testing.T, url string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		code, out, errs := runCLI(t, context.Background(), testEnv(t), "submit", "--nats", url, fmt.Sprintf("task %d", i))
		if code != 0 {
			t.Fatalf("submit: exit %d: %s", code, errs)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	return ids
}

// natsStoreAt opens the sessions in the server's JetStream.
func natsStoreAt(t *testing.T, url string) *sessions.Store {
	t.Helper()
	store, err := app.NATSStore(t.TempDir(), bus.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// waitAnswered waits until every session's first run has finished, and
// returns them loaded.
func waitAnswered(t *testing.T, store *sessions.Store, ids []string) map[string]*sessions.Loaded {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute) // a hang, not a speed limit
	out := map[string]*sessions.Loaded{}
	for len(out) < len(ids) {
		for _, id := range ids {
			if out[id] != nil {
				continue
			}
			if l, err := store.Load(id); err == nil && l.Session.Runs > 0 && !l.Session.Interrupted() {
				out[id] = l
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d runs finished", len(out), len(ids))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return out
}

// watchMidRun watches the runs of the server at url from now on, and
// returns what waits until one of ids has started its step steps (or
// fails the test after two minutes): a watch begun before the runs are
// submitted sees a run that is quick.
func watchMidRun(t *testing.T, url string, steps int) func(ids []string) string {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	seen := make(chan string, 1024)
	if _, err := nc.Subscribe(bus.Prefix+".>", func(m *nats.Msg) {
		var ev struct {
			Session, Kind string
			Step          int
		}
		if json.Unmarshal(m.Data, &ev) == nil && ev.Kind == string(engine.KindStepStarted) && ev.Step >= steps {
			select {
			case seen <- ev.Session:
			default:
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	return func(ids []string) string {
		t.Helper()
		for deadline := time.After(2 * time.Minute); ; {
			select {
			case id := <-seen:
				if slices.Contains(ids, id) {
					return id
				}
			case <-deadline:
				t.Fatal("no run was ever seen in its middle")
				return ""
			}
		}
	}
}

// checkExactlyOnce checks a session's journal: one run, answered; every
// tool call finished once; no call of an isolated tool started twice.
func checkExactlyOnce(t *testing.T, id string, l *sessions.Loaded) (continued bool) {
	t.Helper()
	started, finished := map[string]int{}, map[string]int{}
	runs, answers := 0, 0
	for _, ev := range l.Events {
		switch d := ev.Data.(type) {
		case *engine.RunStarted:
			runs++
		case *engine.RunFinished:
			if d.StopReason == engine.StopAnswered && d.Answer == "all done" {
				answers++
			} else {
				t.Errorf("session %s: run ended %s: %s", id, d.StopReason, d.Error)
			}
		case *engine.ToolStarted:
			started[d.ID]++
			if started[d.ID] > 1 && d.Name != "calculator" {
				t.Errorf("session %s: tool call %s (%s) started %d times", id, d.ID, d.Name, started[d.ID])
			}
		case *engine.ToolFinished:
			finished[d.ID]++
			if finished[d.ID] > 1 {
				t.Errorf("session %s: tool call %s finished %d times", id, d.ID, finished[d.ID])
			}
			continued = continued || strings.Contains(d.Result, "interrupted")
		}
	}
	if runs != 1 || answers != 1 {
		t.Errorf("session %s: %d runs, %d answered, want 1 and 1", id, runs, answers)
	}
	for call, n := range started {
		if finished[call] != 1 {
			t.Errorf("session %s: tool call %s started %d times, finished %d", id, call, n, finished[call])
		}
	}
	return continued
}

// TestQueueThreeWorkers: 50 runs submitted to 3 workers are each answered
// exactly once.
func TestQueueThreeWorkers(t *testing.T) {
	srv := natsServer(t)
	script := queueScript(t, 3, 5)
	for range 3 {
		startWorker(t, srv.URL(), script)
	}
	ids := submitN(t, srv.URL(), 50)
	store := natsStoreAt(t, srv.URL())
	for id, l := range waitAnswered(t, store, ids) {
		checkExactlyOnce(t, id, l)
	}
	nc, err := bus.Connect(bus.Config{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	q, err := bus.OpenQueue(context.Background(), nc)
	if err != nil {
		t.Fatal(err)
	}
	// Acknowledged requests leave the work queue.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		n, err := q.Pending(context.Background(), bus.DefaultPool)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests still on the queue after every run answered", n)
		}
	}
}

// TestQueueWorkerKilled kills a worker with SIGKILL in the middle of its
// runs: the server hands its requests to the others, which continue the
// interrupted runs from the journal; every run is answered once and no
// call of an isolated tool runs twice. So too with the queue and the
// journal in three partitions (issue 55).
func TestQueueWorkerKilled(t *testing.T) {
	for _, k := range []string{"1", "3"} {
		t.Run("partitions="+k, func(t *testing.T) { queueWorkerKilled(t, k) })
	}
}

func queueWorkerKilled(t *testing.T, partitions string) {
	srv := natsServer(t)
	if code, _, errs := runCLI(t, context.Background(), testEnv(t), "queue", "setup", "--nats", srv.URL(), "--partitions", partitions); code != 0 {
		t.Fatalf("queue setup --partitions %s: %s", partitions, errs)
	}
	script := queueScript(t, 10, 40)
	victim := startWorker(t, srv.URL(), script)
	ids := submitN(t, srv.URL(), 12)
	store := natsStoreAt(t, srv.URL())
	// Kill it once it is inside runs: some sessions have steps.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		busy := 0
		for _, id := range ids {
			if l, err := store.Load(id); err == nil && l.Session.Steps >= 2 && l.Session.Interrupted() {
				busy++
			}
		}
		if busy >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker never got going")
		}
	}
	victim.Process.Signal(syscall.SIGKILL)
	victim.Wait()
	interrupted := 0
	for _, id := range ids {
		if l, err := store.Load(id); err == nil && l.Session.Interrupted() {
			interrupted++
		}
	}
	if interrupted == 0 {
		t.Fatal("the kill left no run interrupted: it proves nothing")
	}
	t.Logf("%d runs interrupted by the kill", interrupted)
	for range 2 {
		startWorker(t, srv.URL(), script)
	}
	for id, l := range waitAnswered(t, store, ids) {
		checkExactlyOnce(t, id, l)
	}
}

// TestQueueDrain: a worker told to stop (SIGINT) ends its runs at a step
// boundary, unfinished, and hands them back; another worker continues
// them, and no run is cancelled. A drain does not count as a delivery:
// with --max-deliver 1 the second worker still carries the runs on.
func TestQueueDrain(t *testing.T) {
	srv := natsServer(t)
	script := queueScript(t, 20, 40)
	first := startWorker(t, srv.URL(), script, "--max-deliver", "1")
	mid := watchMidRun(t, srv.URL(), 2)
	ids := submitN(t, srv.URL(), 4)
	store := natsStoreAt(t, srv.URL())
	mid(ids)
	first.Process.Signal(syscall.SIGINT)
	if err := first.Wait(); err != nil {
		t.Fatalf("the drained worker: %v", err)
	}
	handedBack := 0
	for _, id := range ids {
		if l, err := store.Load(id); err == nil && l.Session.Interrupted() {
			handedBack++
		}
	}
	if handedBack == 0 {
		t.Fatal("the drain left no run unfinished: it proves nothing")
	}
	for _, id := range ids {
		l, err := store.Load(id)
		if err != nil || len(l.Events) == 0 {
			continue
		}
		// The step_finished of its last whole step, or its run_started
		// when the drain came before its first step ended.
		if last := l.Events[len(l.Events)-1]; l.Session.Interrupted() && last.Kind != engine.KindStepFinished && last.Kind != engine.KindRunStarted {
			t.Errorf("session %s: a drained run's journal ends with %s, want the step_finished of its last whole step", id, last.Kind)
		}
	}
	startWorker(t, srv.URL(), script, "--max-deliver", "1")
	for id, l := range waitAnswered(t, store, ids) {
		if checkExactlyOnce(t, id, l) {
			t.Errorf("session %s: a drain interrupted a tool call", id)
		}
	}
}

// TestQueueGivesUp: a request handed out more than --max-deliver times
// ends its run with error, the reason journaled.
func TestQueueGivesUp(t *testing.T) {
	srv := natsServer(t)
	script := queueScript(t, 40, 40)
	ids := submitN(t, srv.URL(), 1)
	store := natsStoreAt(t, srv.URL())
	for i := range 2 { // --max-deliver 1: the first worker dies, the second gives up
		w := startWorker(t, srv.URL(), script, "--max-deliver", "1")
		if i == 1 {
			break
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if l, err := store.Load(ids[0]); err == nil && l.Session.Steps >= 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the worker never got going")
			}
		}
		w.Process.Signal(syscall.SIGKILL)
		w.Wait()
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		l, err := store.Load(ids[0])
		if err == nil && l.Session.Runs == 1 && !l.Session.Interrupted() {
			last := l.Events[len(l.Events)-1].Data.(*engine.RunFinished)
			if last.StopReason != engine.StopError || !strings.Contains(last.Error, "handed to workers 1 times") {
				t.Errorf("the run ended %s: %q", last.StopReason, last.Error)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never ended")
		}
	}
}

// TestQueueServerRestart stops the NATS server in the middle of runs and
// starts it again on the same store and port: the worker reconnects, the
// runs complete, each answered once with no call run twice.
func TestQueueServerRestart(t *testing.T) {
	store := t.TempDir()
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	url := srv.URL()
	defer func() { srv.Shutdown() }()
	script := queueScript(t, 15, 60)
	startWorker(t, url, script)
	// Watched before they are submitted: four runs of a second each may all
	// be over by the time a watch begun after them would look.
	mid := watchMidRun(t, url, 2)
	ids := submitN(t, url, 4)
	sessions := natsStoreAt(t, url)
	mid(ids)
	srv.Shutdown()
	time.Sleep(500 * time.Millisecond) // the runs go on meanwhile, their journal writes waiting
	if srv, err = bus.StartServer(bus.ServerConfig{Listen: strings.TrimPrefix(url, "nats://"), StoreDir: store}); err != nil {
		t.Fatal(err)
	}
	for id, l := range waitAnswered(t, sessions, ids) {
		checkExactlyOnce(t, id, l)
	}
}

// TestQueueTwoRequestsOneSession: two tasks queued for one session before
// any worker takes them are both carried out, in turn, each run marked with
// its request; --wait on each prints its own answer. With four slots the
// worker takes both at once; with one, it takes the second while the
// first's bookkeeping is written (its slot is free once its run is over).
func TestQueueTwoRequestsOneSession(t *testing.T) {
	for _, slots := range []string{"4", "1"} {
		t.Run("concurrency="+slots, func(t *testing.T) { testQueueTwoRequestsOneSession(t, slots) })
	}
}

func testQueueTwoRequestsOneSession(t *testing.T, slots string) {
	srv := natsServer(t)
	first := startWorker(t, srv.URL(), "")
	code, out, errs := runCLI(t, context.Background(), testEnv(t), "submit", "--nats", srv.URL(), "--wait", "what is 2+3?")
	if code != 0 || !strings.Contains(out, "5") {
		t.Fatalf("submit --wait: exit %d: %q %s", code, out, errs)
	}
	store := natsStoreAt(t, srv.URL())
	list, err := store.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions: %v %v", list, err)
	}
	id := list[0].ID
	first.Process.Signal(syscall.SIGINT)
	first.Wait()
	answers := make(chan string, 2)
	for _, task := range []string{"what is 4*4?", "what is 5*5?"} {
		go func() {
			_, out, errs := runCLI(t, context.Background(), testEnv(t), "submit", "--nats", srv.URL(), "--session", id, "--wait", task)
			answers <- task + " → " + out + errs
		}()
	}
	nc, err := bus.Connect(bus.Config{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	q, err := bus.OpenQueue(context.Background(), nc)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if n, _ := q.Pending(context.Background(), bus.DefaultPool); n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the two requests never reached the queue")
		}
	}
	startWorker(t, srv.URL(), "", "--concurrency", slots)
	for range 2 {
		got := <-answers
		if want := map[bool]string{true: "16", false: "25"}[strings.Contains(got, "4*4")]; !strings.Contains(strings.SplitN(got, "→", 2)[1], want) {
			t.Errorf("submit --wait printed %q, want its own answer %s", got, want)
		}
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		l, err := store.Load(id)
		if err == nil && l.Session.Runs == 3 && !l.Session.Interrupted() {
			requests := map[string]bool{}
			for _, ev := range l.Events {
				if d, ok := ev.Data.(*engine.RunStarted); ok {
					requests[d.Request] = true
				}
				if d, ok := ev.Data.(*engine.RunFinished); ok && d.StopReason != engine.StopAnswered {
					t.Errorf("%s ended %s: %s", ev.Run, d.StopReason, d.Error)
				}
			}
			if len(requests) != 3 || requests[""] {
				t.Errorf("the runs carry requests %v, want three ids", requests)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the session never had its three runs finished")
		}
	}
}

// openQueueAt connects to the server at url and opens its work queue.
func openQueueAt(t *testing.T, url string) (*nats.Conn, *bus.Queue) {
	t.Helper()
	nc, err := bus.Connect(bus.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	q, err := bus.OpenQueue(context.Background(), nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, q
}

// TestQueueEarlierRequestBehind: a session's earlier request behind its
// later one on the queue (as a drained run's request goes to the back) is
// not left waiting on a worker with one slot, which held the later one
// until its wait ran out (20 s, found trying a drain by hand): the later
// one is put back after a second, the earlier one runs, then the later.
func TestQueueEarlierRequestBehind(t *testing.T) {
	srv := natsServer(t)
	ctx := context.Background()
	_, q := openQueueAt(t, srv.URL())
	sid, now := sessions.NewID(), time.Now().UTC()
	later := bus.RunRequest{ID: sessions.NewID(), Session: sid, Task: "what is 5*5?", Submitted: now}
	earlier := bus.RunRequest{ID: sessions.NewID(), Session: sid, Task: "what is 4*4?", Submitted: now.Add(-time.Minute)}
	for _, r := range []bus.RunRequest{later, earlier} { // the later one first on the queue
		if _, err := q.Submit(ctx, bus.DefaultPool, r); err != nil {
			t.Fatal(err)
		}
	}
	startWorker(t, srv.URL(), "", "--concurrency", "1")
	store := natsStoreAt(t, srv.URL())
	for deadline := time.Now().Add(12 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if l, err := store.Load(sid); err == nil && l.Session.Runs == 2 && !l.Session.Interrupted() {
			var order []string
			for _, ev := range l.Events {
				if d, ok := ev.Data.(*engine.RunStarted); ok {
					order = append(order, d.Request)
				}
			}
			if len(order) != 2 || order[0] != earlier.ID || order[1] != later.ID {
				t.Errorf("runs carried requests %v, want the earlier %s then the later %s", order, earlier.ID, later.ID)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the two requests were not both done within 12 s: the worker held the later one while the earlier waited behind it")
		}
	}
}

// TestRunRefusedWhileAWorkerWrites: `run --session` of a session a worker
// is running is refused, saying who writes it (the writer's lease), and
// the worker's run goes on to its answer.
func TestRunRefusedWhileAWorkerWrites(t *testing.T) {
	srv := natsServer(t)
	startWorker(t, srv.URL(), queueScript(t, 20, 60))
	mid := watchMidRun(t, srv.URL(), 1)
	ids := submitN(t, srv.URL(), 1)
	store := natsStoreAt(t, srv.URL())
	mid(ids)
	code, out, errs := runCLI(t, context.Background(), testEnv(t), "run", "--nats", srv.URL(), "--session", ids[0], "--model", "offline", "what is 1+2?")
	if code != 1 || out != "" || !strings.Contains(errs, "is writing it") {
		t.Errorf("run --session while a worker writes: exit %d, %q, %q", code, out, errs)
	}
	for id, l := range waitAnswered(t, store, ids) {
		checkExactlyOnce(t, id, l)
	}
}

// TestQueuedSessionListed: a submitted run's session is listed (and can be
// shown) before any worker takes it; while a worker runs it, sessions ls
// says it is running, not interrupted.
func TestQueuedSessionListed(t *testing.T) {
	srv := natsServer(t)
	code, out, errs := runCLI(t, context.Background(), testEnv(t), "submit", "--nats", srv.URL(), "task 0")
	if code != 0 || !strings.Contains(errs, `pool "default": no worker has served it yet`) {
		t.Fatalf("submit with no worker: exit %d, %q", code, errs)
	}
	ids := []string{strings.TrimSpace(out)}
	ls := func() string {
		code, out, errs := runCLI(t, context.Background(), testEnv(t), "sessions", "ls", "--nats", srv.URL())
		if code != 0 {
			t.Fatalf("sessions ls: exit %d: %s", code, errs)
		}
		return out
	}
	if out := ls(); !strings.Contains(out, ids[0]) || !strings.Contains(out, "task 0 [queued]") {
		t.Errorf("a queued session is not listed:\n%s", out)
	}
	if code, _, errs := runCLI(t, context.Background(), testEnv(t), "sessions", "show", "--nats", srv.URL(), ids[0]); code != 0 {
		t.Errorf("sessions show of a queued session: exit %d: %s", code, errs)
	}
	mid := watchMidRun(t, srv.URL(), 3)
	startWorker(t, srv.URL(), queueScript(t, 20, 60))
	store := natsStoreAt(t, srv.URL())
	mid(ids)
	out = ls()
	if !strings.Contains(out, "[running]") || strings.Contains(out, "[interrupted]") {
		t.Errorf("a session a worker runs:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == ids[0] {
			if steps, _ := strconv.Atoi(f[3]); steps < 3 {
				t.Errorf("a running session is listed at step %s, want its last event's (3 or more):\n%s", f[3], out)
			}
		}
	}
	waitAnswered(t, store, ids)
}

// TestQueueRefusesScriptModel: a submitted run cannot make a worker read a
// file of its machine as a script model; the run ends saying why.
func TestQueueRefusesScriptModel(t *testing.T) {
	srv := natsServer(t)
	startWorker(t, srv.URL(), "")
	code, out, errs := runCLI(t, context.Background(), testEnv(t), "submit", "--nats", srv.URL(), "--model", "script:/etc/passwd", "--wait", "hi")
	if code != app.ExitUsage || strings.TrimSpace(out) != "" || !strings.Contains(errs, "may not name a script model") {
		t.Errorf("exit %d, %q, %q; want exit %d, nothing queued", code, out, errs, app.ExitUsage)
	}
	askOnce(t, srv.URL()) // the next good request still works
}

// TestQueueAskAnswered: a worker's run asks the person (the offline model,
// told to); the worker is killed while the run waits; the worker that
// continues the run asks again, agentty answer answers it, and the answer
// is remembered, once.
func TestQueueAskAnswered(t *testing.T) {
	srv := natsServer(t)
	victim := startWorker(t, srv.URL(), "")
	submitter := testEnv(t) // its answers are the run's
	code, out, errs := runCLI(t, context.Background(), submitter, "submit", "--nats", srv.URL(), "ask me for my name and remember it")
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errs)
	}
	id := strings.TrimSpace(out)
	store := natsStoreAt(t, srv.URL())
	asked := func() int {
		l, err := store.Load(id)
		if err != nil {
			return 0
		}
		n := 0
		for _, ev := range l.Events {
			if ev.Kind == engine.KindQuestionAsked {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(time.Minute); asked() < 1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run never asked")
		}
	}
	victim.Process.Signal(syscall.SIGKILL)
	victim.Wait()
	if code, _, errs := runCLI(t, context.Background(), testEnv(t), "answer", "--nats", srv.URL(), id, "Ada"); code != 1 || !strings.Contains(errs, "no question of this session is waiting") {
		t.Errorf("an answer with no worker: exit %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, context.Background(), testEnv(t), "answer", "--nats", srv.URL(), "0nosuchsession", "Ada"); code != 1 || !strings.Contains(errs, "no such session") {
		t.Errorf("an answer to no session: exit %d, %q", code, errs)
	}
	startWorker(t, srv.URL(), "")
	code, out, errs = runCLI(t, context.Background(), submitter, "answer", "--nats", srv.URL(), "--wait", "1m", id, "Ada")
	if code != 0 || !strings.Contains(out, `answered "What is your name?": Ada`) {
		t.Fatalf("answer: exit %d, %q, %q", code, out, errs)
	}
	l := waitAnswered(t, store, []string{id})[id]
	if mem := l.Session.Memory(); len(mem) != 1 || mem[0].Key != "name" || mem[0].Value != "Ada" {
		t.Errorf("memory %+v", mem)
	}
	if n := asked(); n != 2 {
		t.Errorf("the question was asked %d times; want twice (before the kill and after)", n)
	}
	// The same worker takes the next run.
	if code, out, errs := runCLI(t, context.Background(), testEnv(t), "submit", "--nats", srv.URL(), "--wait", "what is 2+2"); code != 0 || !strings.Contains(out, "4") {
		t.Errorf("the next run: exit %d, %q, %q", code, out, errs)
	}
}

// TestWatchConsoleAnswersAQuestion: a console watching a worker's run
// shows the run's question in its pause bar; the answer typed there goes
// to the run, which remembers it.
func TestWatchConsoleAnswersAQuestion(t *testing.T) {
	srv := natsServer(t)
	startWorker(t, srv.URL(), "")
	home := t.TempDir() // the submitter's, whose console may answer; the question's pause bar stands where the input box would: no waiting for "Input"
	code, out, errs := runCLI(t, context.Background(), map[string]string{"AGENTTY_HOME": home, "AGENTTY_CONFIG": home + "/none.json"},
		"submit", "--nats", srv.URL(), "ask me for my name and remember it")
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errs)
	}
	id := strings.TrimSpace(out)
	tm := newTmux(t)
	tm.run("new-session", "-d", "-s", tm.name, "-x", "160", "-y", "45",
		"AGENTTY_HOME="+home+" AGENTTY_CONFIG="+home+"/none.json TERM=xterm-256color "+binary+" watch "+id+" --nats "+srv.URL())
	tm.waitArmed("the question in the pause bar", "? What is your name?")
	tm.keys("Grace")
	tm.keys("Enter")
	tm.wait("the answer remembered", func(s string) bool { return strings.Contains(memoryPane(s), "name = Grace") })
	l := waitAnswered(t, natsStoreAt(t, srv.URL()), []string{id})[id]
	if mem := l.Session.Memory(); len(mem) != 1 || mem[0].Value != "Grace" {
		t.Errorf("memory %+v", mem)
	}
}
