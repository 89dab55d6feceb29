package ui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentty/agentty/engine"
)

// Workflows in the console: a workflow is one top-level run whose model is
// a planner; each of its decisions calls the steps that are ready (agent
// and task steps through the tool agent, tool steps as tool calls), and
// each event of a step carries the step's name (WorkflowStep). The
// Timeline hangs a step's calls under a row of the step (timeline.go), the
// Chat draws each step as one line with its output (chat.go), the status
// line says how many steps are done, and the pause bar names the step.

// Workflows is what a backend that can carry out declared workflows offers
// /workflow. Both methods may do I/O and are called from a command, off
// the Bubble Tea loop.
type Workflows interface {
	// Workflows lists the workflows there are.
	Workflows() ([]WorkflowInfo, error)
	// PrepareWorkflow finds the workflow name, checks the inputs and makes
	// what carries it out: start runs it on the session as Start runs a
	// task, and returns at once (it is called in Update). note is what to
	// tell the person before it runs ("" for nothing). An unknown workflow
	// or a missing input is an error, and nothing runs.
	PrepareWorkflow(name string, inputs map[string]string) (start func(context.Context) <-chan engine.Event, note string, err error)
}

// WorkflowInfo is a workflow as /workflow lists it.
type WorkflowInfo struct {
	Name, Description string
	Inputs            []string // each input's name, "(required)" after it when it is
}

// workflowsListedMsg carries the workflows' names, for completion.
type workflowsListedMsg struct{ names []string }

// listWorkflows reads the workflows' names for completion; failures leave
// completion without names.
func listWorkflows(w Workflows) tea.Cmd {
	return func() tea.Msg {
		ls, _ := w.Workflows()
		names := make([]string, 0, len(ls))
		for _, l := range ls {
			names = append(names, l.Name)
		}
		slices.Sort(names)
		return workflowsListedMsg{names}
	}
}

// workflowState is what the status line says of the workflow the last run
// carries out.
type workflowState struct {
	name        string
	total, done int
	active      bool // started and not finished
}

func (w *workflowState) apply(ev engine.Event) {
	switch d := ev.Data.(type) {
	case *engine.WorkflowStarted:
		*w = workflowState{name: flatten(Sanitize(d.Name)), total: len(d.Steps), active: true}
	case *engine.WorkflowStepFinished:
		if d.Status != "not run" {
			w.done = min(w.done+1, w.total)
		}
	case *engine.WorkflowFinished:
		w.active = false
	case *engine.RunStarted:
		if ev.Workflow == "" { // a run that is no workflow's
			*w = workflowState{}
		}
	}
}

// stepOfCall names the workflow step of a call from its id,
// wf-STEP-ATTEMPT[-ITEM] (as package workflow makes them); "" when the id
// is no step's.
func stepOfCall(id string) string {
	rest, ok := strings.CutPrefix(id, "wf-")
	if !ok {
		return ""
	}
	parts := strings.Split(rest, "-")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
		return ""
	}
	for _, p := range parts[1:] {
		if _, err := strconv.Atoi(p); err != nil {
			return ""
		}
	}
	return parts[0]
}

// stepOfPending names the workflow step a pause holds back: a step's call,
// or a decision or call in the sub-run of a step (run-N/STEP#/CALL/…).
func stepOfPending(p engine.Pending) string {
	if p.ParentRun != "" {
		if parts := strings.Split(p.Run, "/"); len(parts) >= 3 {
			return stepOfCall(parts[2])
		}
		return ""
	}
	if p.ToolCall != nil {
		return stepOfCall(p.ToolCall.ID)
	}
	return ""
}

// splitArgs splits a command line's arguments at spaces; double quotes
// keep spaces in a value (k="two words").
func splitArgs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quoted, has := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, has = !quoted, true
		case !quoted && (r == ' ' || r == '\t' || r == '\n'):
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("a quote is not closed in %q", s)
	}
	if has {
		out = append(out, cur.String())
	}
	return out, nil
}

// workflowCommand runs /workflow NAME k=v …, or lists the workflows when
// no name is given.
func (m *Model) workflowCommand(arg string) tea.Cmd {
	w, ok := m.backend.(Workflows)
	if !ok {
		m.notify("/workflow is not here: this session cannot run workflows.")
		return nil
	}
	words, err := splitArgs(arg)
	if err != nil {
		m.notify("/workflow: " + err.Error())
		return nil
	}
	if len(words) == 0 {
		return m.runCommand("workflow", func() commandDoneMsg {
			ls, err := w.Workflows()
			if err != nil {
				return commandDoneMsg{err: err}
			}
			if len(ls) == 0 {
				return commandDoneMsg{note: "There are no workflows (put one in .agentty/workflows/NAME.yaml)."}
			}
			var b strings.Builder
			b.WriteString("/workflow NAME [INPUT=VALUE]… carries out a workflow. The workflows:")
			for _, l := range ls {
				fmt.Fprintf(&b, "\n  %s", l.Name)
				if l.Description != "" {
					fmt.Fprintf(&b, ": %s", l.Description)
				}
				if len(l.Inputs) > 0 {
					fmt.Fprintf(&b, " (inputs: %s)", strings.Join(l.Inputs, ", "))
				}
			}
			return commandDoneMsg{note: b.String()}
		})
	}
	name, inputs := words[0], map[string]string{}
	for _, kv := range words[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			m.notify(fmt.Sprintf("/workflow %s: want INPUT=VALUE, not %q.", name, kv))
			return nil
		}
		inputs[k] = v
	}
	return m.runCommand("workflow", func() commandDoneMsg {
		start, note, err := w.PrepareWorkflow(name, inputs)
		return commandDoneMsg{run: start, note: note, err: err}
	})
}

// completeWorkflow completes the workflow's name after "/workflow " with
// tab, from the names listed when the console started; ok is false for
// any other key or text.
func (m *Model) completeWorkflow(msg tea.KeyMsg) bool {
	if m.focus != focusInput || m.pause != nil || !key.Matches(msg, m.keys.Complete) {
		return false
	}
	part, ok := strings.CutPrefix(m.input.Value(), "/workflow ")
	if !ok || strings.ContainsAny(part, " \t\n") {
		return false
	}
	var match []string
	for _, n := range m.wfNames {
		if strings.HasPrefix(n, part) {
			match = append(match, n)
		}
	}
	switch {
	case len(match) == 0:
		if len(m.wfNames) == 0 {
			m.note = "no workflows to complete (/workflow lists them)"
		} else {
			m.note = "no workflow starts with " + flatten(Sanitize(part))
		}
	case len(match) == 1:
		m.setInput("/workflow " + match[0] + " ")
	default:
		common := match[0]
		for _, n := range match[1:] {
			for !strings.HasPrefix(n, common) {
				common = common[:len(common)-1]
			}
		}
		m.setInput("/workflow " + common)
		m.note = "workflows: " + flatten(Sanitize(strings.Join(match, ", ")))
	}
	return true
}
