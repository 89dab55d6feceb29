package engine

import (
	"encoding/json"
	"time"
)

// SchemaVersion is the version of the event format. It is written into every
// event so that a journal written by a newer agentty can be recognised.
const SchemaVersion = 1

// Phase is the part of the loop an event belongs to.
type Phase string

// The four phases of the loop. Events outside any phase (run started and
// finished) leave Phase empty.
const (
	Perceive Phase = "perceive"
	Decide   Phase = "decide"
	Act      Phase = "act"
	Observe  Phase = "observe"
)

// Kind names what an event reports. The names are stable: the journal, the
// --json output and the tests rely on them.
type Kind string

// Event kinds.
const (
	KindRunStarted     Kind = "run_started"
	KindStepStarted    Kind = "step_started"
	KindModelRequest   Kind = "model_request"
	KindTextDelta      Kind = "text_delta"
	KindDecision       Kind = "decision"
	KindToolStarted    Kind = "tool_started"
	KindToolFinished   Kind = "tool_finished"
	KindRetry          Kind = "retry"
	KindMemoryChanged  Kind = "memory_changed"
	KindContextTrimmed Kind = "context_trimmed"
	KindGatePaused     Kind = "gate_paused"
	KindGateResumed    Kind = "gate_resumed"
	KindUsage          Kind = "usage"
	KindStepFinished   Kind = "step_finished"
	KindRunFinished    Kind = "run_finished"
	// KindHandoff: the run goes on as another agent (the model called
	// transfer_to_NAME).
	KindHandoff Kind = "handoff"
	// KindContextCompacted: the oldest history is summarised; later
	// requests carry the summary in place of those messages.
	KindContextCompacted Kind = "context_compacted"
	// KindModelChanged: the session's next runs use another model (the
	// person's choice, /model).
	KindModelChanged Kind = "model_changed"
	// KindSettingsChanged: what the session is worked on with changed
	// between runs (the console journals it when it lets the session go:
	// an approval given for the session, a breakpoint set after its last
	// run); its payload is Settings.
	KindSettingsChanged Kind = "settings_changed"
	// KindCheckpoint: the workspace was kept before a step's tools that
	// may change it, at a run's end, or before a rewind (Checkpointed).
	KindCheckpoint Kind = "checkpoint"
	// Workflows (package workflow) frame a run that carries out a
	// declared workflow: its start, each step's end, its end.
	KindWorkflowStarted      Kind = "workflow_started"
	KindWorkflowStepFinished Kind = "workflow_step_finished"
	KindWorkflowFinished     Kind = "workflow_finished"
	// KindNotice is not part of a run: the program tells of a problem
	// around it (an MCP server that did not start).
	KindNotice Kind = "notice"
)

// StopReason says why a run ended.
type StopReason string

// Stop reasons of run_finished.
const (
	StopAnswered  StopReason = "answered"
	StopStepLimit StopReason = "step_limit"
	StopCancelled StopReason = "cancelled"
	StopError     StopReason = "error"
)

// Event is one observable thing the engine did. Data holds the payload whose
// type is fixed by Kind (RunStarted for run_started, and so on); an event of a
// kind this version does not know keeps its payload as json.RawMessage.
//
// Agent names the agent the run runs as (empty for the engine's own
// settings). A sub-run (a delegation to an agent) has its own Run and names
// the run and the tool call that started it in ParentRun and ParentCall;
// both are empty for a session's top-level runs.
type Event struct {
	V          int    `json:"v"`
	Session    string `json:"session"`
	Run        string `json:"run"`
	Agent      string `json:"agent,omitempty"`
	ParentRun  string `json:"parent_run,omitempty"`
	ParentCall string `json:"parent_call,omitempty"`
	// Workflow and WorkflowStep name the workflow a run carries out and,
	// for a step's own events, the step.
	Workflow     string    `json:"workflow,omitempty"`
	WorkflowStep string    `json:"workflow_step,omitempty"`
	Step         int       `json:"step"`
	Phase        Phase     `json:"phase,omitempty"`
	Kind         Kind      `json:"kind"`
	Time         time.Time `json:"time"`
	Data         any       `json:"data,omitempty"`
}

// RunStarted is the payload of run_started.
type RunStarted struct {
	Task     string `json:"task"`
	Model    string `json:"model,omitempty"`
	MaxSteps int    `json:"max_steps"`
	// Instructions name the project instructions the run's requests carry
	// (Config.Instructions: AGENTS.md and the like).
	Instructions []string `json:"instructions,omitempty"`
	// Request names the queued request the run carries out (a worker's
	// run; "" otherwise), so that a worker taking the request again finds
	// the run.
	Request string `json:"request,omitempty"`
	// Settings are what the session is worked on with from this run on,
	// when they changed (Session.UseSettings).
	Settings *Settings `json:"settings,omitempty"`
	// Context is what hooks added to the task (SessionStart's and
	// UserPromptSubmit's): the model reads it after the task.
	Context string `json:"context,omitempty"`
	// Withheld is set when a UserPromptSubmit hook blocked the task: it
	// is journaled, not sent to the model (the run ends at once).
	Withheld bool `json:"withheld,omitempty"`
}

// StepStarted is the payload of step_started. Turn counts the decisions of
// this run from 0.
type StepStarted struct {
	Turn int `json:"turn"`
}

// ModelRequest is the payload of model_request: a summary of what the model
// is about to be asked, not the whole request.
//
// Tokens is the whole request: SystemTokens (the system prompt),
// InstructionTokens (the project instructions), SummaryTokens (the summary
// of compacted history), MemoryTokens, ToolTokens (the tool schemas) and the
// history's messages. Window is the model's context window when known,
// Trigger the size at which the history is compacted (0: never).
type ModelRequest struct {
	Messages          int `json:"messages"`
	MemoryFacts       int `json:"memory_facts"`
	Tools             int `json:"tools"`
	Tokens            int `json:"tokens"`
	SystemTokens      int `json:"system_tokens"`
	InstructionTokens int `json:"instruction_tokens,omitempty"`
	SummaryTokens     int `json:"summary_tokens,omitempty"`
	MemoryTokens      int `json:"memory_tokens"`
	ToolTokens        int `json:"tool_tokens"`
	Budget            int `json:"budget"`
	Trigger           int `json:"trigger,omitempty"`
	Window            int `json:"window,omitempty"`
	// PromptHash is PromptHash of the request's system prompt,
	// instructions and tools.
	PromptHash Hash `json:"prompt_hash,omitempty"`
	// Local: the model sends the request nowhere (a workflow's planner):
	// no call is made, nothing is spent, no usage follows.
	Local bool `json:"local,omitempty"`
}

// TextDelta is the payload of text_delta: a piece of streamed model output.
// A retry discards the deltas of the attempt before it.
type TextDelta struct {
	Text      string `json:"text"`
	Reasoning bool   `json:"reasoning,omitempty"`
	Attempt   int    `json:"attempt"`
}

// Decided is the payload of decision: what the model decided.
type Decided struct {
	Text      string     `json:"text,omitempty"`
	Reasoning string     `json:"reasoning,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Attempts  int        `json:"attempts"`
	// Redacted are the ids of the calls whose arguments held a secret
	// (Config.Redact), journaled without it; the tool got them as sent.
	Redacted []string `json:"redacted,omitempty"`
	// Model is the model that answered, as the server named it.
	Model string `json:"model,omitempty"`
}

// ToolStarted is the payload of tool_started. Args are written as a
// ToolCall's are.
type ToolStarted struct {
	Index int             `json:"index"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Args  json.RawMessage `json:"args,omitempty"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *ToolStarted) UnmarshalJSON(b []byte) error {
	var j struct {
		Index int `json:"index"`
		toolCallJSON
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = ToolStarted{Index: j.Index, ID: j.ID, Name: j.Name, Args: joinArgs(j.Args, j.ArgsText)}
	return nil
}

// ToolStatus says how a tool call ended, in ToolFinished.
type ToolStatus string

// Tool call statuses.
const (
	ToolOK      ToolStatus = "ok"
	ToolError   ToolStatus = "error"
	ToolSkipped ToolStatus = "skipped"
	ToolDenied  ToolStatus = "denied"
)

// ToolFinished is the payload of tool_finished. Result is what the model
// sees.
//
// Every tool_started is followed by exactly one tool_finished for the same
// call, whatever happens: a call that ran, failed, panicked or timed out,
// and one still running when the run is cancelled or ends in error (status
// error, result "error: cancelled"). A call refused or skipped (by policy,
// by the person, by an abort at the gate) gets one with no tool_started
// before it. Only a call that had not started when its run ended (cancelled
// while the gate waited, or before its turn came) gets none; the session's
// history gives it InterruptedResult.
type ToolFinished struct {
	Index      int        `json:"index"`
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Status     ToolStatus `json:"status"`
	Result     string     `json:"result"`
	Error      string     `json:"error,omitempty"`
	Truncated  bool       `json:"truncated,omitempty"`
	DurationMS int64      `json:"duration_ms"`
	Attempts   int        `json:"attempts"`
	// By is "person" for a result the person gave in place of the tool's
	// (Respond): the tool did not run.
	By string `json:"by,omitempty"`
	// Structured is the result's structured form, when the tool gave one
	// (Call.SetStructured): JSON that a program reads beside Result (a
	// workflow's templates read run_shell's stdout, stderr and exit). No
	// model is sent it.
	Structured json.RawMessage `json:"structured,omitempty"`
}

// RetryScheduled is the payload of retry.
type RetryScheduled struct {
	Op      string `json:"op"`
	Attempt int    `json:"attempt"`
	DelayMS int64  `json:"delay_ms"`
	Cause   string `json:"cause"`
	Status  int    `json:"status,omitempty"`
}

// MemoryOp is what a memory_changed event does to a fact.
type MemoryOp string

// Memory change operations.
const (
	MemorySet    MemoryOp = "set"
	MemoryDelete MemoryOp = "delete"
)

// MemoryChanged is the payload of memory_changed.
type MemoryChanged struct {
	Op     MemoryOp `json:"op"`
	Key    string   `json:"key"`
	Value  string   `json:"value,omitempty"`
	Source string   `json:"source"`
	// Redacted says that Value held a secret, kept without it.
	Redacted bool `json:"redacted,omitempty"`
}

// ContextTrimmed is the payload of context_trimmed: the oldest messages of
// the history no longer fit the budget and are left out of the request.
type ContextTrimmed struct {
	Dropped       int `json:"dropped"`
	DroppedTokens int `json:"dropped_tokens"`
	Kept          int `json:"kept"`
	KeptTokens    int `json:"kept_tokens"`
	Budget        int `json:"budget"`
}

// GatePaused is the payload of gate_paused.
type GatePaused struct {
	At       Phase       `json:"at"`
	Reason   PauseReason `json:"reason"`
	ToolCall *ToolCall   `json:"tool_call,omitempty"`
	// Break is the breakpoint condition that hit (Reason break).
	Break string `json:"break,omitempty"`
}

// GateResumed is the payload of gate_resumed. Args are the edited
// arguments, if any, written as a ToolCall's are (as text when they are not
// JSON).
type GateResumed struct {
	Action Action          `json:"action"`
	Args   json.RawMessage `json:"args,omitempty"`
	// Result is what the person answered for the tool (Respond); By who
	// answered when it was not a person at the pause ("allowed for this
	// session", a recording).
	Result string `json:"result,omitempty"`
	By     string `json:"by,omitempty"`
	// Refused are the answers to this pause that were not taken, and why
	// (a reply not signed by whoever may steer the session).
	Refused []string `json:"refused,omitempty"`
	// Edited says what the person changed with the verdict: "arguments"
	// (the call's, in Args) or "request" (the decision's, request_edited).
	Edited string `json:"edited,omitempty"`
}

type gateResumedJSON struct {
	Action   Action          `json:"action"`
	Args     json.RawMessage `json:"args,omitempty"`
	ArgsText *string         `json:"args_text,omitempty"`
	Result   string          `json:"result,omitempty"`
	By       string          `json:"by,omitempty"`
	Refused  []string        `json:"refused,omitempty"`
	Edited   string          `json:"edited,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (g GateResumed) MarshalJSON() ([]byte, error) {
	j := gateResumedJSON{Action: g.Action, Result: g.Result, By: g.By, Refused: g.Refused, Edited: g.Edited}
	j.Args, j.ArgsText = splitArgs(g.Args)
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler.
func (g *GateResumed) UnmarshalJSON(b []byte) error {
	var j gateResumedJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*g = GateResumed{Action: j.Action, Args: joinArgs(j.Args, j.ArgsText), Result: j.Result, By: j.By, Refused: j.Refused, Edited: j.Edited}
	return nil
}

// UsageRecorded is the payload of usage: the tokens of one decision and the
// session's totals.
type UsageRecorded struct {
	Usage
	SessionPrompt     int `json:"session_prompt_tokens"`
	SessionCompletion int `json:"session_completion_tokens"`
}

// StepFinished is the payload of step_finished, the end of a step's observe
// phase: every tool result of the step is in the history.
type StepFinished struct {
	ToolCalls int `json:"tool_calls"`
}

// RunFinished is the payload of run_finished.
type RunFinished struct {
	StopReason StopReason `json:"stop_reason"`
	Answer     string     `json:"answer,omitempty"`
	// Partial is the answer the model had streamed when the run was
	// cancelled mid-answer (stop reason cancelled). The session keeps it in
	// its history, marked cut off, so the model sees what it had said.
	Partial string `json:"partial,omitempty"`
	Error   string `json:"error,omitempty"`
	Steps   int    `json:"steps"`
}

// Handoff is the payload of handoff: from the next step on, the run runs
// as To. Call is the id of the transfer_to_NAME call that asked for it.
type Handoff struct {
	From string `json:"from,omitempty"`
	To   string `json:"to"`
	Call string `json:"call"`
}

// ContextCompacted is the payload of context_compacted: from now on the
// history's first Upto messages are represented in requests by Summary
// (which takes in the summary before it, if any); Messages is how many
// messages this compaction summarised anew. Nothing is deleted: the
// session's history keeps every message.
type ContextCompacted struct {
	Summary      string `json:"summary"`
	Upto         int    `json:"upto"`
	Messages     int    `json:"messages"`
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after"`
	Usage        Usage  `json:"usage"`
	Model        string `json:"model,omitempty"`
	// Focus is what the person asked the summary to keep (/compact
	// FOCUS); Manual is set when they asked for the compaction.
	Focus  string `json:"focus,omitempty"`
	Manual bool   `json:"manual,omitempty"`
}

// WorkflowStarted is the payload of workflow_started.
type WorkflowStarted struct {
	Name   string            `json:"name"`
	File   string            `json:"file,omitempty"`
	Inputs map[string]string `json:"inputs,omitempty"`
	Steps  []string          `json:"steps"`
}

// WorkflowStepFinished is the payload of workflow_step_finished. Status is
// ok, error or skipped (its if was false).
type WorkflowStepFinished struct {
	Step     string `json:"step"`
	Status   string `json:"status"`
	Output   string `json:"output,omitempty"`
	Attempts int    `json:"attempts,omitempty"`
	Items    int    `json:"items,omitempty"` // calls of a foreach
}

// WorkflowFinished is the payload of workflow_finished.
type WorkflowFinished struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
}

// ModelChanged is the payload of model_changed.
type ModelChanged struct {
	Model string `json:"model"`
}

// Notice is the payload of notice.
type Notice struct {
	Level   string `json:"level"`
	Message string `json:"message"`
	// About names what the notice is about, for a reader that acts on it:
	// NoticeCheckpoint for a checkpoint that could not be taken.
	About string `json:"about,omitempty"`
}

// NoticeCheckpoint is the About of a checkpoint that failed.
const NoticeCheckpoint = "checkpoint"
