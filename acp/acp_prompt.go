package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentty/agentty/engine"
)

// Prompt runs the prompt in the session: its text, thoughts and tool calls
// stream to the client as they happen; the answer is the stop reason.
// /compact, /memory and /skills are commands; a custom command's prompt
// is expanded (Setup.Command).
func (a *acpAgent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	text := promptText(p.Prompt)
	if text == "" {
		return acp.PromptResponse{}, errors.New("the prompt has no text")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	if s.cancel != nil {
		s.mu.Unlock()
		return acp.PromptResponse{}, errors.New("a prompt of this session is going on: cancel it first")
	}
	s.cancel = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
	}()
	out := &acpSink{a: a, ctx: ctx, id: p.SessionId, started: map[string]bool{}}
	sinks := engine.Sinks{s.st.WithTrace(s.journal), out}
	if reply, ok := a.command(ctx, s, text, sinks); ok {
		a.update(ctx, p.SessionId, acp.UpdateAgentMessageText(reply))
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	eng, text, notes, err := s.st.Command(ctx, s.st.Engine, text) // a custom /command: its prompt
	for _, n := range notes {
		a.update(ctx, p.SessionId, acp.UpdateAgentThoughtText("note: "+n+"\n"))
	}
	if err != nil {
		return acp.PromptResponse{}, err
	}
	res := eng.Run(ctx, s.sess, text, sinks)
	switch res.StopReason {
	case engine.StopAnswered:
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	case engine.StopStepLimit:
		return acp.PromptResponse{StopReason: acp.StopReasonMaxTurnRequests}, nil
	case engine.StopBudget:
		return acp.PromptResponse{StopReason: acp.StopReasonMaxTokens}, nil
	case engine.StopCancelled:
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	return acp.PromptResponse{}, fmt.Errorf("the run failed (session %s is saved): %v", p.SessionId, res.Err)
}

// command runs a slash command of the prompt text, and says what to tell
// the client; false when text is no command.
func (a *acpAgent) command(ctx context.Context, s *acpSession, text string, sink engine.Sink) (string, bool) {
	name, arg, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	if !strings.HasPrefix(text, "/") {
		return "", false
	}
	switch name {
	case "compact":
		c, err := s.st.Engine.Compact(ctx, s.sess, strings.TrimSpace(arg), sink)
		if err != nil {
			return "Not compacted: " + err.Error(), true
		}
		return fmt.Sprintf("Compacted: %d messages summarised (%d → %d tokens).", c.Upto, c.TokensBefore, c.TokensAfter), true
	case "memory":
		facts := s.sess.Memory()
		if len(facts) == 0 {
			return "The memory is empty.", true
		}
		var lines []string
		for _, f := range facts {
			lines = append(lines, fmt.Sprintf("- %s = %s (step %d)", f.Key, f.Value, f.Step))
		}
		return strings.Join(lines, "\n"), true
	case "skills":
		var lines []string
		for _, sk := range s.st.Skills.Skills {
			lines = append(lines, "- "+sk.Name+": "+engine.OneLine(sk.Description, 120))
		}
		if len(lines) == 0 {
			return "No skills.", true
		}
		return strings.Join(lines, "\n"), true
	}
	return "", false
}

// acpSink streams a prompt's events to the client as session updates: the
// top-level run's text (and thoughts) as chunks, every tool call (a
// sub-run's too) from its announcement to its result.
type acpSink struct {
	a        *acpAgent
	ctx      context.Context
	id       acp.SessionId
	streamed bool            // the step's text went out as deltas
	started  map[string]bool // tool calls announced, by run/call: true once they ended
	// replaying is set for a loaded session's events: the files are no
	// longer as its calls found them, so no diff is sent.
	replaying bool
}

// Emit sends what event ev shows the person.
func (k *acpSink) Emit(ev engine.Event) error {
	switch d := ev.Data.(type) {
	case *engine.StepStarted:
		if ev.ParentRun == "" {
			k.streamed = false
		}
	case *engine.TextDelta:
		if ev.ParentRun == "" && d.Text != "" {
			k.streamed = true
			if d.Reasoning {
				k.a.update(k.ctx, k.id, acp.UpdateAgentThoughtText(d.Text))
			} else {
				k.a.update(k.ctx, k.id, acp.UpdateAgentMessageText(d.Text))
			}
		}
	case *engine.Decided:
		if ev.ParentRun == "" && !k.streamed && d.Text != "" {
			k.a.update(k.ctx, k.id, acp.UpdateAgentMessageText(d.Text)) // a model that does not stream
		}
	case *engine.GatePaused:
		if d.ToolCall != nil {
			k.announce(ev.Run, d.ToolCall.ID, d.ToolCall.Name, d.ToolCall.Args, acp.ToolCallStatusPending)
		}
	case *engine.ToolStarted:
		k.announce(ev.Run, d.ID, d.Name, d.Args, acp.ToolCallStatusInProgress)
	case *engine.ToolFinished:
		status := acp.ToolCallStatusCompleted
		text := d.Result
		if d.Status != engine.ToolOK {
			status, text = acp.ToolCallStatusFailed, strings.TrimSpace(d.Result+"\n"+d.Error)
		}
		k.announce(ev.Run, d.ID, d.Name, nil, status)
		k.ended(acpCallID(ev.Run, d.ID), status, text)
	case *engine.RunFinished:
		if ev.ParentRun == "" { // a call the run left without a result (cancelled at the gate) ends here
			for id, done := range k.started {
				if !done {
					k.ended(acp.ToolCallId(id), acp.ToolCallStatusFailed, "not run: "+string(d.StopReason))
				}
			}
		}
	}
	return nil
}

// ended sends a tool call's end: its status and result.
func (k *acpSink) ended(id acp.ToolCallId, status acp.ToolCallStatus, text string) {
	k.started[string(id)] = true
	k.a.update(k.ctx, k.id, acp.UpdateToolCall(id, acp.WithUpdateStatus(status),
		acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(text))})))
}

// announce sends a tool call's start the first time it is seen, and its
// status after that.
func (k *acpSink) announce(run, call, name string, args json.RawMessage, status acp.ToolCallStatus) {
	id := acpCallID(run, call)
	if _, seen := k.started[string(id)]; seen {
		if status != acp.ToolCallStatusCompleted && status != acp.ToolCallStatusFailed {
			k.a.update(k.ctx, k.id, acp.UpdateToolCall(id, acp.WithUpdateStatus(status)))
		}
		return
	}
	k.started[string(id)] = false
	var input any
	json.Unmarshal(args, &input)
	opts := []acp.ToolCallStartOpt{acp.WithStartKind(toolKind(name)), acp.WithStartStatus(status), acp.WithStartRawInput(input)}
	if s, err := k.a.session(k.id); err == nil && args != nil {
		locs, content := s.files(&engine.ToolCall{ID: call, Name: name, Args: args})
		if k.replaying {
			content = nil
		}
		opts = append(opts, acp.WithStartLocations(locs), acp.WithStartContent(content))
	}
	k.a.update(k.ctx, k.id, acp.StartToolCall(id, name, opts...))
}

// acpCallID is a tool call's id for the client: its run's and its own,
// unique in the session (sub-runs' calls too).
func acpCallID(run, call string) acp.ToolCallId { return acp.ToolCallId(run + "/" + call) }

// toolKind is how an editor shows a tool: read, edit, search, execute,
// fetch, think or other.
func toolKind(name string) acp.ToolKind {
	switch name {
	case "read_file", "list_dir", "read_skill_file", "skill":
		return acp.ToolKindRead
	case "write_file", "edit_file":
		return acp.ToolKindEdit
	case "search_files", "search_knowledge":
		return acp.ToolKindSearch
	case "run_shell":
		return acp.ToolKindExecute
	case "http_get":
		return acp.ToolKindFetch
	}
	return acp.ToolKindOther
}

// acpGate asks the client to approve a tool that asks
// (session/request_permission); it never pauses otherwise.
type acpGate struct{ a *acpAgent }

func (acpGate) Stop(engine.Pending) bool { return false }

// Wait asks the client: allow once, or reject; a cancelled request (the
// prompt was cancelled) ends the run.
func (g acpGate) Wait(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	if p.Question != nil {
		return g.ask(ctx, p)
	}
	if p.ToolCall == nil {
		return engine.Verdict{Action: engine.Proceed}, nil
	}
	s, _ := g.a.session(acp.SessionId(p.Session))
	if !p.Rerun && s.allows(p.ToolCall) {
		return engine.Verdict{Action: engine.Proceed, By: "allowed always in the editor"}, nil
	}
	var input any
	json.Unmarshal(p.ToolCall.Args, &input)
	title := p.ToolCall.Name
	if p.Rerun {
		title += " (interrupted before: running it again may repeat what it did)"
	}
	locs, content := s.files(p.ToolCall)
	resp, err := g.a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{
		SessionId: acp.SessionId(p.Session),
		ToolCall: acp.ToolCallUpdate{ToolCallId: acpCallID(p.Run, p.ToolCall.ID), Title: acp.Ptr(title),
			Kind: acp.Ptr(toolKind(p.ToolCall.Name)), Status: acp.Ptr(acp.ToolCallStatusPending), RawInput: input,
			Locations: locs, Content: content},
		Options: []acp.PermissionOption{
			{Kind: acp.PermissionOptionKindAllowOnce, Name: "Allow", OptionId: "allow"},
			{Kind: acp.PermissionOptionKindAllowAlways, Name: "Always allow", OptionId: "always"},
			{Kind: acp.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: "reject"},
		},
	})
	switch {
	case err != nil:
		return engine.Verdict{}, err
	case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == "always":
		s.allow(p.ToolCall)
		return engine.Verdict{Action: engine.Proceed, By: "you, for this session"}, nil
	case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == "allow":
		return engine.Verdict{Action: engine.Proceed}, nil
	case resp.Outcome.Selected != nil:
		return engine.Verdict{Action: engine.Deny}, nil
	}
	return engine.Verdict{Action: engine.Abort}, nil
}

// ask puts a question with choices to the editor as a permission request
// whose options are the choices; a question without them cannot be asked
// there (ACP has no typed answer yet).
func (g acpGate) ask(ctx context.Context, p engine.Pending) (engine.Verdict, error) {
	q := p.Question
	if len(q.Choices) == 0 {
		return engine.Verdict{}, errors.New("the editor can only answer a question with choices")
	}
	var opts []acp.PermissionOption
	for i, c := range q.Choices {
		opts = append(opts, acp.PermissionOption{Kind: acp.PermissionOptionKindAllowOnce, Name: c, OptionId: acp.PermissionOptionId(fmt.Sprint(i))})
	}
	resp, err := g.a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{SessionId: acp.SessionId(p.Session),
		ToolCall: acp.ToolCallUpdate{ToolCallId: acpCallID(p.Run, p.ToolCall.ID), Title: acp.Ptr(q.Question), Kind: acp.Ptr(acp.ToolKindOther)}, Options: opts})
	if err != nil {
		return engine.Verdict{}, err
	}
	if s := resp.Outcome.Selected; s != nil {
		var i int
		if _, err := fmt.Sscan(string(s.OptionId), &i); err == nil && i >= 0 && i < len(q.Choices) {
			return engine.Verdict{Action: engine.Proceed, Answer: q.Choices[i], By: "the editor"}, nil
		}
	}
	return engine.Verdict{Action: engine.Deny}, nil
}
