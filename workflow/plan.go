package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agentty/agentty/engine"
)

// MaxItems bounds a foreach's fan-out: its list may come from a step's
// output, which is someone else's text.
const MaxItems = 100

// Planner is the model of a workflow's run: each decision calls the steps
// that are ready, and the last one answers with the workflow's output. It
// keeps no state: what is done is read from the run's history, so a run
// continued after a crash goes on where it was.
type Planner struct {
	W      *Workflow
	Inputs map[string]string
}

var _ engine.Model = Planner{}

// FullHistory asks the engine for the run's whole history, never trimmed
// or compacted: the planner reads what is done from it, and sends nothing
// anywhere.
func (Planner) FullHistory() bool { return true }

// TaskAgent is the agent a task step runs as (a step with a task and a
// model of its own, but no agent).
func TaskAgent(step string) string { return "wf-task-" + step }

// CallID names the call of a step's attempt (and foreach item).
func CallID(step string, attempt, item int) string {
	id := "wf-" + step + "-" + strconv.Itoa(attempt)
	if item >= 0 {
		id += "-" + strconv.Itoa(item)
	}
	return id
}

// ParseCallID reads a step's call id: its step, attempt and item (-1
// when none); ok is false for a call that is not a step's.
func ParseCallID(id string) (step string, attempt, item int, ok bool) {
	step, attempt, item, _, ok = parseCallID(id)
	return step, attempt, item, ok
}

// batchCallID names the call of an item of a foreach with max_parallel,
// which also says how many items there are: the history alone says when
// its last batch is called (wf-STEP-ATTEMPT-ITEMofTOTAL).
func batchCallID(step string, attempt, item, total int) string {
	return CallID(step, attempt, item) + "of" + strconv.Itoa(total)
}

// parseCallID is ParseCallID, with the items of a foreach with
// max_parallel (-1 for another call).
func parseCallID(id string) (step string, attempt, item, total int, ok bool) {
	rest, found := strings.CutPrefix(id, "wf-")
	if !found {
		return "", 0, 0, 0, false
	}
	parts := strings.Split(rest, "-")
	if len(parts) < 2 || len(parts) > 3 {
		return "", 0, 0, 0, false
	}
	a, err := strconv.Atoi(parts[1])
	if err != nil {
		return "", 0, 0, 0, false
	}
	item, total = -1, -1
	if len(parts) == 3 {
		it, of, batched := strings.Cut(parts[2], "of")
		if item, err = strconv.Atoi(it); err != nil {
			return "", 0, 0, 0, false
		}
		if batched {
			if total, err = strconv.Atoi(of); err != nil {
				return "", 0, 0, 0, false
			}
		}
	}
	return parts[0], a, item, total, true
}

// stepState is what the history says of a step.
type stepState struct {
	attempt int // the last attempt called (0: never)
	items   int // calls of the last attempt
	// total are the items of a foreach with max_parallel, which its calls
	// are named with (-1: not such a step, or not called yet).
	total   int
	results map[int]string // the last attempt's results, by item (-1: no foreach)
	// shell are a run_shell step's structured results, by item as results.
	shell   map[int]*shellOut
	skipped bool
	// check is the step's output_schema (nil: none): an output that does
	// not meet it fails the step.
	check func(string) (bool, string)
}

// done reports whether the last attempt's calls are finished: all of
// them; with max_parallel, all of its items, or those called once one
// failed (the rest are not called).
func (st *stepState) done() bool {
	if st.attempt == 0 || len(st.results) != st.items {
		return false
	}
	if st.items >= st.total {
		return true
	}
	for _, r := range st.results {
		if isError(r) {
			return true
		}
	}
	return false
}

func (st *stepState) failed() bool { return firstError(st) != "" }

func isError(result string) bool { return strings.HasPrefix(result, "error:") }

// output is the step's output: its result, or a foreach's results as a
// JSON list.
func (st *stepState) output() string {
	if st.skipped || st.attempt == 0 {
		return ""
	}
	if r, ok := st.results[-1]; ok {
		return r
	}
	keys := st.itemKeys()
	if st.check != nil { // typed fan-in: each item's output parsed, as its schema says
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = st.results[k]
			if r := []byte(st.results[k]); json.Valid(r) {
				out[i] = json.RawMessage(r)
			}
		}
		b, _ := json.Marshal(out)
		return string(b)
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = st.results[k]
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// itemKeys are the items of the last attempt's results, in order.
func (st *stepState) itemKeys() []int {
	keys := make([]int, 0, len(st.results))
	for k := range st.results {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

// State reads the steps' state from a run's history.
func (p Planner) State(msgs []engine.Message) map[string]*stepState {
	states := map[string]*stepState{}
	for _, s := range p.W.Steps {
		states[s.ID] = &stepState{results: map[int]string{}, shell: map[int]*shellOut{}, total: -1, check: s.OutputCheck}
	}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			step, attempt, _, total, ok := parseCallID(c.ID)
			st := states[step]
			if !ok || st == nil {
				continue
			}
			if attempt > st.attempt {
				st.attempt, st.items, st.total, st.results, st.shell = attempt, 0, -1, map[int]string{}, map[int]*shellOut{}
			}
			if attempt == st.attempt {
				st.items++
				st.total = max(st.total, total)
			}
		}
		if m.Role == engine.RoleTool {
			step, attempt, item, ok := ParseCallID(m.ToolCallID)
			if st := states[step]; ok && st != nil && attempt == st.attempt {
				st.results[item] = strings.TrimSuffix(m.Content, engine.EditedNote) // the note is for a model, not the step's output
				if sh := parseShell(m); sh != nil {
					st.shell[item] = sh
				}
			}
		}
	}
	return states
}

// data is what templates see.
func (p Planner) data(states map[string]*stepState, item any) map[string]any {
	steps := map[string]any{}
	for id, st := range states {
		out := st.output()
		var js any
		if json.Unmarshal([]byte(out), &js) != nil {
			js = nil
		}
		status := "pending"
		switch {
		case st.skipped:
			status = "skipped"
		case st.done() && st.failed():
			status = "error"
		case st.done():
			status = "ok"
		}
		var output any = out
		if st.check != nil && js != nil {
			output = js // a step with an output_schema: its fields, .steps.ID.output.FIELD
		}
		fields := map[string]any{"output": output, "json": js, "status": status}
		if s := p.W.byID[id]; s != nil && s.IsShell() {
			st.addShell(fields, s.Foreach != nil)
		}
		steps[id] = fields
	}
	d := map[string]any{"inputs": p.Inputs, "steps": steps}
	if item != nil {
		d["item"] = item
	}
	return d
}

// Decide implements engine.Model.
func (p Planner) Decide(_ context.Context, req *engine.Request) (engine.Decision, error) {
	states := p.State(req.Messages)
	var calls []engine.ToolCall
	for changed := true; changed; {
		changed = false
		for _, s := range p.W.Steps {
			st := states[s.ID]
			if st.attempt > 0 && !st.done() && len(st.results) == st.items && !st.skipped {
				// A foreach with max_parallel whose batch is done: the next.
				more, err := p.batch(s, st, states, st.items)
				if err != nil {
					return engine.Decision{}, engine.Permanent(err)
				}
				calls = append(calls, more...)
				continue
			}
			if st.skipped || (st.done() && !(st.failed() && st.attempt <= s.Retry)) || (st.attempt > 0 && !st.done()) {
				continue // done (or retried below), skipped, or called in this decision
			}
			if !p.ready(s, states) {
				continue
			}
			if st.attempt == 0 && s.If != nil {
				v, err := execute(s.If, p.data(states, nil))
				if err != nil {
					return engine.Decision{}, engine.Permanent(fmt.Errorf("workflow %s, step %s: if: %w", p.W.Name, s.ID, err))
				}
				if !truthy(v) {
					st.skipped, changed = true, true
					continue
				}
			}
			st.attempt, st.items, st.total, st.results, st.shell = st.attempt+1, 0, -1, map[int]string{}, map[int]*shellOut{}
			more, err := p.batch(s, st, states, 0)
			if err != nil {
				return engine.Decision{}, engine.Permanent(err)
			}
			calls = append(calls, more...)
			changed = true
		}
	}
	if len(calls) > 0 {
		return engine.Decision{ToolCalls: calls}, nil
	}
	return p.finish(states)
}

// ready reports whether the steps s needs are done (or skipped).
func (p Planner) ready(s *Step, states map[string]*stepState) bool {
	for _, n := range s.Needs {
		ns := states[n]
		if !ns.skipped && !(ns.done() && !ns.failed()) {
			return false
		}
	}
	return true
}

// batch are the calls of step s's attempt (st.attempt) from item from on:
// all of them, or with max_parallel, the next max_parallel. st counts them
// as called.
func (p Planner) batch(s *Step, st *stepState, states map[string]*stepState, from int) ([]engine.ToolCall, error) {
	items, err := p.items(s, p.data(states, nil))
	if err != nil {
		return nil, err
	}
	to := len(items)
	if s.MaxParallel > 0 {
		to = min(to, from+s.MaxParallel)
		st.total = len(items)
	}
	var calls []engine.ToolCall
	for i := from; i < to; i++ {
		idx, total := i, -1
		switch {
		case s.Foreach == nil:
			idx = -1
		case s.MaxParallel > 0:
			total = len(items)
		}
		c, err := p.call(s, st.attempt, idx, total, p.data(states, items[i]))
		if err != nil {
			return nil, err
		}
		calls = append(calls, c)
	}
	st.items = to // an empty foreach is done at once
	return calls, nil
}

// items are what step s runs on: once (one nil item), or with foreach, on
// each item of the JSON list its template gives.
func (p Planner) items(s *Step, data map[string]any) ([]any, error) {
	if s.Foreach == nil {
		return []any{nil}, nil
	}
	v, err := execute(s.Foreach, data)
	if err != nil {
		return nil, fmt.Errorf("workflow %s, step %s: foreach: %w", p.W.Name, s.ID, err)
	}
	var list []any
	if err := json.Unmarshal([]byte(v), &list); err != nil {
		return nil, fmt.Errorf("workflow %s, step %s: foreach: want a list (a JSON list, or lines, split or fromJSON of a text), got %s", p.W.Name, s.ID, engine.OneLine(v, 120))
	}
	if len(list) > MaxItems {
		return nil, fmt.Errorf("workflow %s, step %s: foreach: %d items, more than %d", p.W.Name, s.ID, len(list), MaxItems)
	}
	return list, nil
}

// finish is the decision once no step is left to call: the workflow's
// error when a step failed for good, else its output.
func (p Planner) finish(states map[string]*stepState) (engine.Decision, error) {
	for _, s := range p.W.Steps {
		st := states[s.ID]
		if st.done() && st.failed() {
			return engine.Decision{}, engine.Permanent(fmt.Errorf("workflow %s: step %s failed after %d %s: %s", p.W.Name, s.ID, st.attempt, engine.Plural(st.attempt, "attempt"), firstError(st)))
		}
	}
	out := ""
	if p.W.Output != nil {
		v, err := execute(p.W.Output, p.data(states, nil))
		if err != nil {
			return engine.Decision{}, engine.Permanent(fmt.Errorf("workflow %s: output: %w", p.W.Name, err))
		}
		out = v
	} else {
		out = states[p.W.Steps[len(p.W.Steps)-1].ID].output()
	}
	if strings.TrimSpace(out) == "" {
		out = "(workflow " + p.W.Name + " finished with an empty output)"
	}
	return engine.Decision{Text: out}, nil
}

func firstError(st *stepState) string {
	if r, ok := st.results[-1]; ok && isError(r) {
		return strings.TrimSpace(strings.TrimPrefix(r, "error:"))
	}
	for _, k := range st.itemKeys() { // a foreach: the first item that failed, by its index
		if r := st.results[k]; isError(r) {
			return fmt.Sprintf("item %d: %s", k, strings.TrimSpace(strings.TrimPrefix(r, "error:")))
		}
	}
	if why := st.shellCut(); why != "" {
		return why
	}
	if st.check == nil || !st.done() {
		return ""
	}
	if r, ok := st.results[-1]; ok {
		if ok, why := st.check(r); !ok {
			return "its output does not meet its output_schema: " + why
		}
		return ""
	}
	for _, k := range st.itemKeys() { // a foreach: each item meets the schema
		if ok, why := st.check(st.results[k]); !ok {
			return fmt.Sprintf("item %d's output does not meet its output_schema: %s", k, why)
		}
	}
	return ""
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "false", "0", "no", "<no value>":
		return false
	}
	return true
}

// call is the tool call of a step's attempt (and item).
func (p Planner) call(s *Step, attempt, item, total int, data map[string]any) (engine.ToolCall, error) {
	id := CallID(s.ID, attempt, item)
	if total >= 0 {
		id = batchCallID(s.ID, attempt, item, total)
	}
	switch s.Kind {
	case "tool":
		args, err := s.renderArgs(data)
		if err != nil {
			return engine.ToolCall{}, fmt.Errorf("workflow %s, step %s: args: %w", p.W.Name, s.ID, err)
		}
		return engine.ToolCall{ID: id, Name: s.Tool, Args: args}, nil
	default:
		task, err := execute(s.Task, data)
		if err != nil {
			return engine.ToolCall{}, fmt.Errorf("workflow %s, step %s: task: %w", p.W.Name, s.ID, err)
		}
		agent := s.Agent
		if s.Kind == "task" {
			agent = TaskAgent(s.ID)
		}
		args, _ := json.Marshal(map[string]string{"agent": agent, "task": task})
		return engine.ToolCall{ID: id, Name: engine.AgentTool, Args: args}, nil
	}
}
