package engine

// Asking the person: the tool ask_user pauses the run on the gate, as an
// approval does, until the person answers (or AskTimeout passes); the
// question and the answer are journaled.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// AskUserTool asks the person a question: {"question", "choices"?,
// "default"?}.
const AskUserTool = "ask_user"

// The events of a question.
const (
	KindQuestionAsked    Kind = "question_asked"
	KindQuestionAnswered Kind = "question_answered"
)

// Question is what a run asks the person.
type Question struct {
	Question string   `json:"question"`
	Choices  []string `json:"choices,omitempty"`
	Default  string   `json:"default,omitempty"`
}

// QuestionAsked is the payload of question_asked: the call that asks, and
// the question.
type QuestionAsked struct {
	ID string `json:"id"`
	Question
}

// QuestionAnswered is the payload of question_answered: the answer, who
// gave it, or that none came in time.
type QuestionAnswered struct {
	ID       string `json:"id"`
	Answer   string `json:"answer,omitempty"`
	By       string `json:"by,omitempty"`
	TimedOut bool   `json:"timed_out,omitempty"`
	Refused  string `json:"refused,omitempty"` // why there is no answer
	// Rejected are answers that came and were not taken, with why (one not
	// signed by whoever may steer the session).
	Rejected []string `json:"rejected,omitempty"`
}

// AskUser is the tool ask_user, which the engine answers itself through
// its gate; offer it where there is someone to ask.
func AskUser() Tool {
	return Tool{
		Name:        AskUserTool,
		Description: "Ask the person a question and wait for the answer: when you need a fact or a decision only they have. Give choices when the answer is one of a few.",
		Schema: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string","minLength":1},` +
			`"choices":{"type":"array","items":{"type":"string"}},"default":{"type":"string"}},"required":["question"],"additionalProperties":false}`),
		Policy: PolicyAllow,
		Inline: true,
		// Asked again when the run is continued: a question has no effect
		// to repeat.
		Repeatable: true,
		builtin:    toolAsk,
		Func: func(context.Context, *Call) (string, error) {
			return "", errors.New("ask_user is answered by the engine")
		},
	}
}

// askPerson asks the person the question of call (the i-th of its decision) on
// the gate and gives the answer to the model as the call's result.
func (r *run) askPerson(ctx context.Context, i int, call ToolCall) error {
	var q Question
	fin := ToolFinished{Index: i, ID: call.ID, Name: call.Name, Status: ToolOK}
	if err := json.Unmarshal(call.Args, &q); err != nil {
		fin.Status, fin.Result = ToolError, "error: "+err.Error()
		return r.emitFinished(fin)
	}
	if err := r.emit(Act, KindQuestionAsked, &QuestionAsked{ID: call.ID, Question: q}); err != nil {
		return err
	}
	if err := r.flush(); err != nil { // the question is out before the wait for its answer
		return err
	}
	ans := QuestionAnswered{ID: call.ID}
	if r.e.cfg.Gate == nil {
		ans.Refused = "there is no one to ask here"
	} else {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if d := r.e.cfg.AskTimeout; d > 0 {
			actx, cancel = context.WithTimeout(ctx, d)
		}
		v, err := r.e.cfg.Gate.Wait(actx, Pending{Session: r.s.ID, Run: r.id, Agent: r.s.Agent, Step: r.step, At: Act, ToolCall: &call, Question: &q})
		cancel()
		ans.Rejected = v.Refused
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && errors.Is(err, context.DeadlineExceeded):
			ans.TimedOut = true
		case err != nil:
			ans.Refused = err.Error()
		case v.Action == Abort:
			return errAborted
		case v.Action != Proceed:
			ans.Refused = "the person did not answer"
		default:
			ans.Answer, ans.By = v.Answer, v.By
		}
	}
	if err := r.emit(Act, KindQuestionAnswered, &ans); err != nil {
		return err
	}
	switch {
	case ans.TimedOut:
		fin.Status, fin.Result = ToolError, fmt.Sprintf("error: no answer within %s", r.e.cfg.AskTimeout.Round(time.Second))
	case ans.Refused != "":
		fin.Status, fin.Result = ToolError, "error: no answer: "+ans.Refused
	default:
		fin.Result = ans.Answer
	}
	return r.emitFinished(fin)
}

// answerOwn answers a call of the engine's own tools that is not a
// sub-run: a handoff, or a question for the person. It reports, as admit
// does, whether the run was aborted and how it stops.
func (r *run) answerOwn(ctx context.Context, i int, own builtin, call ToolCall) (bool, StopReason, error) {
	if own == toolTransfer {
		err := r.transfer(i, call)
		return false, stopOn(err), err
	}
	switch err := r.askPerson(ctx, i, call); {
	case errors.Is(err, errAborted):
		return true, StopCancelled, err
	case err != nil:
		return false, stopFor(ctx, err), err
	}
	return false, "", nil
}
