package engine

import (
	"context"
	"time"
)

// Perceive and the pause before deciding: the request a step sends, and
// the edit a person may make of it at the pause.

// perceive assembles the request: system prompt, project instructions,
// the summary of compacted history, memory, the history after it (trimmed
// to the budget), and the tool schemas. When the request would exceed the
// compaction trigger, the oldest history is compacted first (compact.go).
// Its cost does not grow with the history: the request holds a view of it,
// and the cut is found by binary search over prefix sums.
func (r *run) perceive(ctx context.Context, t time.Time) (*Request, error) {
	cfg := &r.e.cfg
	s := r.s
	mem := r.memory()
	set := r.prof.tools.set()
	tools := set.schemas
	sysT, memT, toolT := EstimateTokens(r.prof.system), estimateFacts(mem), r.prof.tools.Tokens()
	fixed := sysT + r.instT + memT + toolT
	n := len(s.History)
	full := wantsFullHistory(r.prof.model)
	if trigger := r.trigger(); trigger > 0 && !full && fixed+s.summaryTokens+s.tokensOf(s.upto, n) > trigger {
		if err := r.autoCompact(ctx, fixed); err != nil {
			return nil, err
		}
		t = r.rebase()
	}
	base, sumT := s.upto, s.summaryTokens
	budget := max(cfg.Budget-fixed-sumT, 0)
	cut := max(s.trimStart(budget), base)
	if full {
		cut, base, sumT = 0, 0, 0
	}
	if cut != r.cut {
		if cut > base {
			d := &ContextTrimmed{Dropped: cut - base, DroppedTokens: s.tokensOf(base, cut), Kept: n - cut, KeptTokens: s.tokensOf(cut, n), Budget: cfg.Budget}
			if err := r.emitAt(t, Perceive, KindContextTrimmed, d); err != nil {
				return nil, err
			}
		}
		r.cut = cut
	}
	req := &r.req
	*req = Request{
		System:       r.prof.system,
		Instructions: r.instructions,
		Memory:       mem,
		Messages:     s.History[cut:n:n],
		Tools:        tools,
		Options:      cfg.Options,
		Turn:         s.run.Turn,
		Session:      s.ID,
		Run:          r.id,
		Step:         r.step,
		delta:        req.delta, // made once, in newRun: a method value allocates
	}
	if base > 0 {
		req.Summary = s.summary
	}
	if o := r.prof.output; o != nil {
		req.OutputSchema = o.raw
	}
	r.reqTokens = fixed + sumT + s.tokensOf(cut, n)
	mr := &r.payloads.request
	*mr = ModelRequest{Messages: n - cut, MemoryFacts: len(mem), Tools: len(tools), Tokens: r.reqTokens, SystemTokens: sysT,
		InstructionTokens: r.instT, SummaryTokens: sumT, MemoryTokens: memT, ToolTokens: toolT, Budget: cfg.Budget, Trigger: r.trigger(), Window: cfg.Window,
		PromptHash: r.promptHash(set), Local: full}
	if !full { // a planner is asked with nothing to record
		if err := r.recordPrompt(t, mr.PromptHash, tools); err != nil {
			return nil, err
		}
	}
	return req, r.emitAt(t, Perceive, KindModelRequest, mr)
}

// pause consults the gate, emitting gate_paused and gate_resumed around a
// wait.
func (r *run) pause(ctx context.Context, p Pending) (Verdict, error) {
	g := r.e.cfg.Gate
	p.Session, p.Run, p.Step, p.Agent, p.ParentRun = r.root.ID, r.id, r.step, r.prof.agent, r.parent
	if g != nil && r.e.brk != nil && p.Question == nil {
		p.Break = r.breakBefore(&p)
	}
	if g == nil || (!p.Approval && p.Break == "" && !g.Stop(p)) {
		return Verdict{Action: Proceed}, nil
	}
	reason := ReasonStep
	switch {
	case p.Rerun:
		reason = ReasonInterrupted
	case p.Approval:
		reason = ReasonApproval
	case p.Break != "":
		reason = ReasonBreak
	}
	if p.ToolCall != nil && r.e.cfg.Redact != nil { // shown and journaled without a secret
		c := *p.ToolCall
		c.Args = r.journaledArgs(c.Args)
		p.ToolCall = &c
	}
	if err := r.emit(p.At, KindGatePaused, &GatePaused{At: p.At, Reason: reason, ToolCall: p.ToolCall, Break: p.Break}); err != nil {
		return Verdict{}, err
	}
	if err := r.notify(ctx, &p, reason); err != nil {
		return Verdict{}, err
	}
	if err := r.flush(); err != nil {
		return Verdict{}, err
	}
	v, err := g.Wait(ctx, p)
	if err != nil {
		return Verdict{}, err
	}
	if v.Action == "" {
		v.Action = Proceed
	}
	return v, r.emit(p.At, KindGateResumed, &GateResumed{Action: v.Action, Args: r.journaledArgs(v.Args), Result: v.Result, By: v.By, Refused: v.Refused, Edited: v.edited()})
}

// editRequest applies the edit a gate gave at a decide pause to req,
// journaled as request_edited; an edit that does not fit the request is
// told in a notice and the request goes as it was.
func (r *run) editRequest(req *Request, e *RequestEdit) (*Request, error) {
	if e.Empty() {
		return req, nil
	}
	out, err := e.Apply(req)
	if err != nil {
		return req, r.emit(Decide, KindNotice, &Notice{Level: "warning", Message: "the request edit was not applied: " + err.Error()})
	}
	r.reqTokens = RequestTokens(out) // what is sent: its size for the budgets and an estimated usage
	return out, r.emit(Decide, KindRequestEdited, &RequestEdited{RequestEdit: *e, Tokens: r.reqTokens})
}
