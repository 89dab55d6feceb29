package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentty/agentty/config"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/ui"
	"github.com/agentty/agentty/workflow"
)

// backend runs agents on one journaled session for the console, and
// carries out its slash commands (ui.Commander).
type backend struct {
	con     *console
	session *engine.Session
	journal *sessions.Journal
	sink    engine.Sink // the journal, then the trace and NATS sinks if any

	mu     sync.Mutex     // guards engine, which /model replaces from a command's goroutine
	engine *engine.Engine // runs on the session: the setup's, or one for the session's model

	// The workflow an interrupted last run carries out, which ctrl+r
	// continues with its planner (made when the session is opened), or
	// why it cannot. Only the Bubble Tea loop reads them, after open.
	resume    *workflowRun
	resumeErr error
}

// workflowRun is an engine made to carry out a workflow and the sink that
// frames its run, around the journal.
type workflowRun struct {
	eng   *engine.Engine
	sink  engine.Sink    // frame, then the trace and NATS sinks if any
	frame *workflow.Sink // around the journal
}

var (
	_ ui.Backend   = (*backend)(nil)
	_ ui.Commander = (*backend)(nil)
	_ ui.Workflows = (*backend)(nil)
	_ ui.Validator = (*backend)(nil)
)

// eng returns the engine the session's next run runs on.
func (b *backend) eng() *engine.Engine {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.engine
}

func (b *backend) Start(ctx context.Context, task string) <-chan engine.Event {
	return b.eng().Start(ctx, b.session, task, b.sink)
}

func (b *backend) Continue(ctx context.Context) <-chan engine.Event {
	if b.resumeErr != nil {
		ch := make(chan engine.Event, 1)
		ch <- engine.Refusal(b.journal.ID, b.resumeErr)
		close(ch)
		return ch
	}
	if w := b.resume; w != nil { // a workflow's run: its planner goes on
		return w.eng.StartContinue(ctx, b.session, w.sink)
	}
	return b.eng().StartContinue(ctx, b.session, b.sink)
}

// Workflows lists the workflows of the workspace and the person's config
// (/workflow).
func (b *backend) Workflows() ([]ui.WorkflowInfo, error) {
	files, errs := loadWorkflows(cmp.Or(b.con.opts.workspace, "."), b.con.getenv)
	out := make([]ui.WorkflowInfo, 0, len(files))
	for _, f := range files {
		wi := ui.WorkflowInfo{Name: f.W.Name, Description: f.W.Description}
		for _, in := range f.W.Inputs {
			n := in.Name
			if in.Required {
				n += " (required)"
			}
			wi.Inputs = append(wi.Inputs, n)
		}
		out = append(out, wi)
	}
	slices.SortFunc(out, func(a, b ui.WorkflowInfo) int { return cmp.Compare(a.Name, b.Name) })
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// PrepareWorkflow finds the workflow, checks its inputs and makes its
// engine (on the session's model), as `agentty workflow run` does; the run
// it starts is framed by a workflow.Sink around the journal.
func (b *backend) PrepareWorkflow(name string, inputs map[string]string) (func(context.Context) <-chan engine.Event, string, error) {
	ws := cmp.Or(b.con.opts.workspace, ".")
	w, err := findWorkflow(name, ws, b.con.getenv)
	if err != nil {
		return nil, "", err
	}
	in, err := w.CheckInputs(inputs)
	if err != nil {
		return nil, "", err
	}
	run, notices, err := b.con.workflowRun(b.eng(), w, in, b.journal)
	if err != nil {
		return nil, "", err
	}
	task := workflowTask(w, in)
	return func(ctx context.Context) <-chan engine.Event {
		return run.eng.Start(ctx, b.session, task, run.sink)
	}, strings.Join(notices, "\n"), nil
}

// workflowRun makes the engine that carries out w on the session's engine
// (its model and tools), and the sink that frames its run around the
// journal; notices are what the setup had to say of it.
func (c *console) workflowRun(session *engine.Engine, w *workflow.Workflow, in map[string]string, j *sessions.Journal) (*workflowRun, []string, error) {
	// workflowEngine reads the setup's engine and adds to its notices: a
	// setup of the session's engine, with notices of its own.
	st := &setup{modelName: c.setup.modelName, engine: session}
	eng, err := workflowEngine(st, c.opts, w, in, c.getenv)
	if err != nil {
		return nil, st.notices, err
	}
	frame := &workflow.Sink{W: w, Inputs: in, Next: j}
	return &workflowRun{eng: eng, sink: c.setup.withTrace(frame), frame: frame}, st.notices, nil
}

func (b *backend) ChangeMemory(c engine.MemoryChanged) (engine.Event, error) {
	return b.session.ChangeMemory(c, b.journal)
}

func (b *backend) SessionID() string { return b.journal.ID }

// ValidateArgs checks a paused call's edited arguments against its tool's
// schema, as the engine will before it runs them. A tool the registry does
// not hold (the engine's own agent tool) is left to the engine.
func (b *backend) ValidateArgs(tool string, args json.RawMessage) error {
	reg := b.con.setup.registry
	if _, ok := reg.Lookup(tool); !ok {
		return nil
	}
	return reg.Validate(tool, args)
}

func (b *backend) Close() error { return b.journal.Close() }

// console is what the console's backends share for their slash commands:
// the store, the setup, and the options and environment it started with.
type console struct {
	store  *sessions.Store
	setup  *setup
	opts   options
	getenv func(string) string
}

// open makes the backend of a session open for writing: on the setup's
// engine, or on one for the model the person picked for the session
// (/model), when that one can be made.
func (c *console) open(j *sessions.Journal, s *engine.Session) *backend { return c.openWith(j, s, nil) }

// openWith is open with the session's journaled events: when its last run
// was interrupted carrying out a workflow, ctrl+r continues it with the
// workflow's planner, whose engine and sink are made here, the sink told
// of what the run did.
func (c *console) openWith(j *sessions.Journal, s *engine.Session, events []engine.Event) *backend {
	b := &backend{con: c, session: s, journal: j, sink: c.setup.withTrace(j), engine: c.setup.engine}
	if s.Model != "" && s.Model != c.setup.modelName {
		if e, err := c.engineFor(s.Model); err == nil {
			b.engine = e
		}
	}
	if s.Interrupted() {
		b.resume, b.resumeErr = c.resumeWorkflow(b, events)
	}
	return b
}

// resumeWorkflow makes what continues the workflow the session's
// interrupted last run carries out: nil when it carries out none.
func (c *console) resumeWorkflow(b *backend, events []engine.Event) (*workflowRun, error) {
	last := b.session.LastRun().ID
	w, in, err := workflowOf(events, last, cmp.Or(c.opts.workspace, "."), c.getenv)
	if err != nil || w == nil {
		return nil, err
	}
	run, _, err := c.workflowRun(b.engine, w, in, b.journal)
	if err != nil {
		return nil, fmt.Errorf("the session's workflow %s: %w", w.Name, err)
	}
	var past []engine.Event // the run's own events: the sink knows what its steps did
	for _, ev := range events {
		if ev.Run == last {
			past = append(past, ev)
		}
	}
	run.frame.Prime(past)
	return run, nil
}

// engineFor returns an engine set up as the setup's, deciding with the
// model name: the model, its window, budget and compaction are made as
// --model NAME would make them, with the config read again (the trust of its workspace part as it stands, never
// asked again).
func (c *console) engineFor(name string) (*engine.Engine, error) {
	if name == c.setup.modelName {
		return c.setup.engine, nil
	}
	cfg, ws, err := config.Load(c.getenv, cmp.Or(c.opts.workspace, "."))
	if err != nil {
		return nil, err
	}
	if ws != nil {
		o := c.opts
		o.askTrust = nil
		trusted, _, err := decideTrust(o, ws, c.getenv)
		if err != nil {
			return nil, err
		}
		if trusted {
			cfg.Merge(ws.Cfg)
		} else {
			cfg.Merge(ws.Safe())
		}
	}
	o := c.opts
	o.model = name
	m, name, err := pickModel(o, cfg, c.getenv)
	if err != nil {
		return nil, err
	}
	ec := c.setup.engine.Config()
	ec.Model, ec.ModelName = m, name
	// The new model's window makes the budget and the trigger, as build
	// makes them (models.go).
	limits := config.LookupLimits(name, cfg.Models)
	ec.Window, ec.Budget = limits.Window, cmp.Or(config.ContextBudgetFor(cmp.Or(o.budget, cfg.ContextBudget), limits), engine.DefaultBudget)
	if ec.Compact, err = compaction(o, cfg, ec.Budget, c.getenv); err != nil {
		return nil, err
	}
	e := engine.New(ec)
	return e, e.Err()
}

// readOnlyBackend shows a session that cannot be written (open in another
// agentty, or damaged) and refuses to run on it.
type readOnlyBackend struct{ id, why string }

func (b *readOnlyBackend) refuse() <-chan engine.Event {
	ch := make(chan engine.Event, 1)
	ch <- engine.Refusal(b.id, errors.New("this session is read-only: "+b.why))
	close(ch)
	return ch
}

func (b *readOnlyBackend) Start(context.Context, string) <-chan engine.Event { return b.refuse() }
func (b *readOnlyBackend) Continue(context.Context) <-chan engine.Event      { return b.refuse() }
func (b *readOnlyBackend) ChangeMemory(engine.MemoryChanged) (engine.Event, error) {
	return engine.Event{}, errors.New("this session is read-only: " + b.why)
}
func (b *readOnlyBackend) SessionID() string { return b.id }

// ReadOnly says why the session cannot be written here.
func (b *readOnlyBackend) ReadOnly() string { return b.why }
func (b *readOnlyBackend) Close() error     { return nil }

// splitResume takes --resume [ID] out of args: the flag package has no flag
// with an optional value.
func splitResume(args []string) (rest []string, resume bool, id string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--resume" || a == "-resume" {
			resume = true
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				id = args[i+1]
				i++
			}
			continue
		}
		if v, ok := strings.CutPrefix(a, "--resume="); ok {
			resume, id = true, v
			continue
		}
		rest = append(rest, a)
	}
	return rest, resume, id
}

func consoleCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	args, resume, resumeID := splitResume(args)
	fs := newFlags("agentty", stderr)
	var o options
	o.register(fs)
	step := fs.Bool("step", false, "start in step mode")
	fs.StringVar(&o.session, "session", "", "resume this session (as --resume ID)")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	o.maxStepsSet = flagSet(fs, "max-steps")
	if o.session != "" {
		resume, resumeID = true, o.session
	}
	if fs.NArg() > 0 {
		if isCommand(fs.Arg(0)) {
			fmt.Fprintf(stderr, "agentty: flags go after the command: agentty %s [flags]\n", fs.Arg(0))
			return exitUsage
		}
		fmt.Fprintf(stderr, "agentty: unexpected %q (to run a task headless: agentty run TASK)\n", fs.Arg(0))
		return exitUsage
	}
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "agentty:", err)
		return code
	}
	store, err := o.store(getenv)
	if err != nil {
		return fail(exitError, err)
	}
	cfg := ui.Config{Gate: ui.NewGate(*step), Style: "dark"}
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		cfg.Style = "notty"
	}
	var events []engine.Event
	var journal *sessions.Journal
	var session *engine.Session
	var readOnly *readOnlyBackend
	switch {
	case resume && resumeID != "":
		var l *sessions.Loaded
		var why string
		if journal, l, why, err = store.Resume(resumeID); err != nil {
			return fail(exitError, err)
		}
		if journal == nil {
			readOnly = &readOnlyBackend{id: resumeID, why: why}
			events = l.Events
		} else {
			session, events = l.Session, l.Events
		}
		if o.model == "" {
			// The model the person picked for it (/model), else its last run's.
			o.model = cmp.Or(l.Session.Model, l.Meta.Model)
		}
	case !resume:
		if journal, err = store.Create(); err != nil {
			return fail(exitError, err)
		}
		session = engine.NewSession(journal.ID)
	}
	if isTerminal(stdin) {
		o.askTrust = promptTrust(stdin, stderr)
	}
	st, err := build(ctx, o, cfg.Gate, getenv)
	if err != nil {
		if journal != nil {
			journal.Close()
		}
		if errors.Is(err, errQuit) {
			fmt.Fprintln(stderr, "agentty:", err)
			return 0
		}
		if errors.As(err, new(errUsage)) {
			return fail(exitUsage, err)
		}
		return fail(exitError, err)
	}
	defer st.Close()
	cfg.Model = st.modelName
	notices := st.notices
	if st.mcp != nil {
		var down []string
		for _, s := range st.mcp.Status() {
			if !s.OK {
				down = append(down, s.Server)
			}
		}
		if len(down) > 0 {
			cfg.Status = "MCP down: " + strings.Join(down, ", ")
		}
	}
	con := &console{store: store, setup: st, opts: o, getenv: getenv}
	cfg.Sessions = picker{store: store, setup: st, con: con}
	cfg.Events = events
	if journal != nil {
		cfg.Backend = con.openWith(journal, session, events)
		if o.agent != "" && session.Agent != "" && session.Agent != o.agent {
			// The session ran as another agent: --agent picks this one, journaled.
			if ev, err := session.SwitchAgent(o.agent, journal); err != nil {
				notices = append(notices, "--agent "+o.agent+": "+err.Error())
			} else {
				cfg.Events = append(cfg.Events, ev)
			}
		}
	}
	if readOnly != nil {
		cfg.Backend = readOnly
		notices = append(notices, "Read-only: "+readOnly.why+". Nothing can be added to this session here; ctrl+o opens another.")
	}
	if st.modelName == offline.Name {
		notices = append(notices, "Using the built-in offline model: no model key and no model server are configured. It can do arithmetic, "+
			"remember and recall facts, tell the time, read and search files and past sessions, delegate to the agents you "+
			"define and run workflows (/workflow). For a real model set OPENAI_API_KEY, or point --base-url at a local server "+
			"(Ollama: agentty --base-url http://localhost:11434/v1 --model qwen2.5-coder:7b).")
	}
	cfg.Notice = strings.Join(notices, "\n\n")
	m := ui.New(cfg)
	err = ui.Run(m)
	for _, b := range []ui.Backend{cfg.Backend, m.Backend()} {
		if b != nil {
			b.Close() // a session never written leaves nothing (sessions.Store.Create)
		}
	}
	if why := st.closeTraces(); why != "" {
		fmt.Fprintln(stderr, "agentty: warning:", why)
	}
	if why := st.closeBus(); why != "" {
		fmt.Fprintln(stderr, "agentty: warning:", why)
	}
	if pe, ok := errors.AsType[*ui.PanicError](err); ok {
		// The terminal is restored and the run's end journaled (ui.Run);
		// keep the stack where the person can send it to us.
		path, werr := writeCrash(filepath.Dir(store.Dir()), pe, cfg.Backend, m.Backend())
		if werr != nil {
			fmt.Fprintf(stderr, "agentty: the console crashed (%v) and the crash report could not be written (%v); the session is saved.\n", pe.Value, werr)
		} else {
			fmt.Fprintf(stderr, "agentty: the console crashed (%v); the session is saved, and the report is in %s\n", pe.Value, path)
		}
		return exitError
	}
	if err != nil {
		return fail(exitError, err)
	}
	return 0
}

// writeCrash writes the stack of a console panic to a new file in
// home/crashes and returns its path.
func writeCrash(home string, pe *ui.PanicError, backends ...ui.Backend) (string, error) {
	dir := filepath.Join(home, "crashes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	now := time.Now()
	f, err := os.CreateTemp(dir, "crash-"+now.Format("20060102-150405")+"-*.txt")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "agentty console crash, %s\n", now.Format(time.RFC3339))
	for _, be := range backends {
		if be != nil {
			fmt.Fprintf(&b, "session: %s\n", be.SessionID())
		}
	}
	stack := string(pe.Stack)
	if stack == "" {
		stack = "(Bubble Tea caught this panic itself and printed its stack on the terminal)\n"
	}
	fmt.Fprintf(&b, "panic: %v\n\n%s", pe.Value, stack)
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return f.Name(), err
}
