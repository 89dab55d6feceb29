package bus

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
