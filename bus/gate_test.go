package bus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/nats-io/nats.go"
)

// scriptedGate is a console's gate that answers each pause with the next
// of its verdicts, and keeps the pauses it was asked.
type scriptedGate struct {
	mu       sync.Mutex
	verdicts []engine.Verdict
	asked    []engine.Pending
}

func (g *scriptedGate) Stop(engine.Pending) bool { return true }

func (g *scriptedGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked = append(g.asked, p)
	if len(g.verdicts) == 0 {
		return engine.Verdict{}, fmt.Errorf("no verdict left for %+v", p)
	}
	v := g.verdicts[0]
	g.verdicts = g.verdicts[1:]
	return v, nil
}

func (g *scriptedGate) pauses() []engine.Pending {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]engine.Pending(nil), g.asked...)
}

// echoModel calls echo with "a", "b", "c" in turn, one call a decision,
// then answers "done".
func echoModel() engine.Model {
	return enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		n := 0
		for _, m := range req.Messages {
			if m.Role == engine.RoleTool {
				n++
			}
		}
		if n == 3 {
			return engine.Decision{Text: "done"}, nil
		}
		args := fmt.Sprintf(`{"text":%q}`, string(rune('a'+n)))
		return engine.Decision{ToolCalls: []engine.ToolCall{{ID: fmt.Sprintf("call_%d", n), Name: "echo", Args: json.RawMessage(args)}}}, nil
	})
}

func connect(t testing.TB, s *bus.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// runStepped runs the echo model's task on a fresh session with gate.
func runStepped(t *testing.T, gate engine.Gate, session string) (engine.Result, *enginetest.Recorder) {
	t.Helper()
	e := engine.New(engine.Config{Model: echoModel(), Tools: enginetest.Registry(t, enginetest.EchoTool()), Gate: gate})
	rec := &enginetest.Recorder{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return e.Run(ctx, engine.NewSession(session), "echo three times", rec), rec
}

// TestGateRequestRoundTrip: a pause with a tool call comes out of the wire
// as it went in.
func TestGateRequestRoundTrip(t *testing.T) {
	p := engine.Pending{Session: "s1", Run: "run-1/2/call_0", Agent: "helper", ParentRun: "run-1", Step: 3, At: engine.Act,
		ToolCall: &engine.ToolCall{ID: "call_9", Name: "echo", Args: json.RawMessage(`{"text":"x"}`)}, Approval: true, Rerun: true}
	b, err := json.Marshal(bus.NewGateRequest(p))
	if err != nil {
		t.Fatal(err)
	}
	var r bus.GateRequest
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if got := r.Pending(); !reflect.DeepEqual(got, p) {
		t.Errorf("round trip of %s:\ngot  %+v\nwant %+v", b, got, p)
	}
	if want := `"tool_call":{"id":"call_9","name":"echo","args":{"text":"x"}}`; !strings.Contains(string(b), want) {
		t.Errorf("request %s does not hold %s", b, want)
	}
}

// TestRemoteStepping: a run in step mode pauses before each decision and
// tool call and a console's gate answers over NATS: proceed, edited
// arguments, skip, abort each take effect.
func TestRemoteStepping(t *testing.T) {
	s := startServer(t)
	answers := &scriptedGate{verdicts: []engine.Verdict{
		{Action: engine.Proceed}, // decide 1
		{Action: engine.Proceed, Args: json.RawMessage(`{"text":"edited"}`)}, // echo a
		{Action: engine.Proceed}, // decide 2
		{Action: engine.Skip},    // echo b
		{Action: engine.Proceed}, // decide 3
		{Action: engine.Abort},   // echo c
	}}
	stop, err := bus.AnswerGate(connect(t, s), "sess", answers, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	res, rec := runStepped(t, bus.NewRemoteGate(connect(t, s), "sess", true, 0), "sess")
	if res.StopReason != engine.StopCancelled {
		t.Fatalf("stop reason %s (%v), want cancelled", res.StopReason, res.Err)
	}
	var actions []engine.Action
	for _, ev := range rec.Of(engine.KindGateResumed) {
		actions = append(actions, ev.Data.(*engine.GateResumed).Action)
	}
	if want := []engine.Action{"proceed", "proceed", "proceed", "skip", "proceed", "abort"}; !reflect.DeepEqual(actions, want) {
		t.Errorf("gate_resumed actions %v, want %v", actions, want)
	}
	type fin struct {
		status engine.ToolStatus
		result string
	}
	var got []fin
	for _, f := range rec.Finished() {
		got = append(got, fin{f.Status, f.Result})
	}
	if len(got) != 3 || got[0] != (fin{engine.ToolOK, "echo: edited"}) || got[1].status != engine.ToolSkipped || got[2].status != engine.ToolSkipped {
		t.Errorf("tool results %+v, want echo: edited, then skipped twice", got)
	}
	asked := answers.pauses()
	if len(asked) != 6 {
		t.Fatalf("the console was asked %d pauses, want 6: %+v", len(asked), asked)
	}
	for i, p := range asked {
		wantAt := engine.Decide
		if i%2 == 1 {
			wantAt = engine.Act
		}
		if p.Session != "sess" || p.Run == "" || p.At != wantAt || p.Step != i/2+1 {
			t.Errorf("pause %d: %+v, want session sess, at %s, step %d", i, p, wantAt, i/2+1)
		}
		if wantAt == engine.Act {
			want := fmt.Sprintf(`{"text":%q}`, string(rune('a'+i/2)))
			if p.ToolCall == nil || p.ToolCall.Name != "echo" || string(p.ToolCall.Args) != want || p.ToolCall.ID != fmt.Sprintf("call_%d", i/2) {
				t.Errorf("pause %d: tool call %+v, want echo %s", i, p.ToolCall, want)
			}
		}
	}
}

// TestRemoteGateNoConsole: with no console answering, the run waits for
// the timeout and then ends cancelled, saying why.
func TestRemoteGateNoConsole(t *testing.T) {
	s := startServer(t)
	res, rec := runStepped(t, bus.NewRemoteGate(connect(t, s), "lonely", true, 300*time.Millisecond), "lonely")
	if res.StopReason != engine.StopCancelled {
		t.Fatalf("stop reason %s (%v), want cancelled", res.StopReason, res.Err)
	}
	fins := rec.Of(engine.KindRunFinished)
	if len(fins) != 1 {
		t.Fatalf("%d run_finished", len(fins))
	}
	f := fins[0].Data.(*engine.RunFinished)
	if !strings.Contains(f.Error, "none answered within 300ms") || !strings.Contains(f.Error, "lonely") {
		t.Errorf("run_finished error %q does not say no console answered", f.Error)
	}
	if n := len(rec.Of(engine.KindDecision)); n != 0 {
		t.Errorf("%d decisions made with no console to allow them", n)
	}
}

// TestRemoteGateTimeoutError: Wait's error past the timeout is
// ErrNoConsole, and context.Canceled for the engine.
func TestRemoteGateTimeoutError(t *testing.T) {
	s := startServer(t)
	g := bus.NewRemoteGate(connect(t, s), "x", false, 50*time.Millisecond)
	_, err := g.Wait(context.Background(), engine.Pending{At: engine.Decide})
	if !errors.Is(err, bus.ErrNoConsole) || !errors.Is(err, context.Canceled) {
		t.Errorf("Wait = %v, want ErrNoConsole and context.Canceled", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := bus.NewRemoteGate(connect(t, s), "x", false, 0).Wait(ctx, engine.Pending{}); !errors.Is(err, context.Canceled) || errors.Is(err, bus.ErrNoConsole) {
		t.Errorf("Wait with ctx done = %v, want ctx's error", err)
	}
}

// TestRemoteGateLateConsole: a console that attaches after the run first
// asked (nobody listened) still answers, and the run goes on.
func TestRemoteGateLateConsole(t *testing.T) {
	s := startServer(t)
	gateConn := connect(t, s)
	type result struct {
		res engine.Result
		rec *enginetest.Recorder
	}
	done := make(chan result, 1)
	go func() {
		res, rec := runStepped(t, bus.NewRemoteGate(gateConn, "late", true, 0), "late")
		done <- result{res, rec}
	}()
	// Two requests out: the first found no console and was asked again.
	deadline := time.Now().Add(30 * time.Second)
	for gateConn.Stats().OutMsgs < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the gate asked %d times", gateConn.Stats().OutMsgs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	answers := &scriptedGate{verdicts: make([]engine.Verdict, 8)} // proceed to the end
	stop, err := bus.AnswerGate(connect(t, s), "late", answers, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	r := <-done
	if r.res.StopReason != engine.StopAnswered || r.res.Answer != "done" {
		t.Fatalf("run ended %s %q (%v), want answered done", r.res.StopReason, r.res.Answer, r.res.Err)
	}
	if n := len(answers.pauses()); n != 7 {
		t.Errorf("the late console answered %d pauses, want 7 (4 decisions, 3 calls)", n)
	}
}

// TestAnswerGateQueue: two consoles watch one session; each pause is
// answered by one of them only.
func TestAnswerGateQueue(t *testing.T) {
	s := startServer(t)
	a, b := &scriptedGate{verdicts: make([]engine.Verdict, 8)}, &scriptedGate{verdicts: make([]engine.Verdict, 8)}
	for _, g := range []*scriptedGate{a, b} {
		stop, err := bus.AnswerGate(connect(t, s), "two", g, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
	}
	res, _ := runStepped(t, bus.NewRemoteGate(connect(t, s), "two", true, 0), "two")
	if res.StopReason != engine.StopAnswered {
		t.Fatalf("stop reason %s (%v)", res.StopReason, res.Err)
	}
	if n := len(a.pauses()) + len(b.pauses()); n != 7 {
		t.Errorf("the consoles answered %d + %d pauses, want 7 in all", len(a.pauses()), len(b.pauses()))
	}
}

// blockingGate holds every pause until ctx is done.
type blockingGate struct{ asked chan engine.Pending }

func (g blockingGate) Stop(engine.Pending) bool { return true }

func (g blockingGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	g.asked <- p
	<-ctx.Done()
	return engine.Verdict{}, ctx.Err()
}

// TestAnswerGateStopHandsBack: a console that goes away while it holds a
// pause hands it back, and another console answers it.
func TestAnswerGateStopHandsBack(t *testing.T) {
	s := startServer(t)
	first := blockingGate{asked: make(chan engine.Pending, 1)}
	stop, err := bus.AnswerGate(connect(t, s), "handover", first, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan engine.Verdict, 1)
	errc := make(chan error, 1)
	go func() {
		v, err := bus.NewRemoteGate(connect(t, s), "handover", true, 0).Wait(context.Background(), engine.Pending{At: engine.Decide, Step: 1})
		done <- v
		errc <- err
	}()
	<-first.asked
	stop()
	second := &scriptedGate{verdicts: []engine.Verdict{{Action: engine.Skip}}}
	stop2, err := bus.AnswerGate(connect(t, s), "handover", second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop2()
	if v := <-done; v.Action != engine.Skip {
		t.Errorf("verdict %+v (%v), want skip from the second console", v, <-errc)
	}
}

// passGate stops nowhere: AnswerGate lets a pause that is no approval go
// on without asking it.
type passGate struct{ scriptedGate }

func (*passGate) Stop(engine.Pending) bool { return false }

func TestAnswerGateNotStepping(t *testing.T) {
	s := startServer(t)
	g := &passGate{}
	stop, err := bus.AnswerGate(connect(t, s), "free", g, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	res, rec := runStepped(t, bus.NewRemoteGate(connect(t, s), "free", true, 0), "free")
	if res.StopReason != engine.StopAnswered {
		t.Fatalf("stop reason %s (%v)", res.StopReason, res.Err)
	}
	if n := len(g.pauses()); n != 0 {
		t.Errorf("a console out of step mode was asked %d pauses", n)
	}
	// The first pause is asked and let through, with Release: a console
	// out of step mode lets the run go on without step pauses after it.
	if n := len(rec.Of(engine.KindGateResumed)); n != 1 {
		t.Errorf("%d gate_resumed, want 1 (the first pause let through, the rest not asked)", n)
	}
}

// heldGate is a console's gate that holds each pause until the test gives
// its verdict.
type heldGate struct {
	asked   chan engine.Pending
	verdict chan engine.Verdict
}

func (g heldGate) Stop(engine.Pending) bool { return true }

func (g heldGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	select {
	case g.asked <- p:
	case <-ctx.Done():
		return engine.Verdict{}, ctx.Err()
	}
	select {
	case v := <-g.verdict:
		return v, nil
	case <-ctx.Done():
		return engine.Verdict{}, ctx.Err()
	}
}

// waitAsync runs g.Wait on a pause in the background, bounded by a minute.
func waitAsync(t *testing.T, g *bus.RemoteGate) <-chan error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	out := make(chan error, 1)
	go func() {
		v, err := g.Wait(ctx, engine.Pending{At: engine.Decide, Step: 1})
		if err == nil && v.Action != engine.Skip {
			err = fmt.Errorf("verdict %+v, want skip", v)
		}
		out <- err
	}()
	return out
}

// nextRequest is the next pause sub receives.
func nextRequest(t *testing.T, sub *nats.Subscription) (*nats.Msg, bus.GateRequest) {
	t.Helper()
	m, err := sub.NextMsg(30 * time.Second)
	if err != nil {
		t.Fatalf("no pause asked: %v", err)
	}
	var r bus.GateRequest
	if err := json.Unmarshal(m.Data, &r); err != nil {
		t.Fatalf("pause %s: %v", m.Data, err)
	}
	return m, r
}

// TestRemoteGateConsoleDiesSilently: the console that took the pause dies
// without a word (SIGKILL, a closed terminal: no "again"); the run asks
// again, a console that attaches later sees the pause and answers it.
func TestRemoteGateConsoleDiesSilently(t *testing.T) {
	s := startServer(t)
	dead := connect(t, s)
	sub, err := dead.SubscribeSync(bus.GateSubject("gone"))
	if err != nil {
		t.Fatal(err)
	}
	dead.Flush()
	g := bus.NewRemoteGate(connect(t, s), "gone", true, 0)
	g.Ask = 100 * time.Millisecond
	done := waitAsync(t, g)
	_, first := nextRequest(t, sub)
	if first.ID == "" {
		t.Errorf("pause %+v has no ID", first)
	}
	sub.Unsubscribe() // dies holding the pause
	dead.Flush()
	second := &scriptedGate{verdicts: []engine.Verdict{{Action: engine.Skip}}}
	stop, err := bus.AnswerGate(connect(t, s), "gone", second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := <-done; err != nil {
		t.Fatalf("Wait after the console died: %v", err)
	}
	if n := len(second.pauses()); n != 1 {
		t.Errorf("the second console was asked %d pauses, want 1", n)
	}
}

// TestAnswerGateSamePauseAskedAgain: a console holding a pause that is
// asked again (its answer is slow in coming) shows it once; its answer
// goes to the request the run waits on, and takes effect once; asked once
// more after that (the answer lost), it gives the same answer, without
// asking the person again.
func TestAnswerGateSamePauseAskedAgain(t *testing.T) {
	s := startServer(t)
	held := heldGate{asked: make(chan engine.Pending, 4), verdict: make(chan engine.Verdict)}
	stop, err := bus.AnswerGate(connect(t, s), "again", held, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	spyConn := connect(t, s)
	spy, err := spyConn.SubscribeSync(bus.GateSubject("again")) // sees every request, answers none
	if err != nil {
		t.Fatal(err)
	}
	spyConn.Flush()
	g := bus.NewRemoteGate(connect(t, s), "again", true, 0)
	g.Ask = 50 * time.Millisecond
	done := waitAsync(t, g)
	<-held.asked
	var last *nats.Msg
	var id string
	for i := 0; i < 3; i++ { // asked, then asked again twice
		m, r := nextRequest(t, spy)
		if i == 0 {
			id = r.ID
		}
		if r.ID == "" || r.ID != id {
			t.Fatalf("request %d of one pause has ID %q, the first had %q", i, r.ID, id)
		}
		last = m
	}
	held.verdict <- engine.Verdict{Action: engine.Skip}
	if err := <-done; err != nil {
		t.Fatalf("Wait: %v", err)
	}
	select {
	case p := <-held.asked:
		t.Errorf("the console showed the pause asked again as a second pause: %+v", p)
	default:
	}
	reply, err := connect(t, s).Request(bus.GateSubject("again"), last.Data, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r bus.GateReply
	if err := json.Unmarshal(reply.Data, &r); err != nil || r.Action != engine.Skip {
		t.Errorf("the pause asked after its answer: %s (%v), want the same skip", reply.Data, err)
	}
	select {
	case p := <-held.asked:
		t.Errorf("the console asked its person again for an answered pause: %+v", p)
	default:
	}
}

// TestRemoteGateTakesTheLatestRequestsAnswer: an answer to a request the
// gate has asked again is stale and dropped; the answer to the latest
// request is the verdict.
func TestRemoteGateTakesTheLatestRequestsAnswer(t *testing.T) {
	s := startServer(t)
	console := connect(t, s)
	asked := make(chan *nats.Msg, 64)
	if _, err := console.ChanSubscribe(bus.GateSubject("stale"), asked); err != nil {
		t.Fatal(err)
	}
	console.Flush()
	g := bus.NewRemoteGate(connect(t, s), "stale", true, 0)
	g.Ask = 50 * time.Millisecond
	done := waitAsync(t, g)
	first := <-asked
	abort, _ := json.Marshal(bus.GateReply{Action: engine.Abort})
	skip, _ := json.Marshal(bus.GateReply{Action: engine.Skip})
	stale := false
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Wait: %v (the stale abort taken?)", err)
			}
			return
		case m := <-asked: // asked again: the first is stale
			if !stale {
				first.Respond(abort)
				stale = true
			}
			m.Respond(skip)
		}
	}
}

// releasingGate answers its first pause with proceed and then stops no
// more ("c" at a pause in a console).
type releasingGate struct {
	mu       sync.Mutex
	released bool
	asked    int
}

func (g *releasingGate) Stop(engine.Pending) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.released
}

func (g *releasingGate) Wait(context.Context, engine.Pending) (engine.Verdict, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked++
	g.released = true
	return engine.Verdict{Action: engine.Proceed}, nil
}

// TestRemoteGateReleased: "c" in the console that answers a pause lets the
// run go on without step pauses even once that console is gone.
func TestRemoteGateReleased(t *testing.T) {
	srv := startServer(t)
	nc := connect(t, srv)
	console := &releasingGate{}
	stop, err := bus.AnswerGate(nc, "s-rel", console, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := bus.NewRemoteGate(connect(t, srv), "s-rel", true, 0)
	first := engine.Pending{Session: "s-rel", Run: "run-1", Step: 1, At: engine.Decide}
	if !g.Stop(first) {
		t.Fatal("a step-mode gate does not stop at the first decide")
	}
	if v, err := g.Wait(context.Background(), first); err != nil || v.Action != engine.Proceed {
		t.Fatalf("first pause: %v %v", v, err)
	}
	stop() // the console goes away
	if g.Stop(engine.Pending{Session: "s-rel", Run: "run-1", Step: 2, At: engine.Decide}) {
		t.Error("after c the run still stops at its steps")
	}
	if !g.Stop(engine.Pending{Session: "s-rel", Run: "run-1", Step: 2, At: engine.Act, Approval: true}) {
		t.Error("after c an approval no longer asks")
	}
	if console.asked != 1 {
		t.Errorf("the console was asked %d times, want 1", console.asked)
	}
}

// inspectingGate is a console that, at each decide pause, keeps the
// request it was shown and answers with edit.
type inspectingGate struct {
	mu   sync.Mutex
	seen []*engine.Request
	edit *engine.RequestEdit
}

func (g *inspectingGate) Stop(engine.Pending) bool { return true }

func (g *inspectingGate) Wait(_ context.Context, p engine.Pending) (engine.Verdict, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p.At != engine.Decide {
		return engine.Verdict{Action: engine.Proceed}, nil
	}
	g.seen = append(g.seen, p.Request)
	return engine.Verdict{Action: engine.Proceed, Edit: g.edit}, nil
}

// TestRemoteInspector: a console watching a run elsewhere is shown each
// decision's model request with the pause, and its edit of the request
// (the inspector's) reaches the run: the model is asked the edited request
// and the journal says so. A request too large for one message goes
// without it, and the pause still reaches the console.
func TestRemoteInspector(t *testing.T) {
	s := startServer(t)
	system := "answer in French"
	console := &inspectingGate{edit: &engine.RequestEdit{System: &system, Note: "the person says: be brief"}}
	stop, err := bus.AnswerGate(connect(t, s), "sess", console, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var asked []string
	var mu sync.Mutex
	model := enginetest.ModelFunc(func(_ context.Context, req *engine.Request) (engine.Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req.System+" | "+req.Messages[len(req.Messages)-1].Content)
		return engine.Decision{Text: "done"}, nil
	})
	e := engine.New(engine.Config{Model: model, System: "be helpful", Gate: bus.NewRemoteGate(connect(t, s), "sess", true, 0)})
	rec := &enginetest.Recorder{}
	if res := e.Run(context.Background(), engine.NewSession("sess"), "what is 2+2", rec); res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %s %v", res.StopReason, res.Err)
	}
	console.mu.Lock()
	seen := console.seen
	console.mu.Unlock()
	if len(seen) != 1 || seen[0] == nil || seen[0].System != "be helpful" || len(seen[0].Messages) == 0 || seen[0].Messages[0].Content != "what is 2+2" {
		t.Fatalf("the console was shown %+v, want the request with the task", seen)
	}
	if len(asked) != 1 || !strings.HasPrefix(asked[0], "answer in French | ") || !strings.Contains(asked[0], "be brief") {
		t.Errorf("the model was asked %q, want the edited request", asked)
	}
	if len(rec.Of(engine.KindRequestEdited)) != 1 {
		t.Errorf("request_edited events: %d, want 1", len(rec.Of(engine.KindRequestEdited)))
	}

	// Too large to send: the pause goes without its request.
	big := engine.Pending{Session: "sess", Run: "run-1", Step: 1, At: engine.Decide,
		Request: &engine.Request{Messages: []engine.Message{{Role: engine.RoleUser, Content: strings.Repeat("x", bus.MaxGateRequest)}}}}
	console.mu.Lock()
	console.edit = nil
	console.mu.Unlock()
	v, err := bus.NewRemoteGate(connect(t, s), "sess", true, 10*time.Second).Wait(context.Background(), big)
	if err != nil || v.Action != engine.Proceed {
		t.Fatalf("a pause with a large request: %+v %v", v, err)
	}
	console.mu.Lock()
	defer console.mu.Unlock()
	if len(console.seen) != 2 || console.seen[1] != nil {
		t.Errorf("a request too large was shown: %d pauses", len(console.seen))
	}
}
