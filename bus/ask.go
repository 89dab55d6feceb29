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
}

// AnswerReply is what the waiting run says: the question it answered, or
// why it did not take the answer.
type AnswerReply struct {
	Question string `json:"question,omitempty"`
	Error    string `json:"error,omitempty"`
}

// AwaitAnswer waits on nc for the answer to q, a question of session, until
// ctx ends. It blocks the run's goroutine, not a loop: the answer comes as
// a message.
func AwaitAnswer(ctx context.Context, nc *nats.Conn, session string, q *engine.Question) (engine.Verdict, error) {
	ch := make(chan *nats.Msg, 8)
	sub, err := nc.ChanSubscribe(AskSubject(session), ch)
	if err != nil {
		return engine.Verdict{}, err
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		return engine.Verdict{}, err
	}
	for {
		select {
		case <-ctx.Done():
			return engine.Verdict{}, ctx.Err()
		case m := <-ch:
			var a AnswerMsg
			if err := json.Unmarshal(m.Data, &a); err != nil || a.Session != session {
				replyJSON(m, AnswerReply{Error: "not an answer to this session's question"})
				continue
			}
			replyJSON(m, AnswerReply{Question: q.Question})
			if a.Refused {
				return engine.Verdict{Action: engine.Deny}, nil
			}
			return engine.Verdict{Action: engine.Proceed, Answer: a.Answer, By: cmpOr(a.By, "agentty answer")}, nil
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

// SendAnswer answers the question session's run waits on, and returns the
// question it answered.
func SendAnswer(ctx context.Context, nc *nats.Conn, session, answer, by string) (string, error) {
	return sendAnswer(ctx, nc, AnswerMsg{Session: session, Answer: answer, By: by})
}

// SendRefusal tells the run of session that its question gets no answer.
func SendRefusal(ctx context.Context, nc *nats.Conn, session, by string) error {
	_, err := sendAnswer(ctx, nc, AnswerMsg{Session: session, By: by, Refused: true})
	return err
}

func sendAnswer(ctx context.Context, nc *nats.Conn, msg AnswerMsg) (string, error) {
	session := msg.Session
	b, _ := json.Marshal(msg)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := nc.RequestWithContext(ctx, AskSubject(session), b)
	if errors.Is(err, nats.ErrNoResponders) {
		return "", ErrNoQuestion
	}
	if err != nil {
		return "", err
	}
	var r AnswerReply
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return "", fmt.Errorf("a reply that is not one: %v", err)
	}
	if r.Error != "" {
		return "", errors.New(r.Error)
	}
	return r.Question, nil
}
