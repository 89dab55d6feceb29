package console

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/hooks"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/ui"
	"github.com/agentty/agentty/workflow"
)

// backend runs agents on one journaled session for the console, and
// carries out its slash commands (ui.Commander).
type backend struct {
	con     *Console
	session *engine.Session
	journal *sessions.Journal
	sink    engine.Sink // the journal, then the trace and NATS sinks if any

	mu     sync.Mutex     // guards engine, which /model replaces from a command's goroutine
	engine *engine.Engine // runs on the session: the setup's, or one for the session's model
	model  string         // the model of engine when it is not the setup's

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
	b.session.UseSettings(b.settings()) // carried by the run's run_started
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
	files, errs := workflow.LoadFiles(cmp.Or(b.con.Opts.Workspace, "."), b.con.Getenv)
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
	ws := cmp.Or(b.con.Opts.Workspace, ".")
	w, err := workflow.Find(name, ws, b.con.Getenv)
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
	task := app.WorkflowTask(w, in)
	return func(ctx context.Context) <-chan engine.Event {
		return run.eng.Start(ctx, b.session, task, run.sink)
	}, strings.Join(notices, "\n"), nil
}

// workflowRun makes the engine that carries out w on the session's engine
// (its model and tools), and the sink that frames its run around the
// journal; notices are what the setup had to say of it.
func (c *Console) workflowRun(session *engine.Engine, w *workflow.Workflow, in map[string]string, j *sessions.Journal) (*workflowRun, []string, error) {
	// workflowEngine reads the setup's engine and adds to its notices: a
	// setup of the session's engine, with notices of its own.
	st := &app.Setup{ModelName: c.Setup.ModelName, Engine: session}
	eng, err := app.WorkflowEngine(st, c.Opts, w, in, c.Getenv)
	if err != nil {
		return nil, st.Notices, err
	}
	frame := &workflow.Sink{W: w, Inputs: in, Next: j}
	return &workflowRun{eng: eng, sink: c.Setup.WithTrace(frame), frame: frame}, st.Notices, nil
}

func (b *backend) ChangeMemory(c engine.MemoryChanged) (engine.Event, error) {
	return b.session.ChangeMemory(c, b.journal)
}

func (b *backend) SessionID() string { return b.journal.ID }

// ValidateArgs checks a paused call's edited arguments against its tool's
// schema, as the engine will before it runs them. A tool the registry does
// not hold (the engine's own agent tool) is left to the engine.
func (b *backend) ValidateArgs(tool string, args json.RawMessage) error {
	reg := b.con.Setup.Registry()
	if _, ok := reg.Lookup(tool); !ok {
		return nil
	}
	return reg.Validate(tool, args)
}

// ArgOrder gives a tool's arguments in its schema's order, for the chat's
// line of a call (nil for a tool the registry does not hold).
func (b *backend) ArgOrder(tool string) []string {
	t, ok := b.con.Setup.Registry().Lookup(tool)
	if !ok {
		return nil
	}
	return engine.PropertyOrder(t.Schema)
}

// Attach reads what "@path" attaches, through the workspace (read_file's
// confinement and bounds).
func (b *backend) Attach(ctx context.Context, path string) (string, error) {
	ws := b.con.Setup.Workspace()
	if ws == nil {
		return "", errors.New("no workspace is open")
	}
	return ws.Attach(ctx, path)
}

// Files lists the workspace's files for "@"'s completion.
func (b *backend) Files(ctx context.Context) []string {
	if ws := b.con.Setup.Workspace(); ws != nil {
		return ws.Files(ctx, 20000)
	}
	return nil
}

// Close journals the session's settings if they changed since its last
// run started, and closes its journal.
func (b *backend) Close() error {
	end := hooks.EndSession(context.Background(), b.con.Setup.Hooks(), b.session, "prompt_input_exit", b.sink)
	return errors.Join(end, b.saveSettings(), b.journal.Close())
}

// Console is what the Console's backends share for their slash commands:
// the store, the setup, and the options and environment it started with.
type Console struct {
	Store  *sessions.Store
	Setup  *app.Setup
	Opts   app.Options
	Getenv func(string) string
	gate   *ui.Gate // the console's: its step mode and breakpoints are journaled
}

// Open makes the backend of a session Open for writing: on the setup's
// engine, or on one for the model the person picked for the session
// (/model), when that one can be made.
func (c *Console) Open(j *sessions.Journal, s *engine.Session) *backend { return c.openWith(j, s, nil) }

// openWith is open with the session's journaled events: when its last run
// was interrupted carrying out a workflow, ctrl+r continues it with the
// workflow's planner, whose engine and sink are made here, the sink told
// of what the run did.
func (c *Console) openWith(j *sessions.Journal, s *engine.Session, events []engine.Event) *backend {
	b := &backend{con: c, session: s, journal: j, sink: c.Setup.WithTrace(j), engine: c.Setup.Engine}
	// The model the person picked for it (/model), else the one it was
	// last worked on with; --model at the start wins over both.
	if model := cmp.Or(s.Model, s.Settings().Model); model != "" && model != c.Setup.ModelName && c.Opts.Model == "" {
		if e, err := c.engineFor(model); err == nil {
			b.engine, b.model = e, model
		}
	}
	if s.Interrupted() {
		b.resume, b.resumeErr = c.resumeWorkflow(b, events)
	}
	return b
}

// resumeWorkflow makes what continues the workflow the session's
// interrupted last run carries out: nil when it carries out none.
func (c *Console) resumeWorkflow(b *backend, events []engine.Event) (*workflowRun, error) {
	last := b.session.LastRun().ID
	w, in, err := app.WorkflowOf(events, last, cmp.Or(c.Opts.Workspace, "."), c.Getenv)
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
func (c *Console) engineFor(name string) (*engine.Engine, error) {
	if name == c.Setup.ModelName {
		return c.Setup.Engine, nil
	}
	cfg, ws, err := config.Load(c.Getenv, cmp.Or(c.Opts.Workspace, "."))
	if err != nil {
		return nil, err
	}
	if ws != nil {
		o := c.Opts
		o.AskTrust = nil
		trusted, _, err := app.DecideTrust(o, ws, c.Getenv)
		if err != nil {
			return nil, err
		}
		if trusted {
			cfg.Merge(ws.Cfg)
		} else {
			cfg.Merge(ws.Safe())
		}
	}
	o := c.Opts
	o.Model = name
	m, name, err := app.PickModel(o, cfg, c.Getenv)
	if err != nil {
		return nil, err
	}
	ec := c.Setup.Engine.Config()
	ec.Model, ec.ModelName = m, name
	// The new model's window makes the budget and the trigger, as build
	// makes them (models.go).
	limits := config.LookupLimits(name, cfg.Models)
	ec.Window, ec.Budget = limits.Window, cmp.Or(config.ContextBudgetFor(cmp.Or(o.Budget, cfg.ContextBudget), limits), engine.DefaultBudget)
	if ec.Compact, err = app.Compaction(o, cfg, ec.Budget, c.Getenv); err != nil {
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
