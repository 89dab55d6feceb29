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
	rest, found := strings.CutPrefix(id, "wf-")
	if !found {
		return "", 0, 0, false
	}
	parts := strings.Split(rest, "-")
	if len(parts) < 2 || len(parts) > 3 {
		return "", 0, 0, false
	}
	a, err := strconv.Atoi(parts[1])
	if err != nil {
		return "", 0, 0, false
	}
	item = -1
	if len(parts) == 3 {
		if item, err = strconv.Atoi(parts[2]); err != nil {
			return "", 0, 0, false
		}
	}
	return parts[0], a, item, true
}

// stepState is what the history says of a step.
type stepState struct {
	attempt int            // the last attempt called (0: never)
	items   int            // calls of the last attempt
	results map[int]string // the last attempt's results, by item (-1: no foreach)
	// shell are a run_shell step's structured results, by item as results.
	shell   map[int]*shellOut
	skipped bool
	// check is the step's output_schema (nil: none): an output that does
	// not meet it fails the step.
	check func(string) (bool, string)
}

func (st *stepState) done() bool { return st.attempt > 0 && len(st.results) == st.items }

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
		states[s.ID] = &stepState{results: map[int]string{}, shell: map[int]*shellOut{}, check: s.OutputCheck}
	}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			step, attempt, _, ok := ParseCallID(c.ID)
			st := states[step]
			if !ok || st == nil {
				continue
			}
			if attempt > st.attempt {
				st.attempt, st.items, st.results, st.shell = attempt, 0, map[int]string{}, map[int]*shellOut{}
			}
			if attempt == st.attempt {
				st.items++
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
			if st.skipped || (st.done() && !(st.failed() && st.attempt <= s.Retry)) || (st.attempt > 0 && !st.done()) {
				continue // done (or retried below), skipped, or called in this decision
			}
			ready := true
			for _, n := range s.Needs {
				ns := states[n]
				if !ns.skipped && !(ns.done() && !ns.failed()) {
					ready = false
				}
			}
			if !ready {
				continue
			}
			data := p.data(states, nil)
			if st.attempt == 0 && s.If != nil {
				v, err := execute(s.If, data)
				if err != nil {
					return engine.Decision{}, engine.Permanent(fmt.Errorf("workflow %s, step %s: if: %w", p.W.Name, s.ID, err))
				}
				if !truthy(v) {
					st.skipped, changed = true, true
					continue
				}
			}
			items, err := p.items(s, data)
			if err != nil {
				return engine.Decision{}, engine.Permanent(err)
			}
			attempt := st.attempt + 1
			st.attempt, st.items, st.results = attempt, len(items), map[int]string{}
			for i, it := range items {
				idx := i
				if s.Foreach == nil {
					idx = -1
				}
				c, err := p.call(s, attempt, idx, p.data(states, it))
				if err != nil {
					return engine.Decision{}, engine.Permanent(err)
				}
				calls = append(calls, c)
			}
			if len(items) == 0 { // an empty foreach is done at once
				st.items = 0
			}
			changed = true
		}
	}
	if len(calls) > 0 {
		return engine.Decision{ToolCalls: calls}, nil
	}
	return p.finish(states)
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
func (p Planner) call(s *Step, attempt, item int, data map[string]any) (engine.ToolCall, error) {
	id := CallID(s.ID, attempt, item)
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
