package bus

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentty/agentty/engine"
)

// The gate as the fleet runs it: the worker asks as agentty-worker, the
// consoles and whoever else answer as agentty-submit, on a server that
// requires the users agentty serve makes (response permissions: a user
// replies only to a request it received, once).

// as connects to srv as user c.
func as(t *testing.T, srv *Server, c Credential) *nats.Conn {
	t.Helper()
	nc, err := Connect(Config{URL: srv.URL()}, nats.UserInfo(c.User, c.Password))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// oneVerdict is a console's gate that answers each pause with verdict, once
// ready is closed, says on asked that it was asked, and on taken whether
// the run took its answer.
type oneVerdict struct {
	verdict engine.Verdict
	ready   <-chan struct{}
	asked   chan engine.Pending
	taken   chan string // "" when taken, else why not
}

func (g *oneVerdict) Answered(_ engine.Pending, taken bool, why string) {
	if taken {
		why = ""
	} else if why == "" {
		why = "not taken, and no word why"
	}
	select {
	case g.taken <- why:
	default:
	}
}

func (g *oneVerdict) Stop(engine.Pending) bool { return true }

func (g *oneVerdict) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	select {
	case g.asked <- p:
	default:
	}
	select {
	case <-g.ready:
		return g.verdict, nil
	case <-ctx.Done():
		return engine.Verdict{}, ctx.Err()
	}
}

// fleetGate is a worker's gate on session as agentty-worker, taking the
// answers of steer only, asking again only after an hour: a verdict that
// comes before that came without the gate's asking again.
func fleetGate(t *testing.T, srv *Server, u Users, session string, steer *Signer) *RemoteGate {
	g := NewRemoteGate(as(t, srv, u.Worker), session, true, 0)
	g.Steer = Steerers{steer.Public()}
	g.Ask = time.Hour
	return g
}

// waitVerdict runs g.Wait on a pause in the background, bounded by a
// minute (far less than g.Ask).
func waitVerdict(t *testing.T, g *RemoteGate) <-chan engine.Verdict {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	out := make(chan engine.Verdict, 1)
	go func() {
		v, err := g.Wait(ctx, engine.Pending{At: engine.Decide, Step: 1})
		if err != nil {
			t.Errorf("Wait: %v", err)
		}
		out <- v
	}()
	return out
}

// TestRefusedReplyDoesNotHideTheRightOne (issue 52, hole 9): another
// submit user answers a pause once, at once, unsigned; the gate refuses
// it and asks again; the submitter's console, which has now been asked
// twice, answers, and its answer is taken at once, not at the next asking
// again (an hour here). Asked again on the same inbox, the server counted
// the second delivery against the console's one reply, and dropped the
// answer, silently.
func TestRefusedReplyDoesNotHideTheRightOne(t *testing.T) {
	u, srv := usersServer(t)
	signer, err := LoadOrMakeSigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const session = "refused"
	intruder := as(t, srv, u.Submit)
	asked := make(chan struct{}, 64)
	proceed, _ := json.Marshal(GateReply{Action: engine.Proceed})
	// The refused reply names a journal as its reply subject: were the run
	// to answer it, the worker would write there for the intruder.
	const target = "agentty.journal.victim"
	written := make(chan *nats.Msg, 4)
	if _, err := as(t, srv, u.Operator).ChanSubscribe(target, written); err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	if _, err := intruder.Subscribe(GateSubject(session), func(m *nats.Msg) {
		if n.Add(1) == 1 { // refused: not signed
			intruder.PublishMsg(&nats.Msg{Subject: m.Reply, Reply: target, Data: proceed})
		}
		asked <- struct{}{}
	}); err != nil {
		t.Fatal(err)
	}
	intruder.Flush()
	ready := make(chan struct{})
	console := &oneVerdict{verdict: engine.Verdict{Action: engine.Skip}, ready: ready, asked: make(chan engine.Pending, 1), taken: make(chan string, 8)}
	stop, err := AnswerGate(as(t, srv, u.Submit), session, console, signer)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	done := waitVerdict(t, fleetGate(t, srv, u, session, signer))
	recv(t, console.asked, "the console asked")
	recv(t, asked, "the intruder asked")
	recv(t, asked, "the intruder asked again") // refused, and asked again: the console has it twice
	close(ready)
	v := recv(t, done, "the verdict")
	if v.Action != engine.Skip {
		t.Fatalf("verdict %+v, want the console's skip", v)
	}
	if len(v.Refused) != 1 {
		t.Errorf("verdict %+v, want one refusal", v)
	}
	if why := recv(t, console.taken, "the console told"); why != "" {
		t.Errorf("the console was told its answer was not taken: %s", why)
	}
	as(t, srv, u.Operator).Flush()
	select {
	case m := <-written:
		t.Errorf("the run wrote %q to %s, the reply subject of a refused answer", m.Data, target)
	default:
	}
}

// recv receives from ch, or fails the test after a minute saying what did
// not come.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s: nothing after a minute", what)
	}
	var zero T
	return zero
}

// TestSilentQueueMembersHoldNoPause (issue 52, hole 10): twenty
// connections of the submit user join the consoles' queue group and never
// answer; each of three pauses still reaches the console that may answer
// it, at once (the gate asks again only after an hour here), and the
// console is told each answer was taken.
func TestSilentQueueMembersHoldNoPause(t *testing.T) {
	u, srv := usersServer(t)
	signer, err := LoadOrMakeSigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const session = "silent"
	for range 20 {
		nc := as(t, srv, u.Submit)
		if _, err := nc.QueueSubscribe(GateSubject(session), "agentty.console", func(*nats.Msg) {}); err != nil {
			t.Fatal(err)
		}
		nc.Flush()
	}
	ready := make(chan struct{})
	close(ready)
	console := &oneVerdict{verdict: engine.Verdict{Action: engine.Skip}, ready: ready, asked: make(chan engine.Pending, 1), taken: make(chan string, 8)}
	stop, err := AnswerGate(as(t, srv, u.Submit), session, console, signer)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	g := fleetGate(t, srv, u, session, signer)
	for i := range 3 {
		if v := recv(t, waitVerdict(t, g), "the verdict"); v.Action != engine.Skip {
			t.Fatalf("pause %d: verdict %+v, want the console's skip", i, v)
		}
		if why := recv(t, console.taken, "the console told"); why != "" {
			t.Errorf("pause %d: the console was told its answer was not taken: %s", i, why)
		}
	}
}

// TestStolenSignatureIsRefused (issue 52, 15): every reply a console
// sends is signed and readable by the submit user (_INBOX.>), {"again":true}
// too. The submitter's console hands a pause back (again, signed); another
// submit user takes that signature and sends it under a proceed when the
// pause is asked again: refused, and the submitter's next console answers.
func TestStolenSignatureIsRefused(t *testing.T) {
	u, srv := usersServer(t)
	signer, err := LoadOrMakeSigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const session = "stolen"
	intruder := as(t, srv, u.Submit)
	var sig atomic.Pointer[nats.Header]
	if _, err := intruder.Subscribe("_INBOX.>", func(m *nats.Msg) {
		if string(m.Data) == `{"again":true}` && m.Header.Get(sigHeader) != "" {
			sig.CompareAndSwap(nil, &m.Header)
		}
	}); err != nil {
		t.Fatal(err)
	}
	forged := make(chan struct{})
	var once atomic.Bool
	if _, err := intruder.Subscribe(GateSubject(session), func(m *nats.Msg) {
		if h := sig.Load(); h != nil && once.CompareAndSwap(false, true) {
			m.RespondMsg(&nats.Msg{Data: []byte(`{"action":"proceed"}`), Header: *h})
			close(forged)
		}
	}); err != nil {
		t.Fatal(err)
	}
	intruder.Flush()
	first := &oneVerdict{ready: make(chan struct{}), asked: make(chan engine.Pending, 1), taken: make(chan string, 8)}
	stopFirst, err := AnswerGate(as(t, srv, u.Submit), session, first, signer)
	if err != nil {
		t.Fatal(err)
	}
	done := waitVerdict(t, fleetGate(t, srv, u, session, signer))
	<-first.asked
	stopFirst() // hands the pause back: again, signed
	select {    // the pause asked again, answered with that signature
	case <-forged:
	case <-time.After(time.Minute):
		t.Fatal("the intruder never saw a signed again, or never a pause asked again")
	}
	ready := make(chan struct{})
	close(ready)
	second := &oneVerdict{verdict: engine.Verdict{Action: engine.Skip}, ready: ready, asked: make(chan engine.Pending, 1), taken: make(chan string, 8)}
	stop, err := AnswerGate(as(t, srv, u.Submit), session, second, signer)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if v := <-done; v.Action != engine.Skip || len(v.Refused) != 1 {
		t.Errorf("verdict %+v, want the second console's skip and the forged proceed refused", v)
	}
}
