package bus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/nats-io/nats.go"
)

// maxAnswered bounds the answers a console keeps, to give again to a
// pause asked again after its answer was lost.
const maxAnswered = 256

// consoleQueue is the queue group the consoles of signer's key answer
// session's pauses in: one request, one answer, however many of them
// watch. Its name is made from the key's secret half, so that nobody
// without the key can join it and take the pauses away from the consoles
// that may answer them (each queue group, and each subscriber in none,
// gets every request). Without a key, the consoles of this process share
// "agentty.console".
func consoleQueue(signer *Signer, session string) string {
	if signer == nil {
		return "agentty.console"
	}
	h := sha256.New()
	h.Write([]byte("agentty console queue v1\x00"))
	h.Write(signer.key.Seed())
	h.Write([]byte("\x00" + session))
	return "agentty.console." + hex.EncodeToString(h.Sum(nil)[:16])
}

// AnswerGate answers the pauses asked on GateSubject(session) with g, as
// one of the queue group of signer's consoles (consoleQueue: two consoles
// of one key do not both answer a pause, and others' subscriptions do not
// take it from them): a pause g would not stop at (and no approval) goes
// on at once; the others wait for g's verdict, each on its own goroutine.
// An answer is sent as a request: the run says whether it took it, and a
// g that is an Answered is told.
//
// A pause asked again (the same ID) while g still waits on it is the same
// pause: g is not asked twice, and the verdict answers the latest request,
// the one the run waits on. One asked again after it was answered (the
// answer was lost) gets the same answer again at once. A pause this
// console never saw is asked of g.
//
// stop ends the subscription; pauses still waiting are told to ask again,
// for another console to answer. stop waits for the answers to be sent.
func AnswerGate(nc *nats.Conn, session string, g engine.Gate, signer *Signer) (stop func(), err error) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &answerer{nc: nc, ctx: ctx, session: session, g: g, signer: signer, waiting: map[string]*nats.Msg{}, answered: map[string]GateReply{}, seen: map[string]bool{}, took: map[string]bool{}}
	sub, err := nc.QueueSubscribe(GateSubject(session), consoleQueue(signer, session), a.handle)
	if err == nil {
		err = nc.Flush() // the server has the subscription before anyone relies on it
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("bus: answer the gate of session %s: %w", session, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			a.stopped = true
			a.mu.Unlock()
			sub.Unsubscribe()
			cancel()
			a.wg.Wait()
			nc.Flush()
		})
	}, nil
}

// Watcher is a gate told of the pauses it may not answer (another's run):
// the console shows that the run waits, and for whom.
type Watcher interface {
	Watching(p engine.Pending)
}

// watched tells the gate, once per pause, of a pause it may not answer.
func (a *answerer) watched(id string, p engine.Pending) {
	w, ok := a.g.(Watcher)
	if !ok {
		return
	}
	a.mu.Lock()
	seen := a.seen[id]
	if !seen {
		if len(a.seen) >= maxAnswered {
			clear(a.seen)
		}
		a.seen[id] = true
	}
	a.mu.Unlock()
	if !seen {
		w.Watching(p)
	}
}

// answerer answers the pauses of one session's runs with a gate (see
// AnswerGate).
type answerer struct {
	nc       *nats.Conn
	ctx      context.Context // cancelled when AnswerGate's stop is called
	session  string
	g        engine.Gate
	signer   *Signer        // signs the answers; nil: unsigned
	wg       sync.WaitGroup // the pauses being waited on
	mu       sync.Mutex     // guards the fields below, and wg.Add against wg.Wait
	stopped  bool
	waiting  map[string]*nats.Msg // by pause ID: the latest request of a pause g holds
	answered map[string]GateReply // by pause ID: answers given, the latest maxAnswered
	seen     map[string]bool      // by pause ID: pauses told to a Watcher
	order    []string             // the IDs of answered, oldest first
	tookMu   sync.Mutex           // guards took (reported from acks' goroutines)
	took     map[string]bool      // by pause ID: answers the run said it took
}

// Answered is a console's gate told whether the run took the answer it
// gave at a pause: taken, or not (why: refused, or the run no longer
// waits on that request, or it said nothing). An answer not taken is given
// again when the run asks again.
type Answered interface {
	Answered(p engine.Pending, taken bool, why string)
}

// ackWait bounds how long a console waits for the run to say it took an
// answer.
const ackWait = 5 * time.Second

// answer gives r, the verdict on pause p, to msg, a request of pause id,
// signed and as a request: on its own goroutine it waits for the run to
// say whether it took it, and tells a gate that is an Answered (once it
// was taken, not again). It is called with a.mu held or from a goroutine
// of a.wg.
func (a *answerer) answer(msg *nats.Msg, id string, p engine.Pending, r GateReply) {
	b, _ := json.Marshal(r)
	m := a.signer.sign(gateKind, a.session, id, b)
	m.Subject = msg.Reply
	m.Reply = a.nc.NewInbox()
	sub, err := a.nc.SubscribeSync(m.Reply)
	if err == nil {
		err = a.nc.PublishMsg(m)
	}
	if err != nil {
		if sub != nil {
			sub.Unsubscribe()
		}
		a.report(id, p, false, fmt.Sprintf("the answer was not sent: %v", err))
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer sub.Unsubscribe()
		ctx, cancel := context.WithTimeout(a.ctx, ackWait)
		defer cancel()
		var t GateTaken
		ack, err := sub.NextMsgWithContext(ctx)
		switch {
		case err != nil:
			t.Why = "the run said nothing of it: it takes the answer when it asks again"
		case ack.Header.Get("Status") == "503":
			t.Why = "the run no longer waits on that request: it took another answer, or asks again"
		case json.Unmarshal(ack.Data, &t) != nil:
			t = GateTaken{Why: "the run's word on it is not one"}
		}
		a.report(id, p, t.Taken, t.Why)
	}()
}

// report tells the gate whether the answer to pause id was taken, unless
// it was taken already.
func (a *answerer) report(id string, p engine.Pending, taken bool, why string) {
	w, ok := a.g.(Answered)
	if !ok {
		return
	}
	if id != "" {
		a.tookMu.Lock()
		was := a.took[id]
		if taken {
			a.took[id] = true
		}
		a.tookMu.Unlock()
		if was {
			return
		}
	}
	w.Answered(p, taken, why)
}

// respond answers msg, a request of pause id, with r signed.
func (a *answerer) respond(msg *nats.Msg, id string, r GateReply) {
	b, _ := json.Marshal(r)
	msg.RespondMsg(a.signer.sign(gateKind, a.session, id, b))
}

// handle answers one request of a pause: at once when the gate would not
// stop there, with the answer given when the request is a repeat, else
// when the gate's Wait returns.
func (a *answerer) handle(msg *nats.Msg) {
	if msg.Reply == "" {
		return // not a request: nobody to answer
	}
	var req GateRequest
	if err := json.Unmarshal(msg.Data, &req); err != nil {
		a.respond(msg, "", GateReply{Again: true}) // not this console's to end the run
		return
	}
	// The pause as shown is what an answer is signed over: a pause sent
	// under another's id with other content is another pause.
	id := ""
	if req.ID != "" {
		id = gateNonce(req.ID, msg.Data)
	}
	if req.Session != a.session {
		a.respond(msg, id, GateReply{Again: true}) // another session whose subject token is the same
		return
	}
	if len(req.Steer) > 0 && !req.Steer.may(a.signer) {
		// A run this console may only watch: for a console that may
		// answer. The console is told once that the run waits there.
		a.respond(msg, id, GateReply{Again: true})
		a.watched(id, req.Pending())
		return
	}
	p := req.Pending()
	if !a.g.Stop(p) && !p.Approval && p.Break == "" {
		a.respond(msg, id, GateReply{Action: engine.Proceed, Release: true})
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		a.respond(msg, id, GateReply{Again: true})
		return
	}
	if id != "" {
		if r, ok := a.answered[id]; ok {
			a.answer(msg, id, p, r)
			return
		}
		if _, ok := a.waiting[id]; ok {
			a.waiting[id] = msg // the run now waits on this request
			return
		}
		a.waiting[id] = msg
	}
	a.wg.Add(1)
	go a.wait(msg, id, p)
}

// wait asks the gate about pause p and answers its latest request (msg,
// when it has no id), remembering the answer for the requests that repeat
// it.
func (a *answerer) wait(msg *nats.Msg, id string, p engine.Pending) {
	defer a.wg.Done()
	v, err := a.g.Wait(a.ctx, p)
	var r GateReply
	switch {
	case err == nil:
		r = GateReply{Action: v.Action, Args: v.Args, Result: v.Result, By: v.By, Edit: v.Edit, Release: !a.g.Stop(p)}
	case a.ctx.Err() != nil:
		r = GateReply{Again: true}
	default:
		r = GateReply{Error: err.Error()}
	}
	a.mu.Lock()
	to := msg
	if id != "" {
		to = a.waiting[id]
		delete(a.waiting, id)
		if !r.Again {
			a.answered[id] = r
			a.order = append(a.order, id)
			if len(a.order) > maxAnswered {
				delete(a.answered, a.order[0])
				a.tookMu.Lock()
				delete(a.took, a.order[0])
				a.tookMu.Unlock()
				a.order = a.order[1:]
			}
		}
	}
	a.mu.Unlock()
	if r.Again {
		a.respond(to, id, r)
		return
	}
	a.answer(to, id, p, r)
}
