package bus

// A question of a run on a worker (ask_user) waits for its answer on NATS:
// `agentty answer SESSION TEXT` sends one on agentty.ask.SESSION, and the
// waiting run replies that it took it. The question is in the journal, so
// a run continued by another worker (this one died) asks it again.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentty/agentty/engine"
)

// AskPrefix starts the subject a session's questions are answered on.
const AskPrefix = "agentty.ask"

// AskSubject is the subject the questions of session are answered on.
func AskSubject(session string) string { return AskPrefix + "." + Token(session) }

// AnswerMsg is an answer sent to a waiting question.
type AnswerMsg struct {
	Session string `json:"session"`
	Answer  string `json:"answer"`
	By      string `json:"by,omitempty"`
	// Refused: the person chose not to answer; the model is told so.
	Refused bool `json:"refused,omitempty"`
	// Hello asks the waiting run for its question and nonce, taking
	// nothing: an answer is then signed over the nonce (steer.go).
	Hello bool   `json:"hello,omitempty"`
	Nonce string `json:"nonce,omitempty"`
}

// AnswerReply is what the waiting run says: the question it answered (or,
// to a hello, asks, with the nonce to sign), or why it did not take the
// answer.
type AnswerReply struct {
	Question string   `json:"question,omitempty"`
	Nonce    string   `json:"nonce,omitempty"`
	Steer    Steerers `json:"steer,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// askKind is what a question's signed answer answers.
const askKind = "ask"

// AwaitAnswer waits on nc for the answer to q, a question of session, until
// ctx ends. It blocks the run's goroutine, not a loop: the answer comes as
// a message. With steer, it takes only an answer signed by one of them
// over this wait's nonce; the others are refused, and the verdict (or, when
// ctx ends, the zero verdict returned with its error) says so.
func AwaitAnswer(ctx context.Context, nc *nats.Conn, session string, q *engine.Question, steer Steerers) (engine.Verdict, error) {
	ch := make(chan *nats.Msg, 8)
	sub, err := nc.ChanSubscribe(AskSubject(session), ch)
	if err != nil {
		return engine.Verdict{}, err
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		return engine.Verdict{}, err
	}
	nonce := newPauseID()
	var refused []string
	for {
		select {
		case <-ctx.Done():
			return engine.Verdict{Refused: refused}, ctx.Err()
		case m := <-ch:
			var a AnswerMsg
			if err := json.Unmarshal(m.Data, &a); err != nil || a.Session != session {
				replyJSON(m, AnswerReply{Error: "not an answer to this session's question"})
				continue
			}
			if a.Hello {
				replyJSON(m, AnswerReply{Question: q.Question, Nonce: nonce, Steer: steer})
				continue
			}
			if err := steer.check(askKind, session, nonce, m); err != nil {
				refused = refuse(refused, fmt.Sprintf("an answer to %q: %v", engine.OneLine(q.Question, 80), err))
				replyJSON(m, AnswerReply{Error: "refused: " + err.Error()})
				continue
			}
			replyJSON(m, AnswerReply{Question: q.Question})
			if a.Refused {
				return engine.Verdict{Action: engine.Deny, Refused: refused}, nil
			}
			return engine.Verdict{Action: engine.Proceed, Answer: a.Answer, By: cmpOr(a.By, "agentty answer"), Refused: refused}, nil
		}
	}
}

func replyJSON(m *nats.Msg, v any) {
	if m.Reply == "" {
		return
	}
	b, _ := json.Marshal(v)
	m.Respond(b)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ErrNoQuestion is SendAnswer's error when no question of the session is
// waiting.
var ErrNoQuestion = errors.New("no question of this session is waiting for an answer")

// ErrMayNotSteer is SendAnswer's error when the run takes answers only
// from keys that signer is not.
var ErrMayNotSteer = errors.New("this session's questions are answered by whoever submitted its run (or the operator): this data folder's steering key is not theirs")

// SendAnswer answers the question session's run waits on, signed by
// signer, and returns the question it answered.
func SendAnswer(ctx context.Context, nc *nats.Conn, session, answer, by string, signer *Signer) (string, error) {
	return sendAnswer(ctx, nc, AnswerMsg{Session: session, Answer: answer, By: by}, signer)
}

// SendRefusal tells the run of session that its question gets no answer.
func SendRefusal(ctx context.Context, nc *nats.Conn, session, by string, signer *Signer) error {
	_, err := sendAnswer(ctx, nc, AnswerMsg{Session: session, By: by, Refused: true}, signer)
	return err
}

// sendAnswer asks the waiting run for its nonce, then sends msg signed
// over it.
func sendAnswer(ctx context.Context, nc *nats.Conn, msg AnswerMsg, signer *Signer) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	hello, err := askRequest(ctx, nc, msg.Session, &nats.Msg{Data: mustJSON(AnswerMsg{Session: msg.Session, Hello: true})})
	if err != nil {
		return "", err
	}
	msg.Nonce = hello.Nonce
	// Sent even when signer may not steer the run: the run refuses it
	// and journals the refusal, as it does every answer it does not take.
	r, err := askRequest(ctx, nc, msg.Session, signer.sign(askKind, msg.Session, hello.Nonce, mustJSON(msg)))
	if err != nil && len(hello.Steer) > 0 && !hello.Steer.may(signer) {
		return "", ErrMayNotSteer
	}
	if err != nil {
		return "", err
	}
	return r.Question, nil
}

// askRequest sends m on session's question subject and reads the reply.
func askRequest(ctx context.Context, nc *nats.Conn, session string, m *nats.Msg) (AnswerReply, error) {
	m.Subject = AskSubject(session)
	reply, err := nc.RequestMsgWithContext(ctx, m)
	if errors.Is(err, nats.ErrNoResponders) {
		return AnswerReply{}, ErrNoQuestion
	}
	if err != nil {
		return AnswerReply{}, err
	}
	var r AnswerReply
	if err := json.Unmarshal(reply.Data, &r); err != nil {
		return r, fmt.Errorf("a reply that is not one: %v", err)
	}
	if r.Error != "" {
		return r, errors.New(r.Error)
	}
	return r, nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
