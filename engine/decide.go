package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// errEmptyDecision is a decision with neither text nor tool calls.
var errEmptyDecision = Transient(errors.New("the model returned neither text nor tool calls"), 0)

// decide asks the model, retrying what is worth retrying.
func (r *run) decide(ctx context.Context, req *Request) (Decision, int, error) {
	cfg := &r.e.cfg
	r.deltaErr = nil
	for attempt := 1; ; attempt++ {
		req.Attempt = attempt
		r.partial.Reset() // a retry starts the answer again
		r.held = [2]string{}
		if err := r.flush(); err != nil {
			return Decision{}, attempt, err
		}
		dec, err := r.prof.model.Decide(ctx, req)
		if r.deltaErr != nil {
			return Decision{}, attempt, r.deltaErr
		}
		if err == nil && dec.Text == "" && len(dec.ToolCalls) == 0 {
			err = errEmptyDecision
		}
		if err == nil && cfg.Redact != nil {
			r.flushHeld(attempt)
			if r.deltaErr != nil {
				return Decision{}, attempt, r.deltaErr
			}
			dec.Text, dec.Reasoning = cfg.Redact(dec.Text), cfg.Redact(dec.Reasoning)
		}
		if err == nil {
			r.partial.Reset() // the decision holds the whole text
			r.nameCalls(dec.ToolCalls)
			if dec.Usage == (Usage{}) && !wantsFullHistory(r.prof.model) { // a planner sends nothing
				dec.Usage = r.estimateUsage(dec)
			} else if why := implausible(dec.Usage); why != "" {
				dec.Usage = r.estimateUsage(dec)
				msg := "the model reported " + why + ", which cannot be: this call's tokens are estimated instead"
				if err := r.emit(Decide, KindNotice, &Notice{Level: "warning", Message: msg}); err != nil {
					return Decision{}, attempt, err
				}
			}
			return dec, attempt, nil
		}
		if ctx.Err() != nil {
			return Decision{}, attempt, ctx.Err()
		}
		if !IsRetryable(err) || attempt >= cfg.Retry.Attempts {
			if wantsFullHistory(r.prof.model) {
				return Decision{}, attempt, err // a workflow's planner: its own words, not a model's
			}
			if attempt > 1 {
				return Decision{}, attempt, fmt.Errorf("model: %w (after %d attempts)", err, attempt)
			}
			return Decision{}, attempt, fmt.Errorf("model: %w", err)
		}
		after, status := retryInfo(err)
		d := cfg.Retry.Delay(attempt, after)
		if err := r.emit(Decide, KindRetry, &RetryScheduled{Op: "model", Attempt: attempt + 1, DelayMS: d.Milliseconds(), Cause: err.Error(), Status: status}); err != nil {
			return Decision{}, attempt, err
		}
		if err := r.flush(); err != nil {
			return Decision{}, attempt, err
		}
		if err := sleep(ctx, d); err != nil {
			return Decision{}, attempt, err
		}
	}
}

// onDelta turns a streamed piece of output into a text_delta event.
func (r *run) onDelta(d TextDelta) {
	if r.e.cfg.Redact != nil {
		if d.Text = r.redactDelta(d.Text, d.Reasoning, false); d.Text == "" {
			return
		}
	}
	r.emitDelta(d)
}

// emitDelta hands a piece of streamed output on, at once.
func (r *run) emitDelta(d TextDelta) {
	if !d.Reasoning {
		r.partial.WriteString(d.Text)
	}
	if r.deltaErr == nil {
		r.deltaErr = r.emit(Decide, KindTextDelta, &d)
	}
	if r.deltaErr == nil {
		r.deltaErr = r.flush() // deltas are for the screen, now
	}
}

// redactDelta redacts a streamed piece together with what was held of the
// pieces before it, and returns what may be handed on: all of it at the
// end (last), else all but the last RedactHold bytes, which are held.
func (r *run) redactDelta(text string, reasoning, last bool) string {
	k := 0
	if reasoning {
		k = 1
	}
	s := r.e.cfg.Redact(r.held[k] + text)
	cut := len(s)
	if !last {
		cut = runeFloor(s, max(len(s)-r.e.cfg.RedactHold, 0))
	}
	r.held[k] = s[cut:]
	return s[:cut]
}

// flushHeld hands on what redactDelta held of the decision's stream.
func (r *run) flushHeld(attempt int) {
	for k, reasoning := range []bool{false, true} {
		if r.held[k] == "" {
			continue
		}
		if text := r.redactDelta("", reasoning, true); text != "" {
			r.emitDelta(TextDelta{Text: text, Reasoning: reasoning, Attempt: attempt})
		}
	}
}

// nameCalls gives every tool call a unique id (some servers send none) and
// arguments ({} for none).
func (r *run) nameCalls(calls []ToolCall) {
	for i := range calls {
		if len(bytes.TrimSpace(calls[i].Args)) == 0 {
			calls[i].Args = json.RawMessage("{}")
		}
		dup := calls[i].ID == ""
		for j := 0; j < i && !dup; j++ {
			dup = calls[j].ID == calls[i].ID
		}
		if dup {
			calls[i].ID = fmt.Sprintf("call_%d_%d", r.step, i)
		}
	}
}

// estimateUsage estimates a decision's tokens when the model reported none:
// the prompt as perceive counted it, and the decision's text and calls.
func (r *run) estimateUsage(dec Decision) Usage {
	return Usage{PromptTokens: r.reqTokens, CompletionTokens: EstimateMessage(Message{Content: dec.Text, ToolCalls: dec.ToolCalls}), Estimated: true}
}

// MaxCallTokens is the most tokens one model call can plausibly count, in
// its prompt or its answer: past it (or below zero) a server's count is
// taken as unknown. The largest context windows are a few million.
const MaxCallTokens = 1 << 30

// implausible says what is wrong with a call's usage as a server reported
// it ("": nothing): a count below zero or past MaxCallTokens, or a cost
// that is not a finite amount.
func implausible(u Usage) string {
	switch {
	case u.PromptTokens < 0 || u.PromptTokens > MaxCallTokens:
		return fmt.Sprintf("%d prompt tokens", u.PromptTokens)
	case u.CompletionTokens < 0 || u.CompletionTokens > MaxCallTokens:
		return fmt.Sprintf("%d completion tokens", u.CompletionTokens)
	case u.CachedTokens < 0 || u.CachedTokens > MaxCallTokens:
		return fmt.Sprintf("%d cached tokens", u.CachedTokens)
	case u.Cost < 0 || u.Cost > 1e6 || u.Cost != u.Cost:
		return fmt.Sprintf("a cost of %g dollars", u.Cost)
	}
	return ""
}
