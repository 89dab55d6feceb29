package workflow

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/agentty/agentty/engine"
)

// Sink frames a workflow's run in its events: it stamps each event with
// the workflow (and, for a step's own events, the step), and adds
// workflow_started after the run's run_started, workflow_step_finished
// when a step's calls are done (and it will not be retried), and
// workflow_finished after run_finished. Put it first, around the journal:
// it passes everything on to Next, and holds events back as Next does.
type Sink struct {
	W      *Workflow
	Inputs map[string]string
	Next   engine.Sink

	run   string
	steps map[string]*sinkStep
	queue []engine.Event // released when Next holds nothing back
}

type sinkStep struct {
	attempt, items int
	total          int // a foreach with max_parallel's items (-1: none)
	results        map[int]string
	failed, done   bool
}

var _ engine.Releaser = (*Sink)(nil)

// Prime tells the sink of the run's events before a crash (a continued
// run), emitting nothing.
func (k *Sink) Prime(past []engine.Event) {
	for _, ev := range past {
		k.after(ev)
	}
}

// Emit implements engine.Sink.
func (k *Sink) Emit(ev engine.Event) error {
	k.stamp(&ev)
	if err := k.pass(ev); err != nil {
		return err
	}
	for _, x := range k.after(ev) {
		if err := k.pass(x); err != nil {
			return err
		}
	}
	return nil
}

func (k *Sink) pass(ev engine.Event) error {
	if _, ok := k.Next.(engine.Releaser); !ok {
		k.queue = append(k.queue, ev)
	}
	return k.Next.Emit(ev)
}

// Flush implements engine.Flusher.
func (k *Sink) Flush() error {
	_, err := k.Release()
	return err
}

// Release implements engine.Releaser.
func (k *Sink) Release() ([]engine.Event, error) {
	if r, ok := k.Next.(engine.Releaser); ok {
		return r.Release()
	}
	out := k.queue
	k.queue = nil
	if f, ok := k.Next.(engine.Flusher); ok {
		return out, f.Flush()
	}
	return out, nil
}

// stepOf names the workflow step an event belongs to, "" for none.
func stepOf(ev *engine.Event) string {
	if ev.ParentRun != "" {
		// A sub-run of a step: run-N/STEP#/CALL/…
		parts := strings.Split(ev.Run, "/")
		if len(parts) >= 3 {
			if s, _, _, ok := ParseCallID(parts[2]); ok {
				return s
			}
		}
		return ""
	}
	var id string
	switch d := ev.Data.(type) {
	case *engine.ToolStarted:
		id = d.ID
	case *engine.ToolFinished:
		id = d.ID
	case *engine.GatePaused:
		if d.ToolCall != nil {
			id = d.ToolCall.ID
		}
	}
	s, _, _, _ := ParseCallID(id)
	return s
}

func (k *Sink) stamp(ev *engine.Event) {
	ev.Workflow = k.W.Name
	if ev.WorkflowStep == "" {
		ev.WorkflowStep = stepOf(ev)
	}
}

// after returns the events that follow ev.
func (k *Sink) after(ev engine.Event) []engine.Event {
	if ev.ParentRun != "" {
		return nil
	}
	if k.steps == nil {
		k.steps = map[string]*sinkStep{}
		for _, s := range k.W.Steps {
			k.steps[s.ID] = &sinkStep{results: map[int]string{}, total: -1}
		}
	}
	frame := func(step string, data any, kind engine.Kind) engine.Event {
		return engine.Event{V: engine.SchemaVersion, Session: ev.Session, Run: ev.Run, Step: ev.Step, Phase: engine.Observe,
			Kind: kind, Time: ev.Time, Data: data, Workflow: k.W.Name, WorkflowStep: step}
	}
	var out []engine.Event
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		k.run = ev.Run
		ids := make([]string, len(k.W.Steps))
		for i, s := range k.W.Steps {
			ids[i] = s.ID
		}
		out = append(out, frame("", &engine.WorkflowStarted{Name: k.W.Name, File: k.W.File, Inputs: k.Inputs, Steps: ids}, engine.KindWorkflowStarted))
	case *engine.Decided:
		for _, c := range d.ToolCalls {
			step, attempt, _, total, ok := parseCallID(c.ID)
			st := k.steps[step]
			if !ok || st == nil {
				continue
			}
			if attempt > st.attempt {
				st.attempt, st.items, st.total, st.results, st.failed = attempt, 0, -1, map[int]string{}, false
			}
			st.items++
			st.total = max(st.total, total)
		}
	case *engine.ToolFinished:
		step, attempt, item, ok := ParseCallID(d.ID)
		if st := k.steps[step]; ok && st != nil && attempt == st.attempt {
			st.results[item] = d.Result
			st.failed = st.failed || isError(d.Result) // as the planner judges it
		}
	case *engine.StepFinished:
		for _, s := range k.W.Steps {
			st := k.steps[s.ID]
			if st.done || st.attempt == 0 || len(st.results) < st.items || (st.items < st.total && !st.failed) || (st.failed && st.attempt <= s.Retry) {
				continue
			}
			st.done = true
			f := &engine.WorkflowStepFinished{Step: s.ID, Status: "ok", Output: output(st.results), Attempts: st.attempt}
			if s.Foreach != nil {
				f.Items = st.items
			}
			if st.failed {
				f.Status = "error"
			}
			out = append(out, frame(s.ID, f, engine.KindWorkflowStepFinished))
		}
	case *engine.RunFinished:
		if ev.Run != k.run && k.run != "" {
			return nil
		}
		for _, s := range k.W.Steps {
			if st := k.steps[s.ID]; !st.done {
				status := "skipped"
				if d.StopReason != engine.StopAnswered {
					status = "not run"
				}
				out = append(out, frame(s.ID, &engine.WorkflowStepFinished{Step: s.ID, Status: status}, engine.KindWorkflowStepFinished))
			}
		}
		f := &engine.WorkflowFinished{Name: k.W.Name, Status: "ok", Output: d.Answer, Error: d.Error}
		if d.StopReason != engine.StopAnswered {
			f.Status = string(d.StopReason)
		}
		out = append(out, frame("", f, engine.KindWorkflowFinished))
	}
	return out
}

// output is a step's output from its results by item.
func output(results map[int]string) string {
	if r, ok := results[-1]; ok {
		return r
	}
	keys := make([]int, 0, len(results))
	for k := range results {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	list := make([]string, len(keys))
	for i, k := range keys {
		list[i] = results[k]
	}
	b, _ := json.Marshal(list)
	return string(b)
}
