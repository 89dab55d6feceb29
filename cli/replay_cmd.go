package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/replay"
	"github.com/agentty/agentty/gates"
	"github.com/agentty/agentty/hooks"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/workflow"
)

// replayOptions are the flags and arguments of agentty replay.
type replayOptions struct {
	*factory
	Until  int
	AsJSON bool
	Args   []string
}

// newReplayCmd binds the flags of its command into its options.
func newReplayCmd(f *factory) *cobra.Command {
	opts := &replayOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "replay ID [--until STEP [--model M]] [--json]",
		Short: "Re-run a session with its recorded decisions; exit 1 if a result differs",
		Example: `  agentty replay 0abc12
  agentty replay 0abc12 --until 4 --model gpt-4o   the recording to step 4, then live`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			withRunFlags(cmd, f.App)
			return exit(replayRun(cmd.Context(), opts))
		},
	}
	fs := cmd.Flags()
	addRunFlags(fs, f.App)
	fs.IntVar(&opts.Until, "until", -1, "play the recording up to this step, then go on live (a fork that continues)")
	fs.BoolVar(&opts.AsJSON, "json", false, "print the differences as JSON")
	fs.BoolVar(&f.App.Yes, "yes", false, "approve tools that ask (their recorded calls run again)")
	cmd.ValidArgsFunction = firstArg(completeSessions(f))
	return cmd
}

// replayRun re-runs a recorded session's tasks with its recorded decisions
// in place of the model (no model call), the tools running for real, and
// reports every tool result that now differs from the recording. With
// --until STEP the recording plays up to STEP and the run goes on live
// (with --model, else the session's model), a fork that continues.
func replayRun(ctx context.Context, opts *replayOptions) int {
	o := *opts.App
	stderr, getenv := opts.Err, opts.Getenv
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty replay: "+format+"\n", a...)
		return code
	}
	if len(opts.Args) != 1 {
		return fail(app.ExitUsage, "usage: agentty replay ID [--until STEP [--model M]] [--json]")
	}
	id := arg(opts.Args, 0)
	store, err := o.Store(getenv)
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	l, err := store.Load(id)
	if l == nil {
		return fail(app.ExitError, "%v", err)
	}
	rec := replay.FromEvents(l.Events)
	if rec.Decisions() == 0 || len(rec.Tasks) == 0 {
		return fail(app.ExitError, "session %s has no recorded decisions to replay", id)
	}
	replayDefaults(&o, opts.Until, l)
	gate := gates.ReplayGate{HeadlessGate: gates.HeadlessGate{Yes: o.Yes, Stderr: stderr, Answers: replay.Answers(l.Events)}, Recorded: replay.Verdicts(l.Events)}
	st, err := app.Build(ctx, o, gate, getenv)
	if err != nil {
		return fail(codeOf(err), "%v", err)
	}
	defer st.Close()
	eng, frame, err := replayEngine(st, o, l.Events, rec, opts.Until, id, getenv)
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	journal, err := store.Create()
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	defer journal.Close()
	s := engine.NewSession(journal.ID)
	cmp := &replay.Compare{Recording: rec, Until: opts.Until}
	defer st.Flush(stderr, "agentty replay")
	var first engine.Sink = journal
	if frame != nil {
		frame.Next = journal
		first = frame
	}
	sinks := engine.Sinks{st.WithTrace(first), engine.SinkFunc(cmp.Emit)} // traced and published as any run
	var runErr error
	for _, task := range rec.Tasks {
		res := eng.Run(ctx, s, task, sinks)
		if res.StopReason == engine.StopError {
			runErr = res.Err
			break
		}
		if opts.Until >= 0 && s.Steps > opts.Until {
			break // live from STEP on: this run was the fork's
		}
	}
	journal.Close()
	if errors.Is(runErr, replay.ErrChanged) {
		// Refused before anything was compared: no session of it is kept.
		store.Remove(journal.ID)
		return fail(app.ExitError, "%v\n(%s)", runErr, changedHint(l, o))
	}
	replayReport(opts, id, journal.ID, st.ModelName, cmp, runErr)
	if runErr != nil {
		return fail(app.ExitError, "%v", runErr)
	}
	if len(cmp.Diffs) > 0 {
		return app.ExitError
	}
	return 0
}

// replayEngine is the engine of a replay of session id: the setup's, its
// models (the session's, its agents', compaction's) playing the recording
// rec, up to step until when it is not negative and live from there.
func replayEngine(st *app.Setup, o app.Options, events []engine.Event, rec *replay.Recording, until int, id string, getenv func(string) string) (*engine.Engine, *workflow.Sink, error) {
	cfg, frame, err := replayConfig(st, o, events, until >= 0, getenv)
	if err != nil {
		return nil, nil, err
	}
	player := replay.NewModel(rec)
	wrap := func(live engine.Model) engine.Model {
		if until < 0 {
			return player
		}
		return replay.Until{Replay: player, Step: until, Live: live}
	}
	cfg.Model, cfg.ModelName = wrap(cfg.Model), "replay of "+id
	if cfg.Hooks != nil || hasHooks(events) {
		cfg.Hooks = hooks.Recorded(events) // what they decided, not the hooks run again
	}
	for i := range cfg.Agents {
		live := cfg.Agents[i].Model
		if live == nil {
			live = st.Engine.Config().Model
		}
		cfg.Agents[i].Model = wrap(live)
	}
	if cfg.Compact.Model != nil {
		cfg.Compact.Model = wrap(cfg.Compact.Model)
	}
	eng := engine.New(cfg)
	return eng, frame, eng.Err()
}

// hasHooks reports whether events hold a hook's run.
func hasHooks(events []engine.Event) bool {
	return slices.ContainsFunc(events, func(ev engine.Event) bool { return ev.Kind == engine.KindHook })
}

// replayReport prints what differed between the replay, session, and the
// recording of id.
func replayReport(opts *replayOptions, id, session, model string, cmp *replay.Compare, runErr error) {
	stdout := opts.Out
	if opts.AsJSON {
		out := struct {
			Session     string              `json:"session"`
			Replayed    string              `json:"replayed"`
			ToolCalls   int                 `json:"tool_calls"`
			Differences []replay.Difference `json:"differences"`
			Error       string              `json:"error,omitempty"`
		}{session, id, cmp.Calls, cmp.Diffs, errString(runErr)}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
	} else {
		fmt.Fprintf(stdout, "replayed %s as %s: %d %s compared, %d differ\n", id, session, cmp.Calls, engine.Plural(cmp.Calls, "tool call"), len(cmp.Diffs))
		for _, d := range cmp.Diffs {
			fmt.Fprintf(stdout, "\nstep %d, %s (%s, %s): %s\n", d.Step, d.Tool, d.Run, d.Call, d.What)
			for _, l := range d.Diff {
				fmt.Fprintf(stdout, "  %s\n", l)
			}
		}
		if opts.Until >= 0 {
			fmt.Fprintf(stdout, "\nfrom step %d on the run went on live with %s; the new session is %s\n", opts.Until+1, model, session)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// replayConfig is the engine configuration a recorded session was run
// with: the setup's, or, for a workflow's session, the workflow's (its
// task agents, and its framing sink, whose Next the caller sets), so that
// the replayed requests offer what the recorded ones did.
//
// Replayed whole (not live), the steps' own models are not made: the
// recording stands for them, and they would need keys it does not.
func replayConfig(st *app.Setup, o app.Options, events []engine.Event, live bool, getenv func(string) string) (engine.Config, *workflow.Sink, error) {
	var started *engine.WorkflowStarted
	for _, ev := range events {
		if d, ok := ev.Data.(*engine.WorkflowStarted); ok && ev.ParentRun == "" {
			started = d
			break
		}
	}
	if started == nil {
		return st.Engine.Config(), nil, nil
	}
	w, err := workflow.Find(cmp.Or(started.File, started.Name), cmp.Or(o.Workspace, "."), getenv)
	if err != nil {
		return engine.Config{}, nil, fmt.Errorf("the session ran workflow %s: %w", started.Name, err)
	}
	if !live {
		plain := *w
		plain.Steps = slices.Clone(w.Steps)
		for i := range plain.Steps {
			plain.Steps[i].Model = ""
		}
		w = &plain
	}
	eng, err := app.WorkflowEngine(st, o, w, started.Inputs, getenv)
	if err != nil {
		return engine.Config{}, nil, fmt.Errorf("the session ran workflow %s: %w", started.Name, err)
	}
	return eng.Config(), &workflow.Sink{W: w, Inputs: started.Inputs}, nil
}

// replayDefaults are the model and agent of a replay not given as flags:
// the session's model for the live part after --until (else offline,
// never called: no key or server is needed), and the agent it ran as
// (its tools and prompt with it).
func replayDefaults(o *app.Options, until int, l *sessions.Loaded) {
	switch {
	case o.Model != "":
	case until >= 0:
		o.Model = l.Meta.Model
	default:
		o.Model = "offline"
	}
	if o.Agent == "" {
		o.Agent = replay.Agent(l.Events)
	}
}

// changedHint says what to do about a replay refused because its requests
// are not those recorded: a session that ran with the shell allowed
// offered run_shell, which a replay without --allow-shell does not (the
// tools differ, and nothing else may have); else the recording is stale.
func changedHint(l *sessions.Loaded, o app.Options) string {
	if l.Session.Settings().AllowShell && !o.AllowShell {
		return "the session ran with the shell allowed, so its requests offered run_shell: replay it with --allow-shell --yes (or record it again)"
	}
	return "record the session again: the recording no longer matches the task, prompt or tools"
}
