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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	Model Model
	// ModelName is reported in run_started.
	ModelName string
	Tools     *Registry
	// Gate is consulted before each decide and each tool call; nil lets
	// everything through.
	Gate   Gate
	System string
	// MaxSteps bounds the decisions of one run (default 25).
	MaxSteps int
	// Budget is the context budget in estimated tokens (default 64,000):
	// the oldest history is left out of a request that would exceed it.
	Budget int
	Retry  Retry
	// ToolTimeout bounds a tool call whose tool sets none (default 60 s).
	ToolTimeout time.Duration
	// MaxResultBytes caps a tool result (default 16 KiB); longer results
	// are cut and marked truncated.
	MaxResultBytes int
	Options        Options
}

// Engine runs agents. It is safe for concurrent use by many runs, each on its
// own Session.
type Engine struct {
	cfg Config
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
	cfg.Retry = cfg.Retry.withDefaults()
	return &Engine{cfg: cfg}
}

// Config returns the engine's configuration with defaults filled in.
func (e *Engine) Config() Config { return e.cfg }

// Result is how a run ended.
type Result struct {
	RunID      string
	StopReason StopReason
	Answer     string
	// Err is set when StopReason is error, and says why.
	Err   error
	Steps int
}

// Run carries task through the loop on session s until the model answers, the
// step limit is reached, ctx is cancelled or an error ends it. Every event
// goes to sink, in order, ending with run_finished. Cancelling ctx stops the
// run promptly with stop reason cancelled.
func (e *Engine) Run(ctx context.Context, s *Session, task string, sink Sink) Result {
	if !s.busy.CompareAndSwap(false, true) {
		return Result{StopReason: StopError, Err: ErrBusy}
	}
	defer s.busy.Store(false)
	s.reserve(2*e.cfg.MaxSteps + 2)
	r := e.newRun(s, sink, "run-"+strconv.Itoa(s.Runs+1))
	r.step = s.Steps
	if err := r.emit("", KindRunStarted, &RunStarted{Task: task, Model: e.cfg.ModelName, MaxSteps: e.cfg.MaxSteps}); err != nil {
		return r.finish(ctx, StopError, "", err)
	}
	return r.loop(ctx)
}

// Continue finishes the session's interrupted run (one whose process died
// before run_finished). Tool calls whose results are in the session are not
// run again; a call that started but has no result is re-run only if the
// Gate approves (a nil Gate does), and the rest of the run carries on.
func (e *Engine) Continue(ctx context.Context, s *Session, sink Sink) Result {
	if !s.busy.CompareAndSwap(false, true) {
		return Result{StopReason: StopError, Err: ErrBusy}
	}
	defer s.busy.Store(false)
	if !s.Interrupted() {
		return Result{StopReason: StopError, Err: ErrNotInterrupted}
	}
	r := e.newRun(s, sink, s.run.ID)
	r.step = s.Steps
	if s.pendingLeft > 0 {
		calls := s.History[len(s.History)-1].ToolCalls
		var todo []int
		r.rerun = map[string]bool{}
		for i, st := range s.callState {
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
			return r.finish(ctx, StopCancelled, "", errors.New(reason))
		}
		if err := r.emit(Observe, KindStepFinished, &StepFinished{ToolCalls: len(calls)}); err != nil {
			return r.finish(ctx, StopError, "", err)
		}
	}
	return r.loop(ctx)
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
			ch <- Event{V: SchemaVersion, Session: s.ID, Kind: KindRunFinished, Time: time.Now(),
				Data: &RunFinished{StopReason: StopError, Error: res.Err.Error()}}
		}
	}()
	return ch
}

type chanSink chan<- Event

func (c chanSink) Emit(ev Event) error {
	c <- ev
	return nil
}

// run is the state of one run; it is owned by the run's goroutine.
type run struct {
	e    *Engine
	s    *Session
	sink Sink
	id   string
	step int
	cut  int // first history message in the last request
	// rerun marks interrupted calls whose re-run needs approval.
	rerun map[string]bool
	// timer serves the act phase's deadlines; it is made when first
	// needed and reused across steps.
	timer *time.Timer
	// Buffers reused from step to step.
	jobs []toolJob
	req  Request
	view MemoryView // of the inline tool call running
	call Call       // of the inline tool call running
	// deltaErr is the first sink error while the model streamed.
	deltaErr error
	// reqTokens is the estimated size of the last request.
	reqTokens int
	// payloads are the current step's.
	payloads *stepPayloads
}

func (e *Engine) newRun(s *Session, sink Sink, id string) *run {
	if sink == nil {
		sink = Sinks(nil)
	}
	r := &run{e: e, s: s, sink: sink, id: id}
	r.req.delta = r.onDelta
	return r
}

// emit stamps an event, applies it to the session and hands it to the sink.
func (r *run) emit(phase Phase, kind Kind, data any) error {
	return r.emitAt(time.Now(), phase, kind, data)
}

// emitAt is emit with the time already known.
func (r *run) emitAt(t time.Time, phase Phase, kind Kind, data any) error {
	ev := Event{V: SchemaVersion, Session: r.s.ID, Run: r.id, Step: r.step, Phase: phase, Kind: kind, Time: t, Data: data}
	if err := r.s.Apply(ev); err != nil {
		return err
	}
	return r.sink.Emit(ev)
}

// flush lets a sink that holds events back write them now: the run is
// about to wait (for the model, a tool, the gate, a retry delay) or a step
// or the run has ended.
func (r *run) flush() error {
	if f, ok := r.sink.(Flusher); ok {
		return f.Flush()
	}
	return nil
}

// finish ends the run with run_finished. A run cancelled because the
// console crashed (ctx's cause is ErrCrashed) ends with stop reason error,
// not cancelled: nobody chose to stop it.
func (r *run) finish(ctx context.Context, stop StopReason, answer string, cause error) Result {
	if stop == StopCancelled {
		if c := context.Cause(ctx); errors.Is(c, ErrCrashed) {
			stop, cause = StopError, c
		}
	}
	res := Result{RunID: r.id, StopReason: stop, Answer: answer, Steps: r.s.run.Turn}
	fin := &RunFinished{StopReason: stop, Answer: answer, Steps: res.Steps}
	if cause != nil {
		fin.Error = cause.Error()
		if stop == StopError {
			res.Err = cause
		}
	}
	if err := r.emit("", KindRunFinished, fin); err != nil && res.Err == nil {
		res.StopReason, res.Err = StopError, err
	}
	if err := r.flush(); err != nil && res.Err == nil {
		res.StopReason, res.Err = StopError, err
	}
	return res
}

func (r *run) loop(ctx context.Context) Result {
	cfg := &r.e.cfg
	for {
		if ctx.Err() != nil {
			return r.finish(ctx, StopCancelled, "", ctx.Err())
		}
		if r.s.run.Turn >= cfg.MaxSteps {
			return r.finish(ctx, StopStepLimit, "", fmt.Errorf("step limit of %d reached without an answer", cfg.MaxSteps))
		}
		r.step = r.s.Steps + 1
		// One allocation for the payloads of the step's own events, which
		// subscribers may keep.
		p := &stepPayloads{started: StepStarted{Turn: r.s.run.Turn}}
		r.payloads = p
		if err := r.emit(Perceive, KindStepStarted, &p.started); err != nil {
			return r.finish(ctx, StopError, "", err)
		}
		req, err := r.perceive()
		if err != nil {
			return r.finish(ctx, StopError, "", err)
		}
		if v, err := r.pause(ctx, Pending{At: Decide}); err != nil {
			return r.finish(ctx, stopFor(ctx, err), "", err)
		} else if v.Action == Abort {
			return r.finish(ctx, StopCancelled, "", errors.New("aborted at the gate"))
		}
		dec, attempts, err := r.decide(ctx, req)
		if err != nil {
			return r.finish(ctx, stopFor(ctx, err), "", err)
		}
		p.decision = DecisionData{Text: dec.Text, Reasoning: dec.Reasoning, ToolCalls: dec.ToolCalls, Attempts: attempts}
		now := time.Now()
		if err := r.emitAt(now, Decide, KindDecision, &p.decision); err != nil {
			return r.finish(ctx, StopError, "", err)
		}
		u := dec.Usage
		p.usage = UsageData{Usage: u, SessionPrompt: r.s.Usage.PromptTokens + u.PromptTokens, SessionCompletion: r.s.Usage.CompletionTokens + u.CompletionTokens}
		if err := r.emitAt(now, Decide, KindUsage, &p.usage); err != nil {
			return r.finish(ctx, StopError, "", err)
		}
		if len(dec.ToolCalls) == 0 {
			if err := r.emit(Observe, KindStepFinished, &p.finished); err != nil {
				return r.finish(ctx, StopError, "", err)
			}
			return r.finish(ctx, StopAnswered, dec.Text, nil)
		}
		if stop, reason, err := r.act(ctx, dec.ToolCalls, nil); stop != "" {
			return r.finish(ctx, stop, "", err)
		} else if reason != "" {
			return r.finish(ctx, StopCancelled, "", errors.New(reason))
		}
		p.finished = StepFinished{ToolCalls: len(dec.ToolCalls)}
		if err := r.emit(Observe, KindStepFinished, &p.finished); err != nil {
			return r.finish(ctx, StopError, "", err)
		}
	}
}

// stepPayloads holds the payloads of the events every step has.
type stepPayloads struct {
	started  StepStarted
	request  ModelRequest
	decision DecisionData
	usage    UsageData
	finished StepFinished
}

func stopFor(ctx context.Context, err error) StopReason {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return StopCancelled
	}
	return StopError
}

// perceive assembles the request: system prompt, memory, the history trimmed
// to the budget, and the tool schemas. Its cost does not grow with the
// history: the request holds a view of it, and the cut is found by binary
// search over prefix sums.
func (r *run) perceive() (*Request, error) {
	cfg := &r.e.cfg
	s := r.s
	mem := s.memory
	tools := cfg.Tools.Schemas()
	sysT, memT, toolT := EstimateTokens(cfg.System), estimateFacts(mem), cfg.Tools.Tokens()
	budget := max(cfg.Budget-sysT-memT-toolT, 0)
	n := len(s.History)
	cut := s.trimStart(budget)
	if cut != r.cut {
		if cut > 0 {
			d := &ContextTrimmed{Dropped: cut, DroppedTokens: s.tokensOf(0, cut), Kept: n - cut, KeptTokens: s.tokensOf(cut, n), Budget: cfg.Budget}
			if err := r.emit(Perceive, KindContextTrimmed, d); err != nil {
				return nil, err
			}
		}
		r.cut = cut
	}
	req := &r.req
	*req = Request{
		System:   cfg.System,
		Memory:   mem,
		Messages: s.History[cut:n:n],
		Tools:    tools,
		Options:  cfg.Options,
		Turn:     s.run.Turn,
		delta:    r.onDelta,
	}
	r.reqTokens = sysT + memT + toolT + s.tokensOf(cut, n)
	mr := &r.payloads.request
	*mr = ModelRequest{Messages: n - cut, MemoryFacts: len(mem), Tools: len(tools), Tokens: r.reqTokens, SystemTokens: sysT, MemoryTokens: memT, ToolTokens: toolT, Budget: cfg.Budget}
	return req, r.emit(Perceive, KindModelRequest, mr)
}

// errEmptyDecision is a decision with neither text nor tool calls.
var errEmptyDecision = Transient(errors.New("the model returned neither text nor tool calls"), 0)

// decide asks the model, retrying what is worth retrying.
func (r *run) decide(ctx context.Context, req *Request) (Decision, int, error) {
	cfg := &r.e.cfg
	r.deltaErr = nil
	for attempt := 1; ; attempt++ {
		req.Attempt = attempt
		if err := r.flush(); err != nil {
			return Decision{}, attempt, err
		}
		dec, err := cfg.Model.Decide(ctx, req)
		if r.deltaErr != nil {
			return Decision{}, attempt, r.deltaErr
		}
		if err == nil && dec.Text == "" && len(dec.ToolCalls) == 0 {
			err = errEmptyDecision
		}
		if err == nil {
			r.nameCalls(dec.ToolCalls)
			if dec.Usage == (Usage{}) {
				dec.Usage = r.estimateUsage(dec)
			}
			return dec, attempt, nil
		}
		if ctx.Err() != nil {
			return Decision{}, attempt, ctx.Err()
		}
		if !IsRetryable(err) || attempt >= cfg.Retry.Attempts {
			if attempt > 1 {
				return Decision{}, attempt, fmt.Errorf("model: %w (after %d attempts)", err, attempt)
			}
			return Decision{}, attempt, fmt.Errorf("model: %w", err)
		}
		after, status := retryInfo(err)
		d := cfg.Retry.Delay(attempt, after)
		if err := r.emit(Decide, KindRetry, &RetryData{Op: "model", Attempt: attempt + 1, DelayMS: d.Milliseconds(), Cause: err.Error(), Status: status}); err != nil {
			return Decision{}, attempt, err
		}
		if err := r.flush(); err != nil {
			return Decision{}, attempt, err
		}
		if err := sleep(ctx, d); err != nil {
			return Decision{}, attempt, err
		}
	}
}

// onDelta turns a streamed piece of output into a text_delta event.
func (r *run) onDelta(d TextDelta) {
	if r.deltaErr == nil {
		r.deltaErr = r.emit(Decide, KindTextDelta, &d)
	}
	if r.deltaErr == nil {
		r.deltaErr = r.flush() // deltas are for the screen, now
	}
}

// nameCalls gives every tool call a unique id (some servers send none) and
// arguments ({} for none).
func (r *run) nameCalls(calls []ToolCall) {
	for i := range calls {
		if len(bytes.TrimSpace(calls[i].Args)) == 0 {
			calls[i].Args = json.RawMessage("{}")
		}
		dup := calls[i].ID == ""
		for j := 0; j < i && !dup; j++ {
			dup = calls[j].ID == calls[i].ID
		}
		if dup {
			calls[i].ID = fmt.Sprintf("call_%d_%d", r.step, i)
		}
	}
}

// estimateUsage estimates a decision's tokens when the model reported none:
// the prompt as perceive counted it, and the decision's text and calls.
func (r *run) estimateUsage(dec Decision) Usage {
	return Usage{PromptTokens: r.reqTokens, CompletionTokens: EstimateMessage(Message{Content: dec.Text, ToolCalls: dec.ToolCalls}), Estimated: true}
}

// pause consults the gate, emitting gate_paused and gate_resumed around a
// wait.
func (r *run) pause(ctx context.Context, p Pending) (Verdict, error) {
	g := r.e.cfg.Gate
	p.Session, p.Run, p.Step = r.s.ID, r.id, r.step
	if g == nil || (!p.Approval && !g.Stop(p)) {
		return Verdict{Action: Proceed}, nil
	}
	reason := ReasonStep
	if p.Approval {
		reason = ReasonApproval
	}
	if err := r.emit(p.At, KindGatePaused, &GatePaused{At: p.At, Reason: reason, ToolCall: p.ToolCall}); err != nil {
		return Verdict{}, err
	}
	if err := r.flush(); err != nil {
		return Verdict{}, err
	}
	v, err := g.Wait(ctx, p)
	if err != nil {
		return Verdict{}, err
	}
	if v.Action == "" {
		v.Action = Proceed
	}
	return v, r.emit(p.At, KindGateResumed, &GateResumed{Action: v.Action, Args: v.Args})
}

// toolJob is one tool call being run by act.
type toolJob struct {
	idx      int
	tool     Tool
	call     ToolCall
	attempt  int // the attempt running or next to run
	active   bool
	cancel   context.CancelFunc
	deadline time.Time // of the running attempt
	retryAt  time.Time // when waiting to retry
	start    time.Time
	view     *MemoryView
	// started and finished say whether its tool_started and tool_finished
	// were emitted.
	started, finished bool
}

// toolResult is what an attempt's goroutine sends back.
type toolResult struct {
	job, attempt int
	out          string
	err          error
}

// act runs the tool calls calls[i] for i in todo (nil: all of them):
// refusals first, then the rest in parallel. It returns a stop reason when
// the run must end, with the error, or an abort reason.
//
// The gate is consulted for every call before any of them runs. When it
// answers Abort at call k, nothing runs and none gets a tool_started: the
// calls approved before k get their tool_finished (skipped) at once, in call
// order, then k, then each call after k.
func (r *run) act(ctx context.Context, calls []ToolCall, todo []int) (StopReason, string, error) {
	cfg := &r.e.cfg
	jobs := r.jobs[:0]
	aborted := ""
	for k := range max(len(todo), len(calls)) {
		i := k
		if todo != nil {
			if k >= len(todo) {
				break
			}
			i = todo[k]
		}
		c := calls[i]
		fin := ToolFinished{Index: i, ID: c.ID, Name: c.Name} // emitted only when refused
		if aborted != "" {
			fin.Status, fin.Result = ToolSkipped, skippedByAbort
			if err := r.emitFinished(fin); err != nil {
				return StopError, "", err
			}
			continue
		}
		t, ok := cfg.Tools.Lookup(c.Name)
		switch {
		case !ok:
			fin.Status = ToolError
			fin.Result = fmt.Sprintf("error: unknown tool %q; the tools are: %s", c.Name, strings.Join(cfg.Tools.Names(), ", "))
		case t.Policy == PolicyDeny:
			fin.Status, fin.Result = ToolDenied, fmt.Sprintf("error: tool %q is denied by policy and was not run", c.Name)
		default:
			v := Verdict{Action: Proceed}
			if cfg.Gate != nil {
				pending := c // on the heap only when there is a gate to show it to
				var err error
				if v, err = r.pause(ctx, Pending{At: Act, ToolCall: &pending, Approval: t.Policy == PolicyAsk || r.rerun[c.ID]}); err != nil {
					return stopFor(ctx, err), "", err
				}
			}
			switch v.Action {
			case Abort:
				// An abort runs nothing more: the calls approved before
				// this one are skipped too, in call order, before it.
				aborted = "aborted at the gate"
				for j := range jobs {
					jb := &jobs[j]
					if err := r.emitFinished(ToolFinished{Index: jb.idx, ID: jb.call.ID, Name: jb.call.Name, Status: ToolSkipped, Result: skippedByAbort}); err != nil {
						return StopError, "", err
					}
				}
				clear(jobs)
				jobs = jobs[:0]
				fin.Status, fin.Result = ToolSkipped, "skipped: the run was aborted"
			case Skip:
				fin.Status, fin.Result = ToolSkipped, "skipped: the person chose not to run this tool call"
			case Deny:
				fin.Status, fin.Result = ToolDenied, "error: the person denied this tool call; it was not run"
			default:
				if v.Args != nil {
					c.Args = v.Args
				}
				if err := cfg.Tools.Validate(c.Name, c.Args); err != nil {
					fin.Status, fin.Result = ToolError, "error: "+err.Error()
					break
				}
				if t.Timeout <= 0 {
					t.Timeout = cfg.ToolTimeout
				}
				jobs = append(jobs, toolJob{idx: i, tool: t, call: c, attempt: 1})
				continue
			}
		}
		if err := r.emitFinished(fin); err != nil {
			return StopError, "", err
		}
	}
	if len(jobs) == 0 {
		return "", aborted, nil
	}
	stop, err := r.runJobs(ctx, jobs)
	clear(jobs)
	r.jobs = jobs[:0]
	return stop, aborted, err
}

// skippedByAbort is the result of a call that did not run because the
// person aborted the run at another call of the same decision.
const skippedByAbort = "skipped: the run was aborted before this call"

// emitFinished reports a tool call that did not run.
func (r *run) emitFinished(fin ToolFinished) error {
	return r.emit(Act, KindToolFinished, &fin)
}

// runJobs runs jobs in parallel, one goroutine per attempt, while this
// goroutine keeps the clock: timeouts, retry delays and cancellation are
// decided here, so a tool that ignores its context cannot hold the run.
//
// Every job that got a tool_started gets exactly one tool_finished, however
// the act phase ends: when it ends early (cancelled, an inline tool's
// retry cut short, a sink that failed), the jobs still running or waiting
// to retry are cancelled and reported as such. A job that never started
// gets no event here; its call is left without a result, as a call is when
// the run is cancelled at the gate.
func (r *run) runJobs(ctx context.Context, jobs []toolJob) (StopReason, error) {
	stop, err := r.driveJobs(ctx, jobs)
	for j := range jobs {
		if jobs[j].cancel != nil {
			jobs[j].cancel()
		}
	}
	if stop == "" {
		return "", nil
	}
	if r.timer != nil {
		r.timer.Stop()
	}
	now := time.Now()
	for j := range jobs {
		jb := &jobs[j]
		if !jb.started || jb.finished {
			continue
		}
		jb.finished = true
		fin := &ToolFinished{Index: jb.idx, ID: jb.call.ID, Name: jb.call.Name, Status: ToolError, Result: "error: cancelled",
			Error: err.Error(), Attempts: jb.attempt, DurationMS: now.Sub(jb.start).Milliseconds()}
		if e := r.emitAt(now, Act, KindToolFinished, fin); e != nil && stop != StopError {
			stop, err = StopError, e
		}
	}
	return stop, err
}

// driveJobs starts the jobs and waits for them, as runJobs says. It returns
// a stop reason when the run must end; the jobs left unfinished are then
// runJobs' to report.
func (r *run) driveJobs(ctx context.Context, jobs []toolJob) (StopReason, error) {
	cfg := &r.e.cfg
	var results chan toolResult
	left := 0
	for j := range jobs {
		jb := &jobs[j]
		jb.start = time.Now()
		jb.started = true // even if the sink fails on it: the session applied it
		if err := r.emitAt(jb.start, Act, KindToolStarted, &ToolStarted{Index: jb.idx, ID: jb.call.ID, Name: jb.call.Name, Args: jb.call.Args}); err != nil {
			return StopError, err
		}
		if err := r.flush(); err != nil { // tool_started is on disk before the tool runs
			return StopError, err
		}
		if jb.tool.Inline {
			if stop, err := r.runInline(ctx, jb); stop != "" {
				return stop, err
			}
			continue
		}
		if results == nil {
			results = make(chan toolResult, len(jobs)*cfg.Retry.Attempts)
			if r.timer == nil {
				r.timer = time.NewTimer(time.Hour)
				r.timer.Stop()
			}
		}
		r.launch(ctx, j, jb, results)
		left++
	}
	for left > 0 {
		var next time.Time
		for j := range jobs {
			if w := jobs[j].wake(); !w.IsZero() && (next.IsZero() || w.Before(next)) {
				next = w
			}
		}
		if err := r.flush(); err != nil {
			return StopError, err
		}
		r.timer.Reset(time.Until(next))
		select {
		case res := <-results:
			jb := &jobs[res.job]
			if !jb.active || res.attempt != jb.attempt {
				continue // a late answer from an attempt that timed out
			}
			done, err := r.settle(ctx, jb, res.out, res.err, time.Now())
			if err != nil {
				return StopError, err
			}
			if done {
				left--
			}
		case <-r.timer.C:
			now := time.Now()
			for j := range jobs {
				jb := &jobs[j]
				switch {
				case jb.active && !now.Before(jb.deadline):
					jb.cancel()
					done, err := r.settle(ctx, jb, "", Transient(fmt.Errorf("timed out after %s", jb.tool.Timeout), 0), now)
					if err != nil {
						return StopError, err
					}
					if done {
						left--
					}
				case !jb.active && !jb.retryAt.IsZero() && !now.Before(jb.retryAt):
					jb.retryAt = time.Time{}
					r.launch(ctx, j, jb, results)
				}
			}
		case <-ctx.Done():
			return StopCancelled, ctx.Err()
		}
	}
	if results != nil {
		r.timer.Stop()
	}
	return "", nil
}

// runInline runs an Inline tool's attempts on this goroutine.
func (r *run) runInline(ctx context.Context, jb *toolJob) (StopReason, error) {
	start := jb.start
	for {
		jb.active = true
		r.view = MemoryView{base: r.s.memory}
		jb.view = &r.view
		r.call = Call{ID: jb.call.ID, Args: jb.call.Args, Step: r.step, Session: r.s.ID, Memory: jb.view}
		out, err := inlineTool(ctx, jb.tool.Func, &r.call)
		end := time.Now()
		if err == nil && end.Sub(start) > jb.tool.Timeout {
			err = Transient(fmt.Errorf("timed out after %s", jb.tool.Timeout), 0)
		}
		done, err := r.settle(ctx, jb, out, err, end)
		if err != nil {
			return StopError, err
		}
		if done {
			return "", nil
		}
		if err := r.flush(); err != nil {
			return StopError, err
		}
		if err := sleep(ctx, time.Until(jb.retryAt)); err != nil {
			return StopCancelled, ctx.Err()
		}
		jb.retryAt = time.Time{}
		start = time.Now()
	}
}

// inlineTool runs an Inline tool on this goroutine; a panic becomes an
// error.
func inlineTool(ctx context.Context, fn func(context.Context, *Call) (string, error), call *Call) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("tool panicked: %v", p)
		}
	}()
	return fn(ctx, call)
}

// wake returns when the job next needs the clock: its attempt's deadline,
// or the end of its retry delay; zero when it needs nothing.
func (jb *toolJob) wake() time.Time {
	if jb.active {
		return jb.deadline
	}
	return jb.retryAt
}

// launch starts the job's current attempt on its own goroutine.
func (r *run) launch(ctx context.Context, j int, jb *toolJob, results chan<- toolResult) {
	cctx, cancel := context.WithCancel(ctx)
	jb.active, jb.cancel = true, cancel
	jb.deadline = time.Now().Add(jb.tool.Timeout)
	jb.view = &MemoryView{base: r.s.memory}
	call := &Call{ID: jb.call.ID, Args: jb.call.Args, Step: r.step, Session: r.s.ID, Memory: jb.view}
	go attemptTool(cctx, jb.tool.Func, call, toolResult{job: j, attempt: jb.attempt}, results)
}

// attemptTool runs one attempt on its own goroutine and reports it.
func attemptTool(ctx context.Context, fn func(context.Context, *Call) (string, error), call *Call, res toolResult, results chan<- toolResult) {
	res.out, res.err = inlineTool(ctx, fn, call)
	results <- res
}

// settle handles the end of an attempt: success, a retry, or failure. It
// reports whether the job is finished.
func (r *run) settle(ctx context.Context, jb *toolJob, out string, err error, now time.Time) (bool, error) {
	cfg := &r.e.cfg
	jb.active = false
	if jb.cancel != nil {
		jb.cancel()
	}
	if err != nil && jb.tool.Retryable && IsRetryable(err) && jb.attempt < cfg.Retry.Attempts && ctx.Err() == nil {
		after, status := retryInfo(err)
		d := cfg.Retry.Delay(jb.attempt, after)
		jb.attempt++
		jb.retryAt = now.Add(d)
		return false, r.emit(Act, KindRetry, &RetryData{Op: "tool:" + jb.tool.Name, Attempt: jb.attempt, DelayMS: d.Milliseconds(), Cause: err.Error(), Status: status})
	}
	jb.finished = true // even if the sink fails on it: the session applied it
	fin := &ToolFinished{Index: jb.idx, ID: jb.call.ID, Name: jb.call.Name, Attempts: jb.attempt, DurationMS: now.Sub(jb.start).Milliseconds()}
	var changes []MemoryChanged
	if err != nil {
		fin.Status, fin.Error = ToolError, err.Error()
		out = "error: " + err.Error()
	} else {
		fin.Status = ToolOK
		changes = jb.view.changes
	}
	fin.Result, fin.Truncated = truncate(out, cfg.MaxResultBytes)
	if err := r.emitAt(now, Act, KindToolFinished, fin); err != nil {
		return true, err
	}
	for i := range changes {
		if err := r.emit(Observe, KindMemoryChanged, &changes[i]); err != nil {
			return true, err
		}
	}
	return true, nil
}
