package engine

// Hooks: programs the person configured (Claude Code's hooks) that a run
// consults at its points — before and after each tool call, when a prompt
// is given, before the run answers, when a session starts — and that may
// block a call, change its arguments, add context or keep the run going.
// The engine knows what each point asks of them; Config.Hooks runs them.
// Every hook that ran is a hook event, so a replay can hand back what
// they decided without running them (package hooks' Recorded).

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"
)

// KindHook: a hook ran at a point of the run (HookRun).
const KindHook Kind = "hook"

// HookEvent names a point of a run that hooks are run at, with Claude
// Code's names.
type HookEvent string

// The hook events the engine runs hooks at (SessionEnd is the front end's:
// it knows when a session ends).
const (
	HookPreToolUse         HookEvent = "PreToolUse"
	HookPostToolUse        HookEvent = "PostToolUse"
	HookPostToolUseFailure HookEvent = "PostToolUseFailure"
	HookUserPromptSubmit   HookEvent = "UserPromptSubmit"
	HookStop               HookEvent = "Stop"
	HookSubagentStop       HookEvent = "SubagentStop"
	HookSessionStart       HookEvent = "SessionStart"
	HookSessionEnd         HookEvent = "SessionEnd"
	HookPreCompact         HookEvent = "PreCompact"
	HookNotification       HookEvent = "Notification"
)

// Hook decisions (HookRun.Decision).
const (
	HookAllow = "allow" // PreToolUse: run the call without asking
	HookDeny  = "deny"  // PreToolUse: do not run it; Reason goes to the model
	HookAsk   = "ask"   // PreToolUse: ask the person, whatever the policy
	HookBlock = "block" // exit 2 or decision "block": what the event stops
)

// HookInput is what a point of a run gives its hooks.
type HookInput struct {
	Event               HookEvent
	Session, Run, Agent string
	Step                int
	// Call is the tool call of PreToolUse and PostToolUse (agentty's
	// names: the hooks translate); Result and Failed are its outcome.
	Call   *ToolCall
	Result string
	Failed bool
	// Structured is the result's structured form, when the tool gave one
	// (run_shell's stdout, stderr and exit apart).
	Structured json.RawMessage
	// Prompt is UserPromptSubmit's.
	Prompt string
	// Source qualifies the event: SessionStart's startup or resume,
	// PreCompact's auto, Notification's type, SessionEnd's reason.
	Source string
	// Message is Notification's text.
	Message string
	// StopHookActive is set for Stop when the run goes on because a Stop
	// hook kept it going.
	StopHookActive bool
}

// Hooks runs the hooks configured for a point of a run, in the order they
// are configured, and says what each did. A hook that failed is a HookRun
// with its error: a hook never fails the run.
type Hooks interface {
	RunHooks(ctx context.Context, in *HookInput) []HookRun
}

// HookRun is the payload of hook: one hook's run and what it decided.
type HookRun struct {
	Event HookEvent `json:"event"`
	// Command is the hook as configured; Source where (a file, a plugin).
	Command string `json:"command"`
	Source  string `json:"source,omitempty"`
	Matcher string `json:"matcher,omitempty"`
	// Call and Tool name the tool call of a tool event.
	Call       string `json:"call,omitempty"`
	Tool       string `json:"tool,omitempty"`
	Exit       int    `json:"exit"`
	DurationMS int64  `json:"duration_ms"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	// Error says why the hook could not run or what was wrong with what
	// it said (a warning: the run goes on as if it had not run).
	Error string `json:"error,omitempty"`
	// Decision is allow, deny, ask or block ("": none).
	Decision string `json:"decision,omitempty"`
	// Reason is what the model is told of a deny or block.
	Reason string `json:"reason,omitempty"`
	// Context is what it adds for the model.
	Context string `json:"context,omitempty"`
	// Input replaces a PreToolUse call's arguments (agentty's names).
	Input json.RawMessage `json:"input,omitempty"`
	// Stop, when set, ends the run (its "continue": false), saying why.
	Stop string `json:"stop,omitempty"`
	// Output is what the person is shown (its output, a warning).
	Output string `json:"output,omitempty"`
	// Feedback, on the last hook event of a Stop that kept the run
	// going, is the message the model is given: the session's history
	// takes it as the person's.
	Feedback string `json:"feedback,omitempty"`
}

// hookVerdict is what the hooks of one point decided together: deny or
// block over ask over allow; their reasons and contexts joined; the last
// input; the first stop.
type hookVerdict struct {
	decision, reason, context, stop string
	input                           json.RawMessage
	runs                            []HookRun
}

// callHooks runs the hooks of in's point (none when the engine has none).
func (r *run) callHooks(ctx context.Context, in *HookInput) hookVerdict {
	h := r.e.cfg.Hooks
	if h == nil {
		return hookVerdict{}
	}
	in.Session, in.Run, in.Agent, in.Step = r.root.ID, r.id, r.prof.agent, r.step
	runs := h.RunHooks(ctx, in)
	v := hookVerdict{runs: runs}
	var reasons, contexts []string
	for i := range runs {
		hr := &runs[i]
		r.redactHook(hr)
		if decisionRank(hr.Decision) > decisionRank(v.decision) {
			v.decision = hr.Decision
		}
		if hr.Reason != "" && (hr.Decision == HookDeny || hr.Decision == HookBlock || hr.Decision == HookAsk) {
			reasons = append(reasons, hr.Reason)
		}
		if hr.Context != "" {
			contexts = append(contexts, hr.Context)
		}
		if hr.Input != nil {
			v.input = hr.Input
		}
		if v.stop == "" {
			v.stop = hr.Stop
		}
	}
	v.reason, v.context = strings.Join(reasons, "\n"), strings.Join(contexts, "\n")
	return v
}

// decisionRank orders hooks' decisions: deny and block over ask over
// allow over none.
func decisionRank(d string) int {
	switch d {
	case HookAllow:
		return 1
	case HookAsk:
		return 2
	case HookDeny, HookBlock:
		return 3
	}
	return 0
}

// emitHooks journals the hooks' runs of a point.
func (r *run) emitHooks(phase Phase, v *hookVerdict) error {
	for i := range v.runs {
		if err := r.emit(phase, KindHook, &v.runs[i]); err != nil {
			return err
		}
	}
	return nil
}

// hooks runs the hooks of in's point and journals them.
func (r *run) hooks(ctx context.Context, phase Phase, in *HookInput) (hookVerdict, error) {
	v := r.callHooks(ctx, in)
	if v.stop != "" && r.hookStop == "" {
		r.hookStop = v.stop
	}
	return v, r.emitHooks(phase, &v)
}

// redactHook takes secrets out of what a hook said before it is kept.
func (r *run) redactHook(hr *HookRun) {
	redact := r.e.cfg.Redact
	if redact == nil {
		return
	}
	hr.Command, hr.Reason, hr.Context = redact(hr.Command), redact(hr.Reason), redact(hr.Context)
	hr.Output, hr.Error, hr.Stop = redact(hr.Output), redact(hr.Error), redact(hr.Stop)
	if hr.Input != nil {
		hr.Input = r.journaledArgs(hr.Input)
	}
}

// hookContextMessage is what hooks added to a prompt, as the model reads
// it: a message of its own, just before the prompt.
func hookContextMessage(ctx string) string {
	return "<hook-context>\n" + ctx + "\n</hook-context>"
}

// hookContext is the text hooks added to a tool's result, as the model
// reads it.
func hookContext(ctx string) string {
	if ctx == "" {
		return ""
	}
	return "\n\n<hook-context>\n" + ctx + "\n</hook-context>"
}

// startHooks runs, for a top-level run about to start on task, the
// session's SessionStart hooks (once a session per engine: startup for a
// new one, resume for one with runs) and UserPromptSubmit's. It returns
// the context they add and, when one blocked the prompt, why.
func (r *run) startHooks(ctx context.Context, task string) (hookVerdict, string) {
	var all hookVerdict
	if r.e.cfg.Hooks == nil || r.parent != "" {
		return all, ""
	}
	if r.s.hookStarted.CompareAndSwap(false, true) {
		src := "startup"
		if r.s.Runs > 0 {
			src = "resume"
		}
		all = r.callHooks(ctx, &HookInput{Event: HookSessionStart, Source: src})
	}
	up := r.callHooks(ctx, &HookInput{Event: HookUserPromptSubmit, Prompt: task})
	all.runs = append(all.runs, up.runs...)
	all.context = strings.TrimSpace(all.context + "\n" + up.context)
	all.stop = cmp.Or(all.stop, up.stop)
	if up.decision == HookBlock || up.decision == HookDeny {
		return all, cmp.Or(up.reason, "a UserPromptSubmit hook blocked the prompt")
	}
	if all.stop != "" {
		return all, all.stop
	}
	return all, ""
}

// preToolHooks runs PreToolUse's hooks for call c. It returns the call to
// run (its arguments as a hook changed them), the decision, and, when the
// hooks refused it, sets fin to the refusal.
func (r *run) preToolHooks(ctx context.Context, c *ToolCall, fin *ToolFinished) (*ToolCall, string, error) {
	if r.e.cfg.Hooks == nil {
		return c, "", nil
	}
	v, err := r.hooks(ctx, Act, &HookInput{Event: HookPreToolUse, Call: c})
	if err != nil {
		return c, "", err
	}
	switch {
	case v.decision == HookDeny || v.decision == HookBlock:
		fin.Status, fin.Result = ToolDenied, "error: a PreToolUse hook blocked this call; it was not run: "+cmp.Or(v.reason, "no reason given")
	case v.stop != "":
		fin.Status, fin.Result = ToolDenied, "error: a PreToolUse hook stopped the run; this call was not run: "+v.stop
		v.decision = HookDeny
	case v.input != nil:
		changed := *c
		changed.Args = v.input
		return &changed, v.decision, nil
	}
	return c, v.decision, nil
}

// postToolHooks runs PostToolUse's (PostToolUseFailure's) hooks for a
// finished call: what they tell the model is added to its result. The
// runs are journaled after the tool_finished (emitPending).
func (r *run) postToolHooks(ctx context.Context, c *ToolCall, fin *ToolFinished) hookVerdict {
	if r.e.cfg.Hooks == nil || fin.Status == ToolDenied || fin.Status == ToolSkipped {
		return hookVerdict{}
	}
	ev := HookPostToolUse
	if fin.Status == ToolError {
		ev = HookPostToolUseFailure
	}
	v := r.callHooks(ctx, &HookInput{Event: ev, Call: c, Result: fin.Result, Failed: fin.Status == ToolError, Structured: fin.Structured})
	if v.decision == HookBlock && v.reason != "" {
		fin.Result += "\n\n[" + string(ev) + " hook] " + v.reason
	}
	if v.context != "" {
		fin.Result += hookContext(v.context)
	}
	if v.stop != "" && r.hookStop == "" {
		r.hookStop = v.stop
	}
	return v
}

// stopHooks runs Stop's hooks (SubagentStop's in a sub-run) before the run
// answers: it reports whether one kept the run going, having given the
// model the reason.
func (r *run) stopHooks(ctx context.Context, answer string) (bool, error) {
	if r.e.cfg.Hooks == nil {
		return false, nil
	}
	ev := HookStop
	if r.parent != "" {
		ev = HookSubagentStop
	}
	v := r.callHooks(ctx, &HookInput{Event: ev, Message: answer, StopHookActive: r.stopHookActive})
	if v.stop != "" && r.hookStop == "" {
		r.hookStop = v.stop
	}
	again := v.decision == HookBlock && v.stop == ""
	if again && len(v.runs) > 0 {
		v.runs[len(v.runs)-1].Feedback = string(ev) + " hook feedback:\n" + cmp.Or(v.reason, "go on")
		r.stopHookActive = true
	}
	return again, r.emitHooks(Observe, &v)
}

// notify runs Notification's hooks when a run waits for the person: to
// approve a call (permission_prompt) or answer a question (idle_prompt,
// as Claude Code names what waits on the person's input).
func (r *run) notify(ctx context.Context, p *Pending, reason PauseReason) error {
	if r.e.cfg.Hooks == nil {
		return nil
	}
	in := &HookInput{Event: HookNotification}
	switch {
	case p.Question != nil:
		in.Source, in.Message = "idle_prompt", "agentty needs your answer: "+OneLine(p.Question.Question, 200)
	case reason == ReasonApproval && p.ToolCall != nil:
		in.Source, in.Message = "permission_prompt", "agentty needs your permission to use "+p.ToolCall.Name
	default:
		return nil
	}
	_, err := r.hooks(ctx, p.At, in)
	return err
}

// HooksStarted reports whether the session's SessionStart hooks ran in
// this process: its SessionEnd hooks are due when it is let go.
func (s *Session) HooksStarted() bool { return s.hookStarted.Load() }
