package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
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

func runCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("run", stderr)
	var o options
	o.register(fs)
	fs.BoolVar(&o.json, "json", false, "print every event as one JSON line")
	fs.StringVar(&o.session, "session", "", "continue this session")
	fs.BoolVar(&o.cont, "continue", false, "finish the session's interrupted run")
	fs.BoolVar(&o.yes, "yes", false, "approve tools that ask, and re-running interrupted tool calls")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty run: "+format+"\n", a...)
		return code
	}
	o.maxStepsSet = flagSet(fs, "max-steps")
	task, err := taskArg(fs.Args(), stdin)
	if err != nil {
		return fail(exitError, "reading the task: %v", err)
	}
	switch {
	case o.cont && o.session == "":
		return fail(exitUsage, "--continue needs --session ID")
	case o.cont && task != "":
		return fail(exitUsage, "--continue takes no task: it finishes the interrupted one")
	case !o.cont && task == "":
		return fail(exitUsage, "no task given (usage: agentty run [flags] TASK)")
	}
	store, err := o.store(getenv)
	if errors.As(err, new(errUsage)) {
		return fail(exitUsage, "%v", err)
	}
	if err != nil {
		return fail(exitError, "%v", err)
	}
	defer store.Close()
	gate := headlessGate{yes: o.yes, stderr: stderr}
	buildFailed := func(err error) int {
		if errors.As(err, new(errUsage)) {
			return fail(exitUsage, "%v", err)
		}
		return fail(exitError, "%v", err)
	}
	var st *setup
	var journal *sessions.Journal
	var s *engine.Session
	var past []engine.Event // the session's journal, when it is continued
	if o.session == "" {
		if st, err = build(ctx, o, gate, getenv); err != nil {
			return buildFailed(err) // before a session is made for nothing
		}
		if journal, err = store.Create(); err != nil {
			return fail(exitError, "%v", err)
		}
		s = engine.NewSession(journal.ID)
	} else {
		var l *sessions.Loaded
		journal, l, err = store.OpenWriter(o.session)
		if err != nil {
			return fail(exitError, "%v", err)
		}
		for _, w := range l.Warnings {
			fmt.Fprintln(stderr, "agentty run: warning:", w)
		}
		s, past = l.Session, l.Events
		if o.model == "" {
			o.model = l.Meta.Model // a session keeps its model unless told otherwise
		}
	}
	defer journal.Close()
	if st == nil {
		if st, err = build(ctx, o, gate, getenv); err != nil {
			return buildFailed(err)
		}
	}
	defer st.Close()
	for _, n := range st.notices {
		fmt.Fprintln(stderr, "agentty run: warning:", n)
	}
	fmt.Fprintln(stderr, "session:", journal.ID)
	sinks := engine.Sinks{journal}
	if o.json {
		enc := json.NewEncoder(stdout)
		for _, n := range st.notices {
			enc.Encode(engine.Event{V: engine.SchemaVersion, Session: s.ID, Step: s.Steps, Kind: engine.KindNotice, Time: time.Now(),
				Data: &engine.Notice{Level: "warning", Message: n}})
		}
		sinks = append(sinks, engine.SinkFunc(func(ev engine.Event) error { return enc.Encode(ev) }))
	}
	if st.trace != nil { // after the journal: it sees every event first
		sinks = append(sinks, st.trace)
		if o.cont { // the run goes on in the trace it began: its span starts when the run did
			primeTrace(st.trace, past, s.LastRun().ID)
		}
	}
	if st.bus != nil { // after the journal too: published once written
		sinks = append(sinks, st.bus)
	}
	defer func() {
		if why := st.closeTraces(); why != "" {
			fmt.Fprintln(stderr, "agentty run: warning:", why)
		}
		if why := st.closeBus(); why != "" {
			fmt.Fprintln(stderr, "agentty run: warning:", why)
		}
	}()
	var res engine.Result
	if o.cont {
		if !s.Interrupted() {
			return fail(exitError, "session %s has no interrupted run to continue (its last run ended: %s)", s.ID, s.LastRun().Stop)
		}
		_, started := s.Unfinished()
		for _, c := range started {
			verb := "it will not be re-run (pass --yes to re-run it)"
			if o.yes {
				verb = "re-running it (--yes)"
			}
			fmt.Fprintf(stderr, "agentty run: tool call %s %s (%s) was interrupted before it finished; %s\n", c.Name, c.Args, c.ID, verb)
		}
		eng := st.engine
		w, in, err := workflowOf(past, s.LastRun().ID, cmpOr(o.workspace, "."), getenv)
		if err != nil {
			return fail(exitError, "%v", err)
		}
		if w != nil { // the run carries out a workflow: its planner goes on
			if eng, err = workflowEngine(st, o, w, in, getenv); err != nil {
				return fail(exitError, "%v", err)
			}
			sink := &workflow.Sink{W: w, Inputs: in, Next: journal}
			sink.Prime(past)
			sinks[0] = sink
		}
		res = eng.Continue(ctx, s, sinks)
	} else {
		if o.agent != "" && s.Agent != "" && s.Agent != o.agent {
			// The session ran as another agent: --agent picks this one, journaled.
			if _, err := s.SwitchAgent(o.agent, sinks); err != nil {
				return fail(exitError, "%v", err)
			}
		}
		res = st.engine.Run(ctx, s, task, sinks)
	}
	switch res.StopReason {
	case engine.StopAnswered:
		if !o.json {
			fmt.Fprintln(stdout, res.Answer)
		}
		return exitAnswered
	case engine.StopStepLimit:
		return fail(exitStepLimit, "stopped: step limit of %d reached without an answer", st.engine.Config().MaxSteps)
	case engine.StopCancelled:
		if res.Partial != "" && !o.json {
			fmt.Fprintln(stdout, res.Partial) // what the model had said when it was cut off
		}
		return fail(exitCancelled, "cancelled (the session is saved; go on with: agentty run --session %s TASK)", s.ID)
	}
	return fail(exitError, "%v", res.Err)
}

// headlessGate never pauses on its own; it answers approvals with --yes.
type headlessGate struct {
	yes    bool
	stderr io.Writer
}

func (g headlessGate) Stop(engine.Pending) bool { return false }

func (g headlessGate) Wait(_ context.Context, p engine.Pending) (engine.Verdict, error) {
	if g.yes {
		return engine.Verdict{Action: engine.Proceed}, nil
	}
	fmt.Fprintf(g.stderr, "agentty run: tool call %s needs approval; denied (pass --yes to approve)\n", p.ToolCall.Name)
	return engine.Verdict{Action: engine.Deny}, nil
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
