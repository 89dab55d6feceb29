package engine

import (
	"context"
	"encoding/json"
)

// Action is what a Gate decides at a pause.
type Action string

// Gate actions. Proceed goes on (with edited arguments when Verdict.Args is
// set); Skip answers the pending tool call with "skipped" instead of running
// it (at a decide pause it is the same as Proceed); Deny refuses an approval;
// Abort ends the run with stop reason cancelled.
const (
	Proceed Action = "proceed"
	Skip    Action = "skip"
	Deny    Action = "deny"
	Abort   Action = "abort"
	// Respond answers a pending tool call with Verdict.Result, as if the
	// tool had: the tool is not run (a person testing what the model does
	// with a given observation).
	Respond Action = "respond"
)

// PauseReason says why a run paused at the gate, in GatePaused.
type PauseReason string

// Pause reasons.
const (
	ReasonStep     PauseReason = "step"     // the gate asked to stop here
	ReasonApproval PauseReason = "approval" // the tool's policy is ask
	// ReasonInterrupted: a call an earlier process started and left
	// without a result (Pending.Rerun); it runs again only on the word
	// of whoever answers.
	ReasonInterrupted PauseReason = "interrupted"
)

// Pending is what a run is about to do when it consults the Gate: decide
// (ToolCall nil) or run a tool call.
type Pending struct {
	Session string
	Run     string
	// Agent is the agent the run runs as ("" for none); ParentRun is set
	// for a sub-run.
	Agent     string
	ParentRun string
	Step      int
	At        Phase
	ToolCall  *ToolCall
	// Approval is set when the tool's policy is Ask: the gate must answer
	// even if it would not stop otherwise.
	Approval bool
	// Rerun is set (with Approval) for a call that an earlier process
	// started and left with no result: running it again may repeat what it
	// did. Denied, the model is told the call was interrupted.
	Rerun bool
	// Question is set when the run asks the person (the tool ask_user):
	// the gate answers it with Verdict.Answer (Deny: no answer).
	Question *Question
	// Break is the breakpoint condition that stops the run here ("" for
	// none): the gate must answer, as for an approval.
	Break string
	// Request is, at a decide pause, the request about to be sent: the
	// gate may read it (not change it) and give an edit (Verdict.Edit).
	Request *Request
	// Answer is, at a pause before the answer (At Observe, a breakpoint
	// met by its text), the answer the run is about to give.
	Answer string
}

// Verdict is a Gate's answer.
type Verdict struct {
	Action Action
	// Args replaces the pending tool call's arguments; they are validated
	// against the tool's schema before the call.
	Args json.RawMessage
	// Answer answers a Pending's Question, given by By (the console, a
	// terminal, --answers, a watching console's person).
	Answer, By string
	// Result is what a Respond verdict answers for the tool.
	Result string
	// Edit changes the request of a decide pause for this decision only.
	Edit *RequestEdit
	// Refused are answers that came before this one and were not taken,
	// with why; journaled with the verdict (GateResumed.Refused).
	Refused []string
}

// Gate is consulted before each decide and each tool call. Stop must not
// block: it says whether Wait should be called. Wait blocks until the
// person (or a policy) decides, and must return when ctx is done. A nil Gate
// lets everything through, approvals included.
type Gate interface {
	Stop(p Pending) bool
	Wait(ctx context.Context, p Pending) (Verdict, error)
}
