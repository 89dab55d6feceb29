package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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

// GateRequest is a pause on the wire: engine.Pending, with stable names.
type GateRequest struct {
	Session   string           `json:"session"`
	Run       string           `json:"run"`
	Agent     string           `json:"agent,omitempty"`
	ParentRun string           `json:"parent_run,omitempty"`
	Step      int              `json:"step"`
	At        engine.Phase     `json:"at"`
	ToolCall  *engine.ToolCall `json:"tool_call,omitempty"`
	Approval  bool             `json:"approval,omitempty"`
	Rerun     bool             `json:"rerun,omitempty"`
}

// NewGateRequest is p on the wire.
func NewGateRequest(p engine.Pending) GateRequest {
	return GateRequest{Session: p.Session, Run: p.Run, Agent: p.Agent, ParentRun: p.ParentRun, Step: p.Step,
		At: p.At, ToolCall: p.ToolCall, Approval: p.Approval, Rerun: p.Rerun}
}

// Pending is the pause r stands for.
func (r GateRequest) Pending() engine.Pending {
	return engine.Pending{Session: r.Session, Run: r.Run, Agent: r.Agent, ParentRun: r.ParentRun, Step: r.Step,
		At: r.At, ToolCall: r.ToolCall, Approval: r.Approval, Rerun: r.Rerun}
}

// GateReply is a console's answer: a verdict (Action, Args), or Error (the
// run ends with it), or Again: the console that took the request is going
// away without an answer, and the request is to be asked again.
type GateReply struct {
	Action engine.Action   `json:"action,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	Error  string          `json:"error,omitempty"`
	Again  bool            `json:"again,omitempty"`
}

// verdict checks r and returns its verdict.
func (r GateReply) verdict() (engine.Verdict, error) {
	switch r.Action {
	case "", engine.Proceed, engine.Skip, engine.Deny, engine.Abort:
	default:
		return engine.Verdict{}, fmt.Errorf("action %q is none of proceed, skip, deny, abort", r.Action)
	}
	if r.Args != nil && !json.Valid(r.Args) {
		return engine.Verdict{}, errors.New("args are not JSON")
	}
	return engine.Verdict{Action: r.Action, Args: r.Args}, nil
}

// RemoteGate is an engine.Gate whose pauses are answered over NATS by a
// console watching the session. It is safe for concurrent use.
type RemoteGate struct {
	nc      *nats.Conn
	session string
	step    bool
	timeout time.Duration
	// retry is how long Wait waits before asking again when no console
	// listens (one second; tests make it shorter).
	retry time.Duration
}

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
func (g *RemoteGate) Stop(p engine.Pending) bool { return g.step || p.Approval }

// Wait implements engine.Gate: it asks for a verdict on the gate subject
// and waits for the answer. With no console listening it asks again every
// second; a console that goes away while it holds the pause says so, and
// it is asked again. Past the timeout its error is ErrNoConsole (and
// context.Canceled). It returns ctx's error when ctx is done first.
func (g *RemoteGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	if p.Session == "" {
		p.Session = g.session
	}
	data, err := json.Marshal(NewGateRequest(p))
	if err != nil {
		return engine.Verdict{}, fmt.Errorf("bus: gate of session %s: %w", g.session, err)
	}
	wctx := ctx
	if g.timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	subject := GateSubject(g.session)
	for {
		msg, err := g.nc.RequestWithContext(wctx, subject, data)
		switch {
		case ctx.Err() != nil:
			return engine.Verdict{}, ctx.Err()
		case wctx.Err() != nil:
			return engine.Verdict{}, &noConsoleError{g.session, g.timeout}
		case errors.Is(err, nats.ErrNoResponders):
			t := time.NewTimer(g.retry)
			select {
			case <-t.C:
			case <-wctx.Done():
				t.Stop()
			}
			continue
		case err != nil:
			return engine.Verdict{}, fmt.Errorf("bus: gate of session %s: %w", g.session, err)
		}
		var r GateReply
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			return engine.Verdict{}, fmt.Errorf("bus: gate of session %s: the console's answer is not JSON: %w", g.session, err)
		}
		if r.Again { // after a while: the next console may not be there yet
			t := time.NewTimer(g.retry)
			select {
			case <-t.C:
			case <-wctx.Done():
				t.Stop()
			}
			continue
		}
		if r.Error != "" {
			return engine.Verdict{}, fmt.Errorf("bus: gate of session %s: the console: %s", g.session, r.Error)
		}
		v, err := r.verdict()
		if err != nil {
			return engine.Verdict{}, fmt.Errorf("bus: gate of session %s: the console's answer: %w", g.session, err)
		}
		return v, nil
	}
}

// AnswerGate answers the pauses asked on GateSubject(session) with g, as
// one of the queue group of consoles (so that two consoles do not both
// answer one pause): a pause g would not stop at (and no approval) goes on
// at once; the others wait for g's verdict, each on its own goroutine. stop
// ends the subscription; pauses still waiting are told to ask again, for
// another console to answer. stop waits for the answers to be sent.
func AnswerGate(nc *nats.Conn, session string, g engine.Gate) (stop func(), err error) {
	ctx, cancel := context.WithCancel(context.Background())
	var (
		wg      sync.WaitGroup // the pauses being waited on
		mu      sync.Mutex     // guards stopped, and wg.Add against wg.Wait
		stopped bool
	)
	respond := func(msg *nats.Msg, r GateReply) {
		b, _ := json.Marshal(r)
		msg.Respond(b)
	}
	sub, err := nc.QueueSubscribe(GateSubject(session), gateQueue, func(msg *nats.Msg) {
		if msg.Reply == "" {
			return // not a request: nobody to answer
		}
		var req GateRequest
		if err := json.Unmarshal(msg.Data, &req); err != nil {
			respond(msg, GateReply{Error: "the pause is not JSON: " + err.Error()})
			return
		}
		if req.Session != session { // another session whose subject token is the same
			respond(msg, GateReply{Again: true})
			return
		}
		p := req.Pending()
		if !g.Stop(p) && !p.Approval {
			respond(msg, GateReply{Action: engine.Proceed})
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			respond(msg, GateReply{Again: true})
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := g.Wait(ctx, p)
			switch {
			case err == nil:
				respond(msg, GateReply{Action: v.Action, Args: v.Args})
			case ctx.Err() != nil:
				respond(msg, GateReply{Again: true})
			default:
				respond(msg, GateReply{Error: err.Error()})
			}
		}()
	})
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
			mu.Lock()
			stopped = true
			mu.Unlock()
			sub.Unsubscribe()
			cancel()
			wg.Wait()
			nc.Flush()
		})
	}, nil
}
