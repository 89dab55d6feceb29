package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/agentty/agentty/config"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/workflow"
)

// workflowFile is a workflow found in a workflows folder.
type workflowFile struct {
	W     *workflow.Workflow
	Scope string // workspace or user
}

// workflowPlaces are the folders workflows are read from, strongest first:
// the workspace's .agentty/workflows, then workflows beside the person's
// config.
func workflowPlaces(wsDir string, getenv func(string) string) []struct{ dir, scope string } {
	return []struct{ dir, scope string }{
		{filepath.Join(wsDir, ".agentty", "workflows"), "workspace"},
		{filepath.Join(filepath.Dir(config.Path(getenv)), "workflows"), "user"},
	}
}

// loadWorkflows reads every *.yaml (and *.yml) file of the workflow
// folders; the workspace's wins a name clash. A bad file is an error in
// the list and the others still load.
func loadWorkflows(wsDir string, getenv func(string) string) ([]workflowFile, []error) {
	var out []workflowFile
	var errs []error
	seen := map[string]bool{}
	for _, pl := range workflowPlaces(wsDir, getenv) {
		entries, err := os.ReadDir(pl.dir)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !(strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
				continue
			}
			w, err := readWorkflow(filepath.Join(pl.dir, e.Name()), pl.scope == "workspace", wsDir)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if seen[w.Name] {
				continue
			}
			seen[w.Name] = true
			out = append(out, workflowFile{W: w, Scope: pl.scope})
		}
	}
	return out, errs
}

// readWorkflow reads a workflow file: a regular file of at most 1 MiB
// (a FIFO cannot hang it), and, in the workspace, not a symlink leading out
// of it.
func readWorkflow(path string, inWorkspace bool, wsDir string) (*workflow.Workflow, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs // named absolutely in the workflow_started event, for --continue from anywhere
	}
	if inWorkspace {
		root, _ := filepath.Abs(wsDir)
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("%s: leads to %s, outside the workspace; refusing to read it", path, real)
		}
	}
	b, err := config.ReadSmall(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return workflow.Parse(path, b)
}

// findWorkflow is the workflow named (or the file given).
func findWorkflow(target, wsDir string, getenv func(string) string) (*workflow.Workflow, error) {
	if strings.HasSuffix(target, ".yaml") || strings.HasSuffix(target, ".yml") || strings.ContainsRune(target, os.PathSeparator) {
		return readWorkflow(target, false, wsDir)
	}
	files, errs := loadWorkflows(wsDir, getenv)
	for _, f := range files {
		if f.W.Name == target {
			return f.W, nil
		}
	}
	var names []string
	for _, f := range files {
		names = append(names, f.W.Name)
	}
	msg := fmt.Sprintf("no workflow is called %q", target)
	if len(names) > 0 {
		msg += "; the workflows are: " + strings.Join(names, ", ")
	} else {
		msg += " (put one in .agentty/workflows/NAME.yaml)"
	}
	for _, e := range errs {
		if strings.Contains(e.Error(), string(os.PathSeparator)+target+".y") {
			msg += "; its file did not load: " + e.Error()
		}
	}
	return nil, errors.New(msg)
}

// workflowEngine is the setup's engine made to carry out w: the planner as
// its model, an agent for each task step (its model the step's, or the
// session's), and room in the step limit for every step and retry.
func workflowEngine(st *setup, o options, w *workflow.Workflow, inputs map[string]string, getenv func(string) string) (*engine.Engine, error) {
	cfg := st.engine.Config()
	session, sessionName := cfg.Model, cfg.ModelName
	// The run is named for the session's model, which its steps use (and
	// which a continued run picks again): the workflow is in its events.
	cfg.Model = workflow.Planner{W: w, Inputs: inputs}
	cfg.Agents = slices.Clone(cfg.Agents)
	for i := range cfg.Agents { // the planner is the run's model, not theirs
		if cfg.Agents[i].Model == nil {
			cfg.Agents[i].Model, cfg.Agents[i].ModelName = session, sessionName
		}
	}
	userCfg, ws, err := config.Load(getenv, cmpOr(o.workspace, "."))
	if err != nil {
		return nil, err
	}
	most := 0
	for _, s := range w.Steps {
		most += 1 + s.Retry
		if s.Kind != "task" {
			continue
		}
		a := engine.Agent{Name: workflow.TaskAgent(s.ID), Description: "the task of workflow step " + s.ID, Model: session, ModelName: sessionName}
		if s.Model != "" {
			if trusted, _ := workspaceTrusted(o, absDir(cmpOr(o.workspace, ".")), ws, getenv); inside(w.File, cmpOr(o.workspace, ".")) && !trusted && s.Model != "offline" {
				st.notices = append(st.notices, fmt.Sprintf("%s:%d: steps.%s.model: refused %q: the workspace is not trusted; the step uses the session's model (agentty trust)", w.File, s.Line, s.ID, s.Model))
			} else {
				mo := o
				mo.model = s.Model
				if a.Model, a.ModelName, err = pickModel(mo, userCfg, getenv); err != nil {
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

// inside reports whether file (symlinks resolved) is in the folder dir:
// a workflow someone else's folder supplies.
func inside(file, dir string) bool {
	f := absDir(file)
	rel, err := filepath.Rel(absDir(dir), f)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func absDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// inputFlags collects --input k=v.
type inputFlags map[string]string

func (f inputFlags) String() string { return "" }
func (f inputFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	f[k] = val
	return nil
}

// workflowCmd is `agentty workflow run NAME|FILE [--input k=v]… [--json]`.
func workflowCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty workflow: "+format+"\n", a...)
		return code
	}
	if len(args) == 0 || args[0] != "run" {
		return fail(exitUsage, "usage: agentty workflow run NAME|FILE [--input NAME=VALUE]… [--json] (agentty workflows lists them)")
	}
	fs := newFlags("workflow run", stderr)
	var o options
	o.register(fs)
	inputs := inputFlags{}
	fs.Var(inputs, "input", "an input of the workflow, NAME=VALUE (repeat it)")
	fs.BoolVar(&o.json, "json", false, "print every event as one JSON line")
	fs.BoolVar(&o.yes, "yes", false, "approve tools that ask")
	if err := parseInterspersed(fs, args[1:]); err != nil {
		return parseFailed(err)
	}
	if fs.NArg() != 1 {
		return fail(exitUsage, "usage: agentty workflow run NAME|FILE [--input NAME=VALUE]… [--json]")
	}
	o.maxStepsSet = flagSet(fs, "max-steps")
	w, err := findWorkflow(fs.Arg(0), cmpOr(o.workspace, "."), getenv)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	in, err := w.CheckInputs(inputs)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	store, err := o.store(getenv)
	if err != nil {
		return fail(exitError, "%v", err)
	}
	st, err := build(ctx, o, headlessGate{yes: o.yes, stderr: stderr}, getenv)
	if err != nil {
		if errors.As(err, new(errUsage)) {
			return fail(exitUsage, "%v", err)
		}
		return fail(exitError, "%v", err)
	}
	defer st.Close()
	eng, err := workflowEngine(st, o, w, in, getenv)
	for _, n := range st.notices {
		fmt.Fprintln(stderr, "agentty workflow: warning:", n)
	}
	if err != nil {
		return fail(exitError, "%v", err)
	}
	journal, err := store.Create()
	if err != nil {
		return fail(exitError, "%v", err)
	}
	defer journal.Close()
	fmt.Fprintln(stderr, "session:", journal.ID)
	s := engine.NewSession(journal.ID)
	// Framed, then journaled, then traced and published as any run's.
	sinks := engine.Sinks{st.withTrace(&workflow.Sink{W: w, Inputs: in, Next: journal})}
	if o.json {
		enc := json.NewEncoder(stdout)
		sinks = append(sinks, engine.SinkFunc(func(ev engine.Event) error { return enc.Encode(ev) }))
	}
	res := eng.Run(ctx, s, workflowTask(w, in), sinks)
	for _, why := range []string{st.closeBus(), st.closeTraces()} {
		if why != "" {
			fmt.Fprintln(stderr, "agentty workflow: warning:", why)
		}
	}
	return finishWorkflow(res, o, s, stdout, fail)
}

// workflowTask is the run's task: the workflow and its inputs.
func workflowTask(w *workflow.Workflow, in map[string]string) string {
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

func finishWorkflow(res engine.Result, o options, s *engine.Session, stdout io.Writer, fail func(int, string, ...any) int) int {
	switch res.StopReason {
	case engine.StopAnswered:
		if !o.json {
			fmt.Fprintln(stdout, res.Answer)
		}
		return exitAnswered
	case engine.StopStepLimit:
		return fail(exitStepLimit, "stopped: step limit reached")
	case engine.StopCancelled:
		return fail(exitCancelled, "cancelled (go on with: agentty run --session %s --continue)", s.ID)
	}
	return fail(exitError, "%v (the session is %s)", res.Err, s.ID)
}

// workflowOf finds the workflow a session's last run carries out, from its
// workflow_started event: (nil, nil) when it is no workflow's.
func workflowOf(past []engine.Event, run string, wsDir string, getenv func(string) string) (*workflow.Workflow, map[string]string, error) {
	for _, ev := range past {
		if d, ok := ev.Data.(*engine.WorkflowStarted); ok && ev.Run == run {
			w, err := readWorkflow(d.File, false, wsDir)
			if err != nil {
				return nil, nil, fmt.Errorf("the session's workflow %s: %w", d.Name, err)
			}
			return w, d.Inputs, nil
		}
	}
	return nil, nil, nil
}

// workflowsCmd is `agentty workflows [--json]`.
func workflowsCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("workflows", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	ws := fs.String("workspace", "", "the workspace (default: the current folder)")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	files, errs := loadWorkflows(cmpOr(*ws, "."), getenv)
	sort.SliceStable(files, func(i, j int) bool { return files[i].W.Name < files[j].W.Name })
	type row struct {
		Name        string   `json:"name"`
		Description string   `json:"description,omitempty"`
		Steps       []string `json:"steps"`
		Inputs      []string `json:"inputs,omitempty"`
		Source      string   `json:"source"`
		Scope       string   `json:"scope"`
	}
	var rows []row
	for _, f := range files {
		r := row{Name: f.W.Name, Description: f.W.Description, Source: f.W.File, Scope: f.Scope}
		for _, s := range f.W.Steps {
			r.Steps = append(r.Steps, s.ID)
		}
		for _, in := range f.W.Inputs {
			n := in.Name
			if in.Required {
				n += " (required)"
			}
			r.Inputs = append(r.Inputs, n)
		}
		rows = append(rows, r)
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	code := 0
	if len(errs) > 0 {
		code = exitError
	}
	if *asJSON {
		printJSON(stdout, map[string]any{"workflows": rows, "errors": msgs})
		return code
	}
	if len(rows) == 0 && len(msgs) == 0 {
		fmt.Fprintln(stdout, "no workflows (put one in .agentty/workflows/NAME.yaml)")
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\tsteps: %s\tinputs: %s\t(%s)\n", r.Name, r.Description, strings.Join(r.Steps, ", "), cmpOr(strings.Join(r.Inputs, ", "), "none"), r.Source)
	}
	tw.Flush()
	if len(msgs) > 0 {
		fmt.Fprintf(stdout, "\nFailed to load (%d):\n", len(msgs))
		for _, m := range msgs {
			fmt.Fprintln(stdout, "  "+m)
		}
	}
	return code
}
