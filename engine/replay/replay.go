// Package replay plays a recorded session's decisions in place of a model:
// no model call, no network. A run re-done with the same tasks, prompt and
// tools gets, decision by decision, what the model decided when it was
// recorded, while the tools run for real; a request that changed since the
// recording (another task, system prompt or tool list) is refused, so a
// stale recording is never played silently.
package replay

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentty/agentty/engine"
)

// Recording is what a journal recorded of each decision: the decision,
// and what its request looked like, by run and turn.
type Recording struct {
	decisions map[key]recorded
	summaries map[key]string    // compactions' summaries, by run and turn
	tasks     map[string]string // run → its task
	prompts   map[engine.Hash]*engine.Prompt
	// Results are the recorded tool results, by run and call id.
	Results map[Call]Result
	// Tasks are the top-level runs' tasks, in order.
	Tasks []string
}

type key struct {
	run  string
	turn int
}

// Call names a tool call: the run it belongs to and its id.
type Call struct {
	Run, ID string
}

// Result is a recorded tool result.
type Result struct {
	Step   int
	Name   string
	Status engine.ToolStatus
	Text   string
}

type recorded struct {
	dec engine.Decided
	req *engine.ModelRequest
	usg engine.Usage
	// edit is the person's edit of the request (request_edited), which
	// a replay gives again (Verdicts).
	edit *engine.RequestEdit
}

// FromEvents reads a recording from a session's events.
func FromEvents(events []engine.Event) *Recording {
	rec := &Recording{decisions: map[key]recorded{}, summaries: map[key]string{}, tasks: map[string]string{}, Results: map[Call]Result{}, prompts: map[engine.Hash]*engine.Prompt{}}
	turn := map[string]int{}                     // run → decisions so far
	pending := map[string]*engine.ModelRequest{} // run → its last model_request
	edits := map[string]*engine.RequestEdit{}    // run → the edit of its next decision's request
	for _, ev := range events {
		switch d := ev.Data.(type) {
		case *engine.RunStarted:
			if _, seen := rec.tasks[ev.Run]; !seen && ev.ParentRun == "" {
				rec.Tasks = append(rec.Tasks, d.Task)
			}
			rec.tasks[ev.Run] = d.Task
		case *engine.Prompt:
			rec.prompts[d.Hash] = d
		case *engine.ModelRequest:
			pending[ev.Run], edits[ev.Run] = d, nil
		case *engine.RequestEdited:
			edits[ev.Run] = &d.RequestEdit
		case *engine.Decided:
			rec.decisions[key{ev.Run, turn[ev.Run]}] = recorded{dec: *d, req: pending[ev.Run], edit: edits[ev.Run]}
			turn[ev.Run]++
		case *engine.UsageRecorded:
			k := key{ev.Run, turn[ev.Run] - 1}
			if r, ok := rec.decisions[k]; ok {
				r.usg = d.Usage
				rec.decisions[k] = r
			}
		case *engine.ContextCompacted:
			if !d.Manual {
				rec.summaries[key{ev.Run, turn[ev.Run]}] = strings.TrimSuffix(d.Summary, requestNoteOf(d.Summary))
			}
		case *engine.ToolFinished:
			rec.Results[Call{ev.Run, d.ID}] = Result{Step: ev.Step, Name: d.Name, Status: d.Status, Text: d.Result}
		}
	}
	return rec
}

// requestNoteOf is the verbatim request the engine appends to a summary
// that took in its turn (engine.compact), which the model did not write.
func requestNoteOf(summary string) string {
	if i := strings.LastIndex(summary, engine.RequestNote); i >= 0 {
		return summary[i:]
	}
	return ""
}

// Decisions counts the recorded decisions.
func (r *Recording) Decisions() int { return len(r.decisions) }

// Model answers each request with the recorded decision of its run and
// turn. It fails (permanently: retrying cannot help) when there is none,
// or when the request is not the one recorded: another task, or a system
// prompt or tool list of another size.
type Model struct {
	rec *Recording
}

// NewModel returns a model playing rec.
func NewModel(rec *Recording) Model { return Model{rec} }

// ErrChanged is wrapped by the error of a request that differs from the
// recording.
var ErrChanged = fmt.Errorf("the request changed since it was recorded")

// Decide implements engine.Model.
func (m Model) Decide(_ context.Context, req *engine.Request) (engine.Decision, error) {
	if req.Summarize {
		if sum, ok := m.rec.summaries[key{req.Run, req.Turn}]; ok {
			return engine.Decision{Text: sum}, nil
		}
		return engine.Decision{}, engine.Permanent(fmt.Errorf("replay: run %s has no recorded summary before decision %d", req.Run, req.Turn+1))
	}
	r, ok := m.rec.decisions[key{req.Run, req.Turn}]
	if !ok {
		return engine.Decision{}, engine.Permanent(fmt.Errorf("replay: run %s has no recorded decision %d", req.Run, req.Turn+1))
	}
	if err := m.rec.check(req, r); err != nil {
		return engine.Decision{}, engine.Permanent(err)
	}
	d, u := r.dec, r.usg
	u.ReplayedCost, u.Cost = u.Cost+u.ReplayedCost, 0 // no call is made: nothing is spent
	return engine.Decision{Text: d.Text, Reasoning: d.Reasoning, ToolCalls: append([]engine.ToolCall(nil), d.ToolCalls...), Usage: u}, nil
}

// check compares a request with what was recorded of it.
func (r *Recording) check(req *engine.Request, rec recorded) error {
	if e := rec.edit; e != nil {
		// The person changed this request: what it was before is known
		// by its hash alone, and the edit must have been made again.
		if e.System != nil && req.System != *e.System {
			return fmt.Errorf("%w: run %s, decision %d: the person's edit of the system prompt was not made again", ErrChanged, req.Run, req.Turn+1)
		}
		return nil
	}
	if task, ok := r.tasks[req.Run]; ok && req.Turn == 0 {
		if u := req.LastUser(); u >= 0 && req.Messages[u].Content != task {
			return fmt.Errorf("%w: run %s's task was %q, now %q", ErrChanged, req.Run, engine.OneLine(task, 80), engine.OneLine(req.Messages[u].Content, 80))
		}
	}
	mr := rec.req
	if mr == nil {
		return nil
	}
	if p := r.prompts[mr.PromptHash]; p != nil && engine.PromptHash(req.System, req.Instructions, req.Tools) != mr.PromptHash {
		return fmt.Errorf("%w: run %s, decision %d: what it is asked with besides its messages:%s", ErrChanged, req.Run, req.Turn+1, diffPrompt(p, req))
	}
	if n := len(req.Tools); n != mr.Tools {
		return fmt.Errorf("%w: run %s, decision %d: %d tools offered, %d when recorded", ErrChanged, req.Run, req.Turn+1, n, mr.Tools)
	}
	if t := engine.EstimateTools(req.Tools); t != mr.ToolTokens {
		return fmt.Errorf("%w: run %s, decision %d: the tools' schemas are about %d tokens, %d when recorded", ErrChanged, req.Run, req.Turn+1, t, mr.ToolTokens)
	}
	if mr.PromptHash != 0 && engine.PromptHash(req.System, req.Instructions, req.Tools) != mr.PromptHash {
		return fmt.Errorf("%w: run %s, decision %d: the system prompt, the project instructions or the tools' schemas are not those recorded", ErrChanged, req.Run, req.Turn+1)
	}
	if t := engine.EstimateTokens(req.System); t != mr.SystemTokens {
		return fmt.Errorf("%w: run %s, decision %d: the system prompt is about %d tokens, %d when recorded", ErrChanged, req.Run, req.Turn+1, t, mr.SystemTokens)
	}
	return nil
}

// Until plays the recording for the decisions of steps up to step, then
// hands over to live (a fork that goes on with another model).
type Until struct {
	Replay Model
	Step   int
	Live   engine.Model
}

// Decide implements engine.Model.
func (u Until) Decide(ctx context.Context, req *engine.Request) (engine.Decision, error) {
	if req.Step <= u.Step { // a summary call of a replayed step is replayed too
		return u.Replay.Decide(ctx, req)
	}
	return u.Live.Decide(ctx, req)
}
