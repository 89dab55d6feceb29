package bus

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/nats-io/nats.go"
)

// Remote stepping: a run on a worker pauses at its gate and asks over NATS
// request/reply, on agentty.gate.<session>, for a console watching that
// session to answer. The request is the pause (GateRequest), the reply the
// verdict (GateReply).

// GatePrefix is the first two tokens of a gate subject.
const GatePrefix = "agentty.gate"

// gateQueue is the queue group consoles answer in: one request, one answer,
// however many consoles watch the session.
const gateQueue = "agentty.console"

// GateSubject is the subject the pauses of session are asked on.
func GateSubject(session string) string { return GatePrefix + "." + Token(session) }

// ErrNoConsole is what RemoteGate.Wait's error is, when no console answered
// within its timeout. It is also context.Canceled (errors.Is), so that the
// engine ends the run with stop reason cancelled, the error its reason.
var ErrNoConsole = errors.New("no console answered")

// noConsoleError is ErrNoConsole for one session and timeout.
type noConsoleError struct {
	session string
	timeout time.Duration
}

func (e *noConsoleError) Error() string {
	return fmt.Sprintf("the run paused for a console watching session %s (agentty watch %s), and none answered within %v", e.session, e.session, e.timeout)
}

func (e *noConsoleError) Is(target error) bool {
	return target == ErrNoConsole || target == context.Canceled
}

// GateRequest is a pause on the wire: engine.Pending, with stable names,
// and the pause's ID. A gate asks again while no answer comes (the console
// that took the request may have died without a word, or the answer may
// have been lost in a reconnect), every time with the same ID: a console
// that shows that pause already takes the new request as the same pause.
type GateRequest struct {
	ID        string           `json:"id,omitempty"`
	Session   string           `json:"session"`
	Run       string           `json:"run"`
	Agent     string           `json:"agent,omitempty"`
	ParentRun string           `json:"parent_run,omitempty"`
	Step      int              `json:"step"`
	At        engine.Phase     `json:"at"`
	ToolCall  *engine.ToolCall `json:"tool_call,omitempty"`
	Approval  bool             `json:"approval,omitempty"`
	Rerun     bool             `json:"rerun,omitempty"`
	Break     string           `json:"break,omitempty"`
	Answer    string           `json:"answer,omitempty"`
	// Steer are the keys whose answers the run takes (its submitter's and
	// the operator's): a console whose key is not among them leaves the
	// pause to one that may answer it. Empty: any console answers.
	Steer Steerers `json:"steer,omitempty"`
	// Request is the model request a pause before a decision is about
	// (the console's inspector shows and edits it); left out when it
	// would make the pause larger than MaxGateRequest.
	Request *engine.Request `json:"request,omitempty"`
}

// MaxGateRequest bounds a pause on the wire, and so does the server's own
// limit on a message (1 MB by default): a model request that would make the
// pause larger is not sent with it.
const MaxGateRequest = 512 << 10

// NewGateRequest is p on the wire.
func NewGateRequest(p engine.Pending) GateRequest {
	return GateRequest{Session: p.Session, Run: p.Run, Agent: p.Agent, ParentRun: p.ParentRun, Step: p.Step,
		At: p.At, ToolCall: p.ToolCall, Approval: p.Approval, Rerun: p.Rerun, Break: p.Break, Answer: p.Answer,
		Request: p.Request}
}

// encode is r as JSON, without its model request when with it r would be
// larger than limit.
func (r GateRequest) encode(limit int) ([]byte, error) {
	data, err := json.Marshal(r)
	if err == nil && len(data) > limit && r.Request != nil {
		r.Request = nil
		data, err = json.Marshal(r)
	}
	return data, err
}

// Pending is the pause r stands for.
func (r GateRequest) Pending() engine.Pending {
	return engine.Pending{Session: r.Session, Run: r.Run, Agent: r.Agent, ParentRun: r.ParentRun, Step: r.Step,
		At: r.At, ToolCall: r.ToolCall, Approval: r.Approval, Rerun: r.Rerun, Break: r.Break, Answer: r.Answer,
		Request: r.Request}
}

// GateReply is a console's answer: a verdict (Action, Args), or Error (the
// run ends with it), or Again: the console that took the request is going
// away without an answer, and the request is to be asked again. Release
// comes with a verdict when the console would no longer stop the run
// ("c" at a pause, step mode turned off there): the run stops asking at
// its steps, whether that console stays or not; approvals still ask.
type GateReply struct {
	Action  engine.Action   `json:"action,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"`
	Result  string          `json:"result,omitempty"` // what Respond answers for the tool
	By      string          `json:"by,omitempty"`
	Error   string          `json:"error,omitempty"`
	Again   bool            `json:"again,omitempty"`
	Release bool            `json:"release,omitempty"`
	// Edit changes this decision's request (the inspector's edits).
	Edit *engine.RequestEdit `json:"edit,omitempty"`
}

// verdict checks r and returns its verdict.
func (r GateReply) verdict() (engine.Verdict, error) {
	switch r.Action {
	case "", engine.Proceed, engine.Skip, engine.Deny, engine.Abort, engine.Respond:
	default:
		return engine.Verdict{}, fmt.Errorf("action %q is none of proceed, skip, deny, abort, respond", r.Action)
	}
	if r.Args != nil && !json.Valid(r.Args) {
		return engine.Verdict{}, errors.New("args are not JSON")
	}
	return engine.Verdict{Action: r.Action, Args: r.Args, Result: r.Result, By: r.By, Edit: r.Edit}, nil
}

// RemoteGate is an engine.Gate whose pauses are answered over NATS by a
// console watching the session. It is safe for concurrent use (set Ask
// before).
type RemoteGate struct {
	nc      *nats.Conn
	session string
	step    bool
	timeout time.Duration
	// retry is how long Wait waits before asking again when no console
	// listens (one second; tests make it shorter).
	retry time.Duration

	// released is set by a console's Release: no more step pauses.
	released atomic.Bool

	// Steer are the keys whose signed answers this gate takes (see
	// steer.go); any other answer is refused, said in the verdict's
	// Refused, and the pause asked again. Empty: every answer is taken.
	Steer Steerers

	// Ask bounds one request: when no answer has come after Ask, the
	// pause is asked again, with the same ID (DefaultAsk when 0). Without
	// it a console killed while it held the pause (SIGKILL, a closed
	// terminal, a dropped link: nothing is said) or an answer lost on
	// the way would leave the run waiting for ever.
	Ask time.Duration
}

// DefaultAsk is how long RemoteGate waits for the answer to one request
// before it asks again.
const DefaultAsk = 30 * time.Second

var _ engine.Gate = (*RemoteGate)(nil)

// NewRemoteGate returns a gate that asks on GateSubject(session): before
// every decision and tool call when step is set, and for every approval.
// timeout bounds one pause's wait for an answer (0: it waits as long as the
// run's context lets it).
func NewRemoteGate(nc *nats.Conn, session string, step bool, timeout time.Duration) *RemoteGate {
	return &RemoteGate{nc: nc, session: session, step: step, timeout: timeout, retry: time.Second}
}

// Stop implements engine.Gate: in step mode every pause; otherwise only
// approvals.
func (g *RemoteGate) Stop(p engine.Pending) bool {
	return p.Approval || g.step && !g.released.Load()
}

// newPauseID returns a pause's ID: random, so that two gates never share
// one.
func newPauseID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Wait implements engine.Gate: it asks for a verdict on the gate subject
// and waits for the answer. With no console listening it asks again every
// second; a console that goes away while it holds the pause says so, and
// it is asked again; a request unanswered for Ask is asked again at once.
// Every request of one pause has the pause's ID; the verdict is the first
// answer to the latest request (the answers to earlier ones are dropped),
// so exactly one takes effect. Past the timeout its error is ErrNoConsole
// (and context.Canceled). It returns ctx's error when ctx is done first.
func (g *RemoteGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	if p.Session == "" {
		p.Session = g.session
	}
	req := NewGateRequest(p)
	req.ID = newPauseID()
	req.Steer = g.Steer
	limit := MaxGateRequest
	if most := g.nc.MaxPayload(); most > 0 {
		limit = min(limit, int(most)-1024) // the server's own limit, with room for the headers
	}
	data, err := req.encode(limit)
	if err != nil {
		return engine.Verdict{}, fmt.Errorf("bus: gate of session %s: %w", g.session, err)
	}
	wctx := ctx
	if g.timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	w := &gateWait{g: g, ctx: ctx, wctx: wctx, id: gateNonce(req.ID, data), step: p.Step, data: data}
	for {
		v, again, err := w.request()
		if err != nil || !again {
			return v, err
		}
	}
}

// gateNonce is what a pause's answer is signed over besides the session:
// its id and a hash of the pause as it was asked (the bytes the console
// showed), so that an answer to one pause is no answer to another sent
// under its id.
func gateNonce(id string, pause []byte) string {
	h := sha256.Sum256(pause)
	return id + ":" + hex.EncodeToString(h[:16])
}

// gateKind is what a pause's signed answer answers.
const gateKind = "gate"

// maxRefused bounds the refusals a verdict carries; past it the last one
// counts the rest.
const maxRefused = 16

// refuse adds why to refused, within maxRefused.
func refuse(refused []string, why string) []string {
	switch {
	case len(refused) < maxRefused-1:
		return append(refused, why)
	case len(refused) == maxRefused-1:
		return append(refused, "1 more answer refused")
	}
	var n int
	fmt.Sscanf(refused[maxRefused-1], "%d", &n)
	refused[maxRefused-1] = fmt.Sprintf("%d more answers refused", n+1)
	return refused
}

// what says what r answers, for a refusal: a word of ours, never the
// reply's own text (anyone's, of any size).
func (r GateReply) what() string {
	switch {
	case r.Error != "":
		return "an error"
	case r.Action == "":
		return string(engine.Proceed)
	}
	switch r.Action {
	case engine.Proceed, engine.Skip, engine.Deny, engine.Abort, engine.Respond:
		return string(r.Action)
	}
	return "an unknown action"
}

// maxAnswered bounds the answers a console keeps, to give again to a
// pause asked again after its answer was lost.
const maxAnswered = 256

// AnswerGate answers the pauses asked on GateSubject(session) with g, as
// one of the queue group of consoles (so that two consoles do not both
// answer one pause): a pause g would not stop at (and no approval) goes on
// at once; the others wait for g's verdict, each on its own goroutine.
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
	a := &answerer{ctx: ctx, session: session, g: g, signer: signer, waiting: map[string]*nats.Msg{}, answered: map[string]GateReply{}, seen: map[string]bool{}}
	sub, err := nc.QueueSubscribe(GateSubject(session), gateQueue, a.handle)
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
			a.respond(msg, id, r)
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
				a.order = a.order[1:]
			}
		}
	}
	a.mu.Unlock()
	a.respond(to, id, r)
}
