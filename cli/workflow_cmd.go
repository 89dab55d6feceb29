package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/gates"
	"github.com/agentty/agentty/workflow"
)

// inputFlags collects --input k=v.
type inputFlags map[string]string

func (f inputFlags) String() string { return "" }
func (f inputFlags) Type() string   { return "NAME=VALUE" }
func (f inputFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	f[k] = val
	return nil
}

// workflowRunOptions are the flags and arguments of agentty workflow run.
type workflowRunOptions struct {
	*factory
	Inputs inputFlags

	Args []string
}

// newWorkflowRunCmd binds the flags of its command into its options.
func newWorkflowRunCmd(f *factory) *cobra.Command {
	opts := &workflowRunOptions{factory: f, Inputs: inputFlags{}}
	cmd := &cobra.Command{
		Use:   "run NAME|FILE [--input NAME=VALUE]… [--json]",
		Short: "Carry out a workflow (.agentty/workflows/NAME.yaml)",
		Example: `  agentty workflow run examples/workflows/arithmetic.yaml --input a=6 --input b=7
  agentty workflow run review --json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			withRunFlags(cmd, f.App)
			return exit(workflowRunRun(cmd.Context(), opts))
		},
	}
	fs := cmd.Flags()
	addRunFlags(fs, f.App)
	fs.Var(opts.Inputs, "input", "an input of the workflow, NAME=VALUE (repeat it)")
	fs.BoolVar(&f.App.JSON, "json", false, "print every event as one JSON line")
	fs.BoolVar(&f.App.Yes, "yes", false, "approve tools that ask")
	addBreakFlag(fs, f.App)
	cmd.ValidArgsFunction = completeWorkflows(f)
	return cmd
}

// workflowRunRun is `agentty workflow run NAME|FILE [--input k=v]… [--json]`.
func workflowRunRun(ctx context.Context, opts *workflowRunOptions) int {
	o := *opts.App
	stdout, stderr, getenv := opts.Out, opts.Err, opts.Getenv
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty workflow: "+format+"\n", a...)
		return code
	}
	if len(opts.Args) != 1 {
		return fail(app.ExitUsage, "usage: agentty workflow run NAME|FILE [--input NAME=VALUE]… [--json]")
	}
	w, err := workflow.Find(arg(opts.Args, 0), cmp.Or(o.Workspace, "."), getenv)
	if err != nil {
		return fail(app.ExitUsage, "%v", err)
	}
	in, err := w.CheckInputs(opts.Inputs)
	if err != nil {
		return fail(app.ExitUsage, "%v", err)
	}
	store, err := o.Store(getenv)
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	gate, err := debugGate(gates.HeadlessGate{Yes: o.Yes, Stderr: stderr}, false, opts.factory, &o)
	if err != nil {
		return fail(app.ExitUsage, "%v", err)
	}
	stdout = opts.Out
	st, err := app.Build(ctx, o, gate, getenv)
	if err != nil {
		return fail(codeOf(err), "%v", err)
	}
	defer st.Close()
	if dg, ok := gate.(*gates.DebugGate); ok {
		dg.Validate = st.ValidateArgs
	}
	eng, err := app.WorkflowEngine(st, o, w, in, getenv)
	for _, n := range st.Notices {
		fmt.Fprintln(stderr, "agentty workflow: warning:", n)
	}
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	journal, err := store.Create()
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	defer journal.Close()
	fmt.Fprintln(stderr, "session:", journal.ID)
	s := engine.NewSession(journal.ID)
	ws, _ := filepath.Abs(cmp.Or(o.Workspace, "."))
	s.UseSettings(engine.Settings{Workspace: ws, Model: st.ModelName, Origin: "workflow"})
	// Framed, then journaled, then traced and published as any run's.
	sinks := engine.Sinks{st.WithTrace(&workflow.Sink{W: w, Inputs: in, Next: journal})}
	if o.JSON {
		enc := json.NewEncoder(stdout)
		sinks = append(sinks, engine.SinkFunc(func(ev engine.Event) error { return enc.Encode(ev) }))
	}
	res := eng.Run(ctx, s, app.WorkflowTask(w, in), sinks)
	st.Flush(stderr, "agentty workflow")
	return finishWorkflow(res, o, s, stdout, fail)
}

func finishWorkflow(res engine.Result, o app.Options, s *engine.Session, stdout io.Writer, fail func(int, string, ...any) int) int {
	switch res.StopReason {
	case engine.StopAnswered:
		if !o.JSON {
			fmt.Fprintln(stdout, res.Answer)
		}
		return app.ExitAnswered
	case engine.StopStepLimit:
		return fail(app.ExitStepLimit, "stopped: step limit reached")
	case engine.StopBudget:
		return fail(app.ExitBudget, "stopped: %v (the session is %s)", res.Err, s.ID)
	case engine.StopCancelled:
		return fail(app.ExitCancelled, "cancelled (go on with: agentty run --session %s --continue)", s.ID)
	}
	return fail(app.ExitError, "%v (the session is %s)", res.Err, s.ID)
}

// workflowsOptions are the flags and arguments of agentty workflows.
type workflowsOptions struct {
	*factory
	AsJSON bool
	Args   []string
}

// newWorkflowsCmd binds the flags of its command into its options.
func newWorkflowsCmd(f *factory) *cobra.Command {
	opts := &workflowsOptions{factory: f}
	cmd := &cobra.Command{
		Use:     "workflows [--json]",
		Short:   "List the workflows and the files that failed to load",
		Example: `  agentty workflows`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			return exit(workflowsRun(opts))
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&opts.AsJSON, "json", false, "print JSON")
	return cmd
}

// workflowsRun is `agentty workflows [--json]`.
func workflowsRun(opts *workflowsOptions) int {
	o := *opts.App
	stdout, getenv := opts.Out, opts.Getenv
	files, errs := workflow.LoadFiles(cmp.Or(o.Workspace, "."), getenv)
	files, errs = checkWorkflows(o, files, errs, getenv)
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
		code = app.ExitError
	}
	if opts.AsJSON {
		printJSON(stdout, map[string]any{"workflows": rows, "errors": msgs})
		return code
	}
	if len(rows) == 0 && len(msgs) == 0 {
		fmt.Fprintln(stdout, "no workflows (put one in .agentty/workflows/NAME.yaml)")
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\tsteps: %s\tinputs: %s\t(%s)\n", r.Name, r.Description, strings.Join(r.Steps, ", "), cmp.Or(strings.Join(r.Inputs, ", "), "none"), r.Source)
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

// newWorkflowCmd is `agentty workflow`, whose one command is run.
func newWorkflowCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workflow run NAME|FILE",
		Short: "Carry out a workflow (agentty workflows lists them)",
		Args:  commandArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(f.Err, "agentty workflow: usage: agentty workflow run NAME|FILE [--input NAME=VALUE]… [--json] (agentty workflows lists them)")
			return exit(app.ExitUsage)
		},
	}
	cmd.AddCommand(newWorkflowRunCmd(f))
	return cmd
}

// checkWorkflows refuses the workflows whose steps name an agent or a tool
// that is not here (Workflow.Check against the setup a run would have),
// as a file that fails to load is: they are listed as errors, not as
// workflows.
func checkWorkflows(o app.Options, files []workflow.File, errs []error, getenv func(string) string) ([]workflow.File, []error) {
	if len(files) == 0 {
		return files, errs
	}
	st, err := app.Build(context.Background(), o, nil, getenv)
	if err != nil {
		return files, append(errs, err)
	}
	defer st.Close()
	agents, tools := app.WorkflowNames(st.Engine.Config())
	// run_shell is here, if offered only to a run with --allow-shell
	// (which workflow run checks): a workflow of it is no bad file.
	tools = append(tools, workflow.ShellTool)
	var ok []workflow.File
	for _, f := range files {
		if bad := f.W.Check(agents, tools); len(bad) > 0 {
			errs = append(errs, bad...)
			continue
		}
		ok = append(ok, f)
	}
	return ok, errs
}
