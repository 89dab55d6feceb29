package app

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/workflow"
)

// WorkflowEngine is the setup's engine made to carry out w: the planner as
// its model, an agent for each task step (its model the step's, or the
// session's), and room in the step limit for every step and retry.
func WorkflowEngine(st *Setup, o Options, w *workflow.Workflow, inputs map[string]string, getenv func(string) string) (*engine.Engine, error) {
	cfg := st.Engine.Config()
	session, sessionName := cfg.Model, cfg.ModelName
	// The run is named for the session's model, which its steps use (and
	// which a continued run picks again): the workflow is in its events.
	if errs := w.Check(WorkflowNames(cfg)); len(errs) > 0 {
		return nil, errors.Join(errs...) // before a step runs and spends
	}
	cfg.Model = workflow.Planner{W: w, Inputs: inputs}
	cfg.Agents = slices.Clone(cfg.Agents)
	for i := range cfg.Agents { // the planner is the run's model, not theirs
		if cfg.Agents[i].Model == nil {
			cfg.Agents[i].Model, cfg.Agents[i].ModelName = session, sessionName
		}
	}
	userCfg, ws, err := config.Load(getenv, cmp.Or(o.Workspace, "."))
	if err != nil {
		return nil, err
	}
	most := 0
	for _, s := range w.Steps {
		most += s.Decisions()
		if s.Kind != "task" {
			continue
		}
		// The step's output_schema is what its model is asked for (and its
		// answer checked against, asked again when it does not meet it).
		a := engine.Agent{Name: workflow.TaskAgent(s.ID), Description: "the task of workflow step " + s.ID, Model: session, ModelName: sessionName, OutputSchema: s.OutputSchema}
		if s.Tools != nil { // narrowed: a call of another tool is refused as unknown
			if a.Tools, err = narrowTools(cfg.Tools, s.Tools); err != nil {
				return nil, fmt.Errorf("%s:%d: steps.%s.tools: %w", w.File, s.Line, s.ID, err)
			}
			a.NoDelegation = !slices.Contains(s.Tools, engine.AgentTool)
		}
		if s.Model != "" {
			if trusted, _ := WorkspaceTrusted(o, AbsDir(cmp.Or(o.Workspace, ".")), ws, getenv); Inside(w.File, cmp.Or(o.Workspace, ".")) && !trusted && s.Model != "offline" {
				st.Notices = append(st.Notices, fmt.Sprintf("%s:%d: steps.%s.model: refused %q: the workspace is not trusted; the step uses the session's model (agentty trust)", w.File, s.Line, s.ID, s.Model))
			} else {
				mo := o
				mo.Model = s.Model
				if a.Model, a.ModelName, err = PickModel(mo, userCfg, getenv); err != nil {
					return nil, fmt.Errorf("%s:%d: steps.%s.model: %w", w.File, s.Line, s.ID, err)
				}
			}
		}
		cfg.Agents = append(cfg.Agents, a)
	}
	cfg.MaxSteps = max(cfg.MaxSteps, most+2)
	// The planner calls every ready step, each foreach item a call, in one
	// decision: the cap on a model's calls is not for it.
	cfg.MaxCalls = max(cfg.MaxCalls, engine.DefaultMaxCalls, len(w.Steps)*workflow.MaxItems)
	e := engine.New(cfg)
	return e, e.Err()
}

// narrowTools is a registry of the tools of all named (the tool agent is
// the engine's, not in it).
func narrowTools(all *engine.Registry, names []string) (*engine.Registry, error) {
	var keep []engine.Tool
	if all != nil {
		for _, t := range all.Tools() {
			if slices.Contains(names, t.Name) {
				keep = append(keep, t)
			}
		}
	}
	return engine.NewRegistry(keep...)
}

// Inside reports whether file (symlinks resolved) is in the folder dir:
// a workflow someone else's folder supplies.
func Inside(file, dir string) bool {
	f := AbsDir(file)
	rel, err := filepath.Rel(AbsDir(dir), f)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func AbsDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// WorkflowTask is the run's task: the workflow and its inputs.
func WorkflowTask(w *workflow.Workflow, in map[string]string) string {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range in {
			if !yield(k) {
				return
			}
		}
	})
	var b strings.Builder
	b.WriteString("workflow " + w.Name)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%q", k, in[k])
	}
	return b.String()
}

// WorkflowOf finds the workflow a session's last run carries out, from its
// workflow_started event: (nil, nil) when it is no workflow's.
func WorkflowOf(past []engine.Event, run string, wsDir string, getenv func(string) string) (*workflow.Workflow, map[string]string, error) {
	for _, ev := range past {
		if d, ok := ev.Data.(*engine.WorkflowStarted); ok && ev.Run == run {
			w, err := workflow.Find(d.File, wsDir, getenv) // a path: that file
			if err != nil {
				return nil, nil, fmt.Errorf("the session's workflow %s: %w", d.Name, err)
			}
			return w, d.Inputs, nil
		}
	}
	return nil, nil, nil
}

// WorkflowNames are the agents and the tools an engine configured so
// offers a workflow's agent and tool steps (Workflow.Check).
func WorkflowNames(cfg engine.Config) (agents, tools []string) {
	for _, a := range cfg.Agents {
		agents = append(agents, a.Name)
	}
	if cfg.Tools != nil {
		tools = cfg.Tools.Names()
	}
	return agents, tools
}
