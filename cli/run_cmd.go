package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/gates"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/workflow"
)

// taskArg is the task a command's arguments give: their words, or, when
// they are "-", standard input.
func taskArg(args []string, stdin io.Reader) (string, error) {
	task := strings.TrimSpace(strings.Join(args, " "))
	if task != "-" {
		return task, nil
	}
	b, err := io.ReadAll(stdin)
	return strings.TrimSpace(string(b)), err
}

// runOptions are the flags and arguments of agentty run.
type runOptions struct {
	*factory
	OutputSchema string
	Answers      string
	Step         bool

	Args []string
}

// newRunCmd binds the flags of its command into its options.
func newRunCmd(f *factory) *cobra.Command {
	opts := &runOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "run [flags] TASK",
		Short: "Run one task headless and print the answer (TASK - reads stdin)",
		Example: `  agentty run "what is 17*23?"
  agentty run --json --model gpt-4o-mini "summarise README.md" | jq .kind
  echo "what is 2+2" | agentty run -
  agentty run --session ID "and now in French"     continue a session
  agentty run --session ID --continue               finish an interrupted run
  agentty run --json --break tool=run_shell "tidy up" < answers.jsonl   debug it step by step`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			withRunFlags(cmd, f.App)
			return exit(runRun(cmd.Context(), opts))
		},
	}
	fs := cmd.Flags()
	addRunFlags(fs, f.App)
	fs.BoolVar(&f.App.JSON, "json", false, "print every event as one JSON line")
	fs.StringVar(&opts.OutputSchema, "output-schema", "", "a JSON Schema `file` the answer must meet: it is printed as JSON")
	fs.StringVar(&opts.Answers, "answers", "", "a JSON `file` mapping the questions the run asks (ask_user) to their answers")
	fs.StringVar(&f.App.Session, "session", "", "continue this session")
	fs.BoolVar(&f.App.Continue, "continue", false, "finish the session's interrupted run")
	fs.BoolVar(&f.App.Yes, "yes", false, "approve tools that ask, and re-running interrupted tool calls")
	fs.BoolVar(&opts.Step, "step", false, "with --json: pause before every decision and tool call, each answered by a JSON line on stdin (docs/debugging.md)")
	addBreakFlag(fs, f.App)
	cmd.RegisterFlagCompletionFunc("session", completeSessions(f))
	return cmd
}

// runRun is `agentty run [flags] TASK`: one run, the answer on stdout.
// With --session it continues that session, and with --continue it
// finishes the session's interrupted run.
func runRun(ctx context.Context, opts *runOptions) int {
	o := *opts.App
	stdin, stderr, getenv := opts.In, opts.Err, opts.Getenv
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty run: "+format+"\n", a...)
		return code
	}
	task, err := taskArg(opts.Args, stdin)
	if err != nil {
		return fail(app.ExitError, "reading the task: %v", err)
	}
	gate, err := runGate(opts, &o)
	if err != nil {
		return fail(app.ExitUsage, "%v", err)
	}
	switch {
	case o.Continue && o.Session == "":
		return fail(app.ExitUsage, "--continue needs --session ID")
	case o.Continue && task != "":
		return fail(app.ExitUsage, "--continue takes no task: it finishes the interrupted one")
	case !o.Continue && task == "":
		return fail(app.ExitUsage, "no task given (usage: agentty run [flags] TASK)")
	}
	store, err := o.Store(getenv)
	if errors.As(err, new(app.UsageError)) {
		return fail(app.ExitUsage, "%v", err)
	}
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	defer store.Close()
	buildFailed := func(err error) int {
		return fail(codeOf(err), "%v", err)
	}
	var st *app.Setup
	var journal *sessions.Journal
	var s *engine.Session
	var past []engine.Event // the session's journal, when it is continued
	if o.Session == "" {
		if st, err = app.Build(ctx, o, gate, getenv); err != nil {
			return buildFailed(err) // before a session is made for nothing
		}
		if journal, err = store.Create(); err != nil {
			return fail(app.ExitError, "%v", err)
		}
		s = engine.NewSession(journal.ID)
	} else {
		var l *sessions.Loaded
		journal, l, err = store.OpenWriter(o.Session)
		if err != nil {
			return fail(app.ExitError, "%v", err)
		}
		for _, w := range l.Warnings {
			fmt.Fprintln(stderr, "agentty run: warning:", w)
		}
		s, past = l.Session, l.Events
		if o.Model == "" {
			o.Model = l.Meta.Model // a session keeps its model unless told otherwise
		}
	}
	defer journal.Close()
	if st == nil {
		if st, err = app.Build(ctx, o, gate, getenv); err != nil {
			return buildFailed(err)
		}
	}
	defer st.Close()
	if dg, ok := gate.(*gates.DebugGate); ok {
		dg.Validate = st.ValidateArgs
	}
	for _, n := range st.Notices {
		fmt.Fprintln(stderr, "agentty run: warning:", n)
	}
	if o.OutputSchema != nil && st.ModelName == offline.Name {
		fmt.Fprintln(stderr, "agentty run: warning: --output-schema: the offline model cannot answer in JSON; give --model")
	}
	fmt.Fprintln(stderr, "session:", journal.ID)
	return runSession(ctx, opts, o, st, s, journal, past, task)

}

// runSession runs the task in session s (or, with --continue, finishes its
// interrupted run), journaling to journal and the sinks the setup has.
func runSession(ctx context.Context, opts *runOptions, o app.Options, st *app.Setup, s *engine.Session, journal *sessions.Journal, past []engine.Event, task string) int {
	stdout, stderr, getenv := opts.Out, opts.Err, opts.Getenv
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty run: "+format+"\n", a...)
		return code
	}
	sinks := engine.Sinks{journal}
	if !o.JSON && st.Checkpoints != nil { // --json has them as events
		sinks = append(sinks, checkpointSink(stderr, st.Checkpoints.Shown))
	}
	if o.JSON {
		enc := json.NewEncoder(stdout)
		for _, n := range st.Notices {
			enc.Encode(engine.Event{V: engine.SchemaVersion, Session: s.ID, Step: s.Steps, Kind: engine.KindNotice, Time: time.Now(),
				Data: &engine.Notice{Level: "warning", Message: n}})
		}
		sinks = append(sinks, engine.SinkFunc(func(ev engine.Event) error { return enc.Encode(ev) }))
	}
	if st.Trace != nil { // after the journal: it sees every event first
		sinks = append(sinks, st.Trace)
		if o.Continue { // the run goes on in the trace it began: its span starts when the run did
			primeTrace(st.Trace, past, s.LastRun().ID)
		}
	}
	if st.Bus != nil { // after the journal too: published once written
		sinks = append(sinks, st.Bus)
	}
	defer st.Flush(stderr, "agentty run")
	var res engine.Result
	if o.Continue {
		if !s.Interrupted() {
			return fail(app.ExitError, "session %s has no interrupted run to continue (its last run ended: %s)", s.ID, s.LastRun().Stop)
		}
		_, started := s.Unfinished()
		for _, c := range started {
			verb := "it will not be re-run (pass --yes to re-run it)"
			if o.Yes {
				verb = "re-running it (--yes)"
			}
			fmt.Fprintf(stderr, "agentty run: tool call %s %s (%s) was interrupted before it finished; %s\n", c.Name, c.Args, c.ID, verb)
		}
		eng := st.Engine
		w, in, err := app.WorkflowOf(past, s.LastRun().ID, cmp.Or(o.Workspace, "."), getenv)
		if err != nil {
			return fail(app.ExitError, "%v", err)
		}
		if w != nil { // the run carries out a workflow: its planner goes on
			if eng, err = app.WorkflowEngine(st, o, w, in, getenv); err != nil {
				return fail(app.ExitError, "%v", err)
			}
			sink := &workflow.Sink{W: w, Inputs: in, Next: journal}
			sink.Prime(past)
			sinks[0] = sink
		}
		res = eng.Continue(ctx, s, sinks)
	} else {
		if o.Agent != "" && s.Agent != "" && s.Agent != o.Agent {
			// The session ran as another agent: --agent picks this one, journaled.
			if _, err := s.SwitchAgent(o.Agent, sinks); err != nil {
				return fail(app.ExitError, "%v", err)
			}
		}
		ws, _ := filepath.Abs(cmp.Or(o.Workspace, "."))
		set := engine.Settings{Workspace: ws, Model: st.ModelName, AllowShell: o.AllowShell, Agent: cmp.Or(o.Agent, s.Agent), Origin: cmp.Or(s.Settings().Origin, "run")}
		s.UseSettings(set)                                        // what a console that resumes it restores
		eng, task, notes, err := st.Command(ctx, st.Engine, task) // a custom /command: its prompt
		for _, n := range notes {
			fmt.Fprintln(stderr, "agentty run: note:", n)
		}
		if err != nil {
			return fail(app.ExitError, "%v", err)
		}
		res = eng.Run(ctx, s, task, sinks)
	}
	return runEnd(ctx, res, o, st, s, sinks, stdout, stderr, fail)
}

// primeTrace tells the trace sink of the run_started of the run about to be
// continued.
func primeTrace(sink engine.Sink, past []engine.Event, run string) {
	for i := len(past) - 1; i >= 0; i-- {
		if ev := past[i]; ev.Kind == engine.KindRunStarted && ev.Run == run {
			sink.Emit(ev)
			return
		}
	}
}

// runGate is the gate of a headless run: approvals as --yes says, the
// run's questions answered from --answers, else the person; with --step
// or --break, every pause answered by a JSON line on stdin. It sets o's
// output schema from --output-schema. Its errors are of usage.
func runGate(opts *runOptions, o *app.Options) (engine.Gate, error) {
	gate := gates.HeadlessGate{Yes: o.Yes, Stderr: opts.Err, Person: gates.NewAsker(opts.In, opts.Err, app.IsTerminal(opts.In) && !o.JSON)}
	var err error
	if gate.Answers, err = gates.ReadAnswers(opts.Answers); err != nil {
		return gate, fmt.Errorf("--answers: %v", err)
	}
	if opts.OutputSchema != "" {
		if o.OutputSchema, err = config.ReadOutputSchema(opts.OutputSchema); err != nil {
			return gate, fmt.Errorf("--output-schema: %v", err)
		}
	}
	return debugGate(gate, opts.Step, opts.factory, o)
}

// debugGate is gate, or with --step or --break a gate that reads each
// pause's answer as a JSON line on stdin (it then shares f.Out, a line at
// a time, with the events --json prints). Its errors are of usage.
func debugGate(gate gates.HeadlessGate, step bool, f *factory, o *app.Options) (engine.Gate, error) {
	if !step && len(o.Breaks) == 0 {
		return gate, nil
	}
	if !o.JSON {
		return gate, errors.New("--step and --break need --json: each pause is printed as a gate_paused event and answered by a JSON line on stdin (see docs/debugging.md), or use the console: agentty --step")
	}
	bs, err := gates.ParseBreaks(o.Breaks)
	if err != nil {
		return gate, fmt.Errorf("--break: %v", err)
	}
	out := &lockedWriter{w: f.Out}
	f.Out = out
	enc := json.NewEncoder(out)
	tell := func(p engine.Pending, msg string) {
		enc.Encode(engine.Event{V: engine.SchemaVersion, Session: p.Session, Run: p.Run, Step: p.Step, Kind: engine.KindNotice, Time: time.Now(),
			Data: &engine.Notice{Level: "error", Message: msg}})
	}
	if gate.Person == nil {
		gate.Person = gates.NewAsker(f.In, f.Err, false)
	}
	show := func(p engine.Pending) { // bounded as a remote pause's is
		data := map[string]any{"at": p.At, "request": p.Request}
		if b, err := json.Marshal(p.Request); err != nil || len(b) > bus.MaxGateRequest {
			delete(data, "request")
			data["request_omitted"] = fmt.Sprintf("the request is larger than %d KiB", bus.MaxGateRequest>>10)
		}
		enc.Encode(struct {
			V       int            `json:"v"`
			Session string         `json:"session"`
			Run     string         `json:"run"`
			Step    int            `json:"step"`
			Kind    string         `json:"kind"`
			Time    time.Time      `json:"time"`
			Data    map[string]any `json:"data"`
		}{engine.SchemaVersion, p.Session, p.Run, p.Step, "pause_request", time.Now(), data})
	}
	return &gates.DebugGate{HeadlessGate: gate, Step: step, Breaks: bs, In: gate.Person, Tell: tell, Show: show}, nil
}

// lockedWriter writes one Write at a time: the run's events and a debug
// gate's refusals share stdout.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
