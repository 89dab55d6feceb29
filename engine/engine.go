// Package engine is agentty's agent runtime: the loop perceive → decide → act
// → observe, with session state and memory, a tool registry, a step limit,
// retries with backoff, a gate for stepping and approvals, and an event for
// everything it does.
//
// One Engine serves many runs at once; each run owns its state and reports it
// only through the events it emits, in order, to the Sink it was given. The
// engine knows nothing of terminals or files.
package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults used where Config leaves a field zero.
const (
	DefaultMaxSteps       = 25
	DefaultBudget         = 64_000
	DefaultToolTimeout    = 60 * time.Second
	DefaultMaxResultBytes = 16 << 10
	DefaultMaxDepth       = 2
	DefaultMaxCalls       = 64
)

// ErrBusy is returned when a run is started on a session that already has
// one going.
var ErrBusy = errors.New("engine: the session already has a run going")

// ErrCrashed is the cause with which a console cancels its runs when it
// crashes (context.WithCancelCause). A run cancelled with it (errors.Is on
// context.Cause) ends with stop reason error saying so; a run cancelled
// with any other cause, or none, ends with stop reason cancelled.
var ErrCrashed = errors.New("the console crashed")

// ErrNotInterrupted is returned by Continue for a session whose last run
// finished.
var ErrNotInterrupted = errors.New("engine: the session has no interrupted run to continue")

// Config sets up an Engine. The zero value of every field but Model means the
// default.
type Config struct {
	// OutputSchema, when set, is the JSON Schema the final answer of a run
	// must meet; an answer that does not goes back to the model with the
	// reason, up to OutputRetries times (default 2), then the run ends
	// with error. The answer is the compact JSON.
	OutputSchema  json.RawMessage
	OutputRetries int
	// AskTimeout bounds the wait for an answer to ask_user (0: none);
	// past it the model is told no answer came.
	AskTimeout time.Duration
	Model      Model
	// ModelName is reported in run_started.
	ModelName string
	Tools     *Registry
	// Gate is consulted before each decide and each tool call; nil lets
	// everything through.
	Gate   Gate
	System string
	// MaxSteps bounds the decisions of one run (default 25).
	MaxSteps int
	// MaxCost (US dollars) and MaxTokens (prompt and completion), when
	// set, bound what one run and its sub-runs spend: past either the run
	// stops before its next decision (StopBudget). A cost budget with a
	// model whose price is not known stops it too: its spending cannot
	// be told.
	MaxCost   float64
	MaxTokens int
	// Prices returns a model's price by its name (ModelName, an agent's),
	// for the cost of each call in its usage; nil or false: unknown.
	Prices func(model string) (Price, bool)
	// Budget is the context budget in estimated tokens (default 64,000):
	// the oldest history is left out of a request that would exceed it.
	Budget int
	Retry  Retry
	// ToolTimeout bounds a tool call whose tool sets none (default 60 s).
	ToolTimeout time.Duration
	// MaxResultBytes caps a tool result (default 16 KiB); longer results
	// are cut and marked truncated.
	MaxResultBytes int
	// MaxCalls caps the tool calls of one decision that are run (default
	// 64); the calls past it are answered with an error, not run.
	MaxCalls int
	// Redact, when set, takes secrets out of what the model says (its
	// streamed text, its answer and reasoning) before any event holds
	// it: a server that echoes the API key must not put it in the
	// journal, an export, the index or a trace.
	Redact func(string) string
	// RedactHold is the length of the longest secret Redact finds, less
	// one: that much of the streamed text is held back until the next
	// piece or the decision, so a secret cut between pieces is found.
	RedactHold int
	Options    Options
	// Agents are the named agents a run may delegate to (the tool agent)
	// or hand off to (a tool transfer_to_NAME); see Agent.
	Agents []Agent
	// Agent names the agent a session's top-level runs run as, until a
	// handoff changes it ("": the settings above, with no name).
	Agent string
	// MaxDepth bounds delegation: a run at depth MaxDepth (the top-level
	// run is at 0) is not offered the tool agent (default 2).
	MaxDepth int
	// Window is the model's context window in tokens, when known (it is
	// reported in model_request; Budget is what the engine keeps to).
	Window int
	// Compact sets how the history is compacted when a request would
	// outgrow the budget.
	Compact Compaction
	// Instructions, when set, returns the project instructions each run
	// gives the model with the system prompt; it is called when a
	// top-level run starts, so that a changed file is read again.
	Instructions func() Instructions
	// Checkpoint, when set, keeps the workspace before a step's tools
	// that may change it (checkpoint.go).
	Checkpoint Checkpointer
	// Hooks, when set, are run at the points of each run (hooks.go):
	// before and after each tool call, at the task, before the answer.
	Hooks Hooks
}

// Compaction configures compaction: before a decision whose request would
// exceed Trigger tokens, the oldest history (all but the last KeepTurns
// user turns and what follows them) is summarised by Model and the
// summary stands for it in later requests. A summary that does not bring
// the request under the budget, a second compaction in a row or a failed
// summary call falls back to trimming the oldest history, with a notice.
type Compaction struct {
	// Off turns compaction off: the oldest history is trimmed.
	Off bool
	// Trigger is the request size in tokens that compacts (default: 80 %
	// of the budget).
	Trigger int
	// KeepTurns is how many of the last user turns are kept verbatim
	// (default 2).
	KeepTurns int
	// Model summarises (nil: the run's model), ModelName names it.
	Model     Model
	ModelName string
}

// Instructions are project instructions: the text, and where it is from.
type Instructions struct {
	Text    string
	Sources []string
}

// Engine runs agents. It is safe for concurrent use by many runs, each on its
// own Session.
type Engine struct {
	cfg    Config
	err    error   // of the configuration; every run fails with it
	agents *agents // nil when no agents are defined
	output *outputSchema
	brk    Breaker // the gate, when it has breakpoints
	// watchHook, set only by tests, is called at points of the watchdog
	// and of a watched call (pauseBeforeReset…) to hold them there.
	watchHook func(int)
}

// New returns an engine for cfg.
func New(cfg Config) *Engine {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.ToolTimeout <= 0 {
		cfg.ToolTimeout = DefaultToolTimeout
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = DefaultMaxDepth
	}
	if cfg.MaxCalls <= 0 {
		cfg.MaxCalls = DefaultMaxCalls
	}
	cfg.Retry = cfg.Retry.withDefaults()
	cfg.Agents = slices.Clone(cfg.Agents)
	if cfg.OutputRetries <= 0 {
		cfg.OutputRetries = 2
	}
	e := &Engine{cfg: cfg}
	e.brk, _ = cfg.Gate.(Breaker)
	if e.output, e.err = compileOutput(cfg.OutputSchema); e.err == nil {
		e.err = e.setupAgents()
	}
	return e
}

// Err reports what is wrong with the engine's configuration (an agent
// defined twice, an unknown Config.Agent, a tool named like the engine's
// own); every run of an engine with such an error fails with it.
func (e *Engine) Err() error { return e.err }

// Config returns the engine's configuration with defaults filled in.
func (e *Engine) Config() Config { return e.cfg }

// Result is how a run ended.
type Result struct {
	RunID      string
	StopReason StopReason
	Answer     string
	// Partial is the answer streamed before the run was cancelled
	// mid-answer (see RunFinished.Partial).
	Partial string
	// Err is set when StopReason is error, and says why.
	Err   error
	Steps int
}

// Run carries task through the loop on session s until the model answers, the
// step limit is reached, ctx is cancelled or an error ends it. Every event
// goes to sink, in order, ending with run_finished. Cancelling ctx stops the
// run promptly with stop reason cancelled.
//
// With agents defined, the run runs as the session's agent (Session.Agent,
// which a handoff sets), else as Config.Agent.
func (e *Engine) Run(ctx context.Context, s *Session, task string, sink Sink) Result {
	return e.RunRequest(ctx, s, task, "", sink)
}

// RunRequest is Run for a queued request: its run_started carries
// request, so that whoever takes the request again finds the run
// (RunState.Request) and continues it rather than starting another.
func (e *Engine) RunRequest(ctx context.Context, s *Session, task, request string, sink Sink) Result {
	if e.err != nil {
		return Result{StopReason: StopError, Err: e.err}
	}
	if !s.busy.CompareAndSwap(false, true) {
		return Result{StopReason: StopError, Err: ErrBusy}
	}
	// No defer here: its copy of the result would grow the frame.
	if e.owned() {
		o := new(ownedRun) // set field by field: a literal is built aside and copied
		o.a.ctx, o.a.s, o.a.sink, o.a.task, o.a.request = ctx, s, sink, task, request
		return e.carryOwned(o)
	}
	growStack(0) // while shallow: the run runs on this goroutine
	return e.carryHere(ctx, s, sink, task, request)
}

// carryHere carries out a run on its caller's goroutine, when no tool of
// the engine runs isolated.
func (e *Engine) carryHere(ctx context.Context, s *Session, sink Sink, task, request string) Result {
	defer s.busy.Store(false)
	ctx, cancel := e.treeContext(ctx)
	defer cancel(nil)
	return e.begin(&runArgs{ctx: ctx, s: s, sink: sink, cancel: cancel, task: task, request: request}, nil)
}

// runArgs is a run RunRequest or Continue carries out, on the caller's
// goroutine or on one of its own (carryOwned).
type runArgs struct {
	ctx           context.Context
	s             *Session
	sink          Sink
	cancel        context.CancelCauseFunc // the tree's (treeContext)
	task, request string
	resume        bool // Continue's
}

// begin carries out a; h is the handOn of the goroutine of its own the run
// runs on, nil when it runs on its caller's.
func (e *Engine) begin(a *runArgs, h *handOn) Result {
	ctx, s := a.ctx, a.s
	if a.resume {
		r := e.newRun(s, a.sink, s.run.ID, a.cancel)
		s.budgetFrom, r.ownUsage = s.run.usedBefore, s.run.spent // what it spent before the crash counts
		r.step = cmp.Or(s.run.Step, s.Steps)
		r.watch(ctx, h)
		r.loadInstructions()
		return r.resume(ctx)
	}
	r := e.newRun(s, a.sink, "run-"+strconv.Itoa(s.Runs+1), a.cancel)
	r.step = s.Steps
	r.watch(ctx, h)
	if err := r.noteMissingAgent(); err != nil {
		return r.finish(ctx, StopError, "", err)
	}
	r.request = a.request
	return r.start(ctx, a.task)
}

// start begins the run with run_started and carries it through the loop.
func (r *run) start(ctx context.Context, task string) Result {
	if redact := r.e.cfg.Redact; redact != nil {
		task = redact(task) // a delegated task is a model's arguments
	}
	var sources []string
	if r.parent == "" {
		r.s.reserve(2*r.prof.maxSteps+2, firstReserve)
		sources = r.loadInstructions()
	}
	rs := &RunStarted{Task: task, Model: r.prof.modelName, MaxSteps: r.prof.maxSteps, Instructions: sources, Request: r.request}
	if r.parent == "" {
		rs.Settings = r.s.nextSettings
	}
	hv, blocked := r.startHooks(ctx, task)
	rs.Context, rs.Withheld = hv.context, blocked != ""
	if err := r.emit("", KindRunStarted, rs); err != nil {
		return r.finish(ctx, StopError, "", err)
	}
	if err := r.emitHooks(Perceive, &hv); err != nil {
		return r.finish(ctx, StopError, "", err)
	}
	if blocked != "" {
		return r.finish(ctx, StopGuardrail, "", errors.New("a hook stopped the prompt: "+blocked))
	}
	return r.loop(ctx)
}

// Continue finishes the session's interrupted run (one whose process died
// before run_finished). Tool calls whose results are in the session are not
// run again; a call that started but has no result is re-run only if the
// Gate approves (a nil Gate does), and the rest of the run carries on.
func (e *Engine) Continue(ctx context.Context, s *Session, sink Sink) Result {
	if e.err != nil {
		return Result{StopReason: StopError, Err: e.err}
	}
	if !s.busy.CompareAndSwap(false, true) {
		return Result{StopReason: StopError, Err: ErrBusy}
	}
	if !s.Interrupted() {
		s.busy.Store(false)
		return Result{StopReason: StopError, Err: ErrNotInterrupted}
	}
	if e.owned() {
		return e.carryOwned(&ownedRun{a: runArgs{ctx: ctx, s: s, sink: sink, resume: true}}) // which frees s
	}
	defer s.busy.Store(false)
	growStack(0)
	ctx, cancel := e.treeContext(ctx)
	defer cancel(nil)
	return e.begin(&runArgs{ctx: ctx, s: s, sink: sink, cancel: cancel, resume: true}, nil)
}

// resume carries on the run of r.s that an earlier process left
// unfinished: the calls of its last step that have no result, then the
// loop.
func (r *run) resume(ctx context.Context) Result {
	s := r.s
	if s.pendingLeft > 0 {
		calls := s.History[len(s.History)-1].ToolCalls
		var todo []int
		r.rerun = map[string]bool{}
		for _, id := range s.redacted {
			r.secretArgs = append(r.secretArgs, id)
		}
		for i, st := range s.callState {
			if st == callFinished && r.handoff == "" && strings.HasPrefix(calls[i].Name, TransferPrefix) && strings.HasPrefix(s.pending[i].Content, transferredTo) {
				r.handoff, r.handoffCall = strings.TrimPrefix(calls[i].Name, TransferPrefix), calls[i].ID // the step handed off
			}
			if st != callFinished {
				todo = append(todo, i)
			}
			if st == callStarted {
				r.rerun[calls[i].ID] = true
			}
		}
		if stop, reason, err := r.act(ctx, calls, todo); stop != "" {
			return r.finish(ctx, stop, "", err)
		} else if reason != "" {
			return r.finish(ctx, StopCancelled, "", errAborted)
		}
		if err := r.emit(Observe, KindStepFinished, &StepFinished{ToolCalls: len(calls)}); err != nil {
			return r.finish(ctx, StopError, "", err)
		}
		if err := r.switchAgent(); err != nil {
			return r.finish(ctx, StopError, "", err)
		}
	}
	return r.loop(ctx)
}

// GiveUp ends a queued request's run without carrying it on, journaling
// reason as its error: the session's interrupted run if it is request's,
// else a new run of task (carrying request) that ends at once. A work
// queue uses it for a request it will not hand out again.
func (e *Engine) GiveUp(ctx context.Context, s *Session, task, request, reason string, sink Sink) Result {
	return e.EndRequest(ctx, s, task, request, StopError, reason, sink)
}

// EndRequest is GiveUp with the stop reason stop (cancelled, for a
// request an operator took off the queue).
func (e *Engine) EndRequest(ctx context.Context, s *Session, task, request string, stop StopReason, reason string, sink Sink) Result {
	if !s.busy.CompareAndSwap(false, true) {
		return Result{StopReason: StopError, Err: ErrBusy}
	}
	defer s.busy.Store(false)
	if s.Interrupted() && s.run.Request == request {
		r := e.newRun(s, sink, s.run.ID, nil)
		r.step = cmp.Or(s.run.Step, s.Steps)
		return r.finish(ctx, stop, "", errors.New(reason))
	}
	r := e.newRun(s, sink, "run-"+strconv.Itoa(s.Runs+1), nil)
	r.step = s.Steps
	if err := r.emit("", KindRunStarted, &RunStarted{Task: task, Model: r.prof.modelName, MaxSteps: r.prof.maxSteps, Request: request}); err != nil {
		return r.finish(ctx, StopError, "", err)
	}
	return r.finish(ctx, stop, "", errors.New(reason))
}

// growStack grows the goroutine's stack to what a run's deepest calls
// need while it is still shallow. A goroutine starts with a small stack
// that is copied to one twice the size whenever a call outgrows it, and a
// copy costs for every frame on it: a run that starts on a fresh goroutine
// would otherwise pay for two or three copies of a deep stack.
//
//go:noinline
func growStack(i int) byte {
	var b [4 << 10]byte // a frame of its own that needs a stack of 8 KiB
	b[i] = 1
	return b[(i+1)%len(b)]
}

// Start runs task on s in a new goroutine and returns its events on a channel
// that is closed after run_finished. sink, when not nil, sees each event
// before the channel does (put the journal there). The caller must read the
// channel until it is closed.
func (e *Engine) Start(ctx context.Context, s *Session, task string, sink Sink) <-chan Event {
	return goRun(s, sink, func(sinks Sink) Result { return e.Run(ctx, s, task, sinks) })
}

// StartContinue is Continue on a new goroutine, with its events on a
// channel, as Start.
func (e *Engine) StartContinue(ctx context.Context, s *Session, sink Sink) <-chan Event {
	return goRun(s, sink, func(sinks Sink) Result { return e.Continue(ctx, s, sinks) })
}

// goRun runs a run on a new goroutine, its events going to sink and then to
// the returned channel, which is closed at the end. A run refused before it
// began (the session is busy, nothing to continue) still ends the channel
// with a run_finished that says why.
func goRun(s *Session, sink Sink, run func(Sink) Result) <-chan Event {
	ch := make(chan Event, 256)
	go func() {
		defer close(ch)
		res := run(Sinks{sink, chanSink(ch)})
		if res.RunID == "" && res.Err != nil {
			// Only the id is read: another run may own the session.
			ch <- Refusal(s.ID, res.Err)
		}
	}()
	return ch
}

// Refusal is the run_finished (stop reason error) of a run refused before it
// began: the session is busy, there is nothing to continue, or the caller
// cannot run on it (a read-only session). It belongs to no run.
func Refusal(session string, why error) Event {
	return Event{V: SchemaVersion, Session: session, Kind: KindRunFinished, Time: time.Now(),
		Data: &RunFinished{StopReason: StopError, Error: why.Error()}}
}
