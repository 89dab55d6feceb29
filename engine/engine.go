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
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
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
	r := e.newRun(s, sink, fmt.Sprintf("run-%d", s.Runs+1))
	if err := r.emit("", KindRunStarted, &RunStarted{Task: task, Model: e.cfg.ModelName, MaxSteps: e.cfg.MaxSteps}); err != nil {
		return r.finish(StopError, "", err)
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
	if len(s.run.Waiting) > 0 {
		unfinished := map[string]bool{}
		for _, c := range s.run.Unfinished {
			unfinished[c.ID] = true
		}
		calls := s.History[len(s.History)-1].ToolCalls
		var todo []int
		for i, c := range calls {
			if s.pending[i].Role == "" {
				todo = append(todo, i)
				if unfinished[c.ID] {
					r.rerun[c.ID] = true
				}
			}
		}
		if stop, reason, err := r.act(ctx, calls, todo); stop != "" {
			return r.finish(stop, "", err)
		} else if reason != "" {
			return r.finish(StopCancelled, "", errors.New(reason))
		}
		if err := r.emit(Observe, KindStepFinished, &StepFinished{ToolCalls: len(calls)}); err != nil {
			return r.finish(StopError, "", err)
		}
	}
	return r.loop(ctx)
}

// Start runs task on s in a new goroutine and returns its events on a channel
// that is closed after run_finished. sink, when not nil, sees each event
// before the channel does (put the journal there). The caller must read the
// channel until it is closed.
func (e *Engine) Start(ctx context.Context, s *Session, task string, sink Sink) <-chan Event {
	ch := make(chan Event, 256)
	go func() {
		defer close(ch)
		e.Run(ctx, s, task, Sinks{sink, chanSink(ch)})
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
}

func (e *Engine) newRun(s *Session, sink Sink, id string) *run {
	if sink == nil {
		sink = Sinks(nil)
	}
	return &run{e: e, s: s, sink: sink, id: id, rerun: map[string]bool{}}
}

// emit stamps an event, applies it to the session and hands it to the sink.
func (r *run) emit(phase Phase, kind Kind, data any) error {
	ev := Event{V: SchemaVersion, Session: r.s.ID, Run: r.id, Step: r.step, Phase: phase, Kind: kind, Time: time.Now(), Data: data}
	if err := r.s.Apply(ev); err != nil {
		return err
	}
	return r.sink.Emit(ev)
}

func (r *run) finish(stop StopReason, answer string, cause error) Result {
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
	return res
}

func (r *run) loop(ctx context.Context) Result {
	cfg := &r.e.cfg
	for {
		if ctx.Err() != nil {
			return r.finish(StopCancelled, "", ctx.Err())
		}
		if r.s.run.Turn >= cfg.MaxSteps {
			return r.finish(StopStepLimit, "", fmt.Errorf("step limit of %d reached without an answer", cfg.MaxSteps))
		}
		r.step = r.s.Steps + 1
		if err := r.emit(Perceive, KindStepStarted, &StepStarted{Turn: r.s.run.Turn}); err != nil {
			return r.finish(StopError, "", err)
		}
		req, err := r.perceive()
		if err != nil {
			return r.finish(StopError, "", err)
		}
		if v, err := r.pause(ctx, Pending{At: Decide}); err != nil {
			return r.finish(stopFor(ctx, err), "", err)
		} else if v.Action == Abort {
			return r.finish(StopCancelled, "", errors.New("aborted at the gate"))
		}
		dec, attempts, err := r.decide(ctx, req)
		if err != nil {
			return r.finish(stopFor(ctx, err), "", err)
		}
		if err := r.emit(Decide, KindDecision, &DecisionData{Text: dec.Text, Reasoning: dec.Reasoning, ToolCalls: dec.ToolCalls, Attempts: attempts}); err != nil {
			return r.finish(StopError, "", err)
		}
		u := dec.Usage
		if err := r.emit(Decide, KindUsage, &UsageData{Usage: u, SessionPrompt: r.s.Usage.PromptTokens + u.PromptTokens, SessionCompletion: r.s.Usage.CompletionTokens + u.CompletionTokens}); err != nil {
			return r.finish(StopError, "", err)
		}
		if len(dec.ToolCalls) == 0 {
			if err := r.emit(Observe, KindStepFinished, &StepFinished{}); err != nil {
				return r.finish(StopError, "", err)
			}
			return r.finish(StopAnswered, dec.Text, nil)
		}
		all := make([]int, len(dec.ToolCalls))
		for i := range all {
			all[i] = i
		}
		if stop, reason, err := r.act(ctx, dec.ToolCalls, all); stop != "" {
			return r.finish(stop, "", err)
		} else if reason != "" {
			return r.finish(StopCancelled, "", errors.New(reason))
		}
		if err := r.emit(Observe, KindStepFinished, &StepFinished{ToolCalls: len(dec.ToolCalls)}); err != nil {
			return r.finish(StopError, "", err)
		}
	}
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
	sysT, memT, toolT := EstimateTokens(cfg.System), estimateFacts(mem), estimateTools(tools)
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
	req := &Request{
		System:   cfg.System,
		Memory:   mem,
		Messages: s.History[cut:n:n],
		Tools:    tools,
		Options:  cfg.Options,
		Turn:     s.run.Turn,
	}
	mr := &ModelRequest{Messages: n - cut, MemoryFacts: len(mem), Tools: len(tools), Tokens: sysT + memT + toolT + s.tokensOf(cut, n), SystemTokens: sysT, MemoryTokens: memT, ToolTokens: toolT, Budget: cfg.Budget}
	return req, r.emit(Perceive, KindModelRequest, mr)
}

// errEmptyDecision is a decision with neither text nor tool calls.
var errEmptyDecision = Transient(errors.New("the model returned neither text nor tool calls"), 0)

// decide asks the model, retrying what is worth retrying.
func (r *run) decide(ctx context.Context, req *Request) (Decision, int, error) {
	cfg := &r.e.cfg
	var sinkErr error
	req.delta = func(d TextDelta) {
		if sinkErr == nil {
			sinkErr = r.emit(Decide, KindTextDelta, &d)
		}
	}
	for attempt := 1; ; attempt++ {
		req.Attempt = attempt
		dec, err := cfg.Model.Decide(ctx, req)
		if sinkErr != nil {
			return Decision{}, attempt, sinkErr
		}
		if err == nil && dec.Text == "" && len(dec.ToolCalls) == 0 {
			err = errEmptyDecision
		}
		if err == nil {
			r.nameCalls(dec.ToolCalls)
			if dec.Usage == (Usage{}) {
				dec.Usage = estimateUsage(req, dec)
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
		if err := sleep(ctx, d); err != nil {
			return Decision{}, attempt, err
		}
	}
}

// nameCalls gives every tool call a unique id; some servers send none.
func (r *run) nameCalls(calls []ToolCall) {
	seen := make(map[string]bool, len(calls))
	for i := range calls {
		if calls[i].ID == "" || seen[calls[i].ID] {
			calls[i].ID = fmt.Sprintf("call_%d_%d", r.step, i)
		}
		seen[calls[i].ID] = true
	}
}

func estimateUsage(req *Request, dec Decision) Usage {
	p := EstimateTokens(req.System) + estimateFacts(req.Memory) + estimateTools(req.Tools)
	for _, m := range req.Messages {
		p += EstimateMessage(m)
	}
	return Usage{PromptTokens: p, CompletionTokens: EstimateMessage(Message{Content: dec.Text, ToolCalls: dec.ToolCalls}), Estimated: true}
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
	v, err := g.Wait(ctx, p)
	if err != nil {
		return Verdict{}, err
	}
	if v.Action == "" {
		v.Action = Proceed
	}
	return v, r.emit(p.At, KindGateResumed, &GateResumed{Action: v.Action, Args: v.Args})
}

// toolMsg carries news from a tool's goroutine to the run's.
type toolMsg struct {
	idx   int
	retry *RetryData
	done  *ToolFinished
	mem   []MemoryChanged
}

// act runs the tool calls calls[i] for i in todo: refusals first, then the
// rest in parallel, emitting tool_finished as each completes. It returns a
// stop reason when the run must end, with the error, or an abort reason.
func (r *run) act(ctx context.Context, calls []ToolCall, todo []int) (StopReason, string, error) {
	cfg := &r.e.cfg
	type job struct {
		idx  int
		tool Tool
		call ToolCall
	}
	var jobs []job
	aborted := ""
	for _, i := range todo {
		c := calls[i]
		fin := &ToolFinished{Index: i, ID: c.ID, Name: c.Name}
		if aborted != "" {
			fin.Status, fin.Result = ToolSkipped, "skipped: the run was aborted before this call"
			if err := r.emit(Act, KindToolFinished, fin); err != nil {
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
			v, err := r.pause(ctx, Pending{At: Act, ToolCall: &c, Approval: t.Policy == PolicyAsk || r.rerun[c.ID]})
			if err != nil {
				return stopFor(ctx, err), "", err
			}
			switch v.Action {
			case Abort:
				aborted = "aborted at the gate"
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
				jobs = append(jobs, job{idx: i, tool: t, call: c})
				continue
			}
		}
		if err := r.emit(Act, KindToolFinished, fin); err != nil {
			return StopError, "", err
		}
	}
	if len(jobs) == 0 {
		return "", aborted, nil
	}
	msgs := make(chan toolMsg, len(jobs)*(cfg.Retry.Attempts+1))
	running := make(map[int]ToolCall, len(jobs))
	for _, j := range jobs {
		if err := r.emit(Act, KindToolStarted, &ToolStarted{Index: j.idx, ID: j.call.ID, Name: j.call.Name, Args: j.call.Args}); err != nil {
			return StopError, "", err
		}
		running[j.idx] = j.call
		mem := &MemoryView{base: r.s.memory}
		call := &Call{ID: j.call.ID, Args: normArgs(j.call.Args), Step: r.step, Session: r.s.ID, Memory: mem}
		go r.runTool(ctx, j.idx, j.tool, call, msgs)
	}
	for len(running) > 0 {
		select {
		case m := <-msgs:
			if m.retry != nil {
				if err := r.emit(Act, KindRetry, m.retry); err != nil {
					return StopError, "", err
				}
				continue
			}
			delete(running, m.idx)
			if err := r.emit(Act, KindToolFinished, m.done); err != nil {
				return StopError, "", err
			}
			for i := range m.mem {
				if err := r.emit(Observe, KindMemoryChanged, &m.mem[i]); err != nil {
					return StopError, "", err
				}
			}
		case <-ctx.Done():
			for _, i := range slices.Sorted(maps.Keys(running)) {
				c := running[i]
				fin := &ToolFinished{Index: i, ID: c.ID, Name: c.Name, Status: ToolError, Result: "error: cancelled", Error: ctx.Err().Error()}
				if err := r.emit(Act, KindToolFinished, fin); err != nil {
					return StopError, "", err
				}
			}
			return StopCancelled, "", ctx.Err()
		}
	}
	return "", aborted, nil
}

func normArgs(a []byte) []byte {
	if len(strings.TrimSpace(string(a))) == 0 {
		return []byte("{}")
	}
	return a
}

// runTool runs one call on its own goroutine, with the tool's timeout and
// retries, and sends the outcome on msgs.
func (r *run) runTool(ctx context.Context, idx int, t Tool, call *Call, msgs chan<- toolMsg) {
	cfg := &r.e.cfg
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = cfg.ToolTimeout
	}
	fin := &ToolFinished{Index: idx, ID: call.ID, Name: t.Name}
	start := time.Now()
	var out string
	var err error
	for attempt := 1; ; attempt++ {
		fin.Attempts = attempt
		out, err = callTool(ctx, t, call, timeout)
		if err == nil || !t.Retryable || !IsRetryable(err) || attempt >= cfg.Retry.Attempts || ctx.Err() != nil {
			break
		}
		after, status := retryInfo(err)
		d := cfg.Retry.Delay(attempt, after)
		msgs <- toolMsg{idx: idx, retry: &RetryData{Op: "tool:" + t.Name, Attempt: attempt + 1, DelayMS: d.Milliseconds(), Cause: err.Error(), Status: status}}
		if sleep(ctx, d) != nil {
			break
		}
		call.Memory.changes = nil
	}
	fin.DurationMS = time.Since(start).Milliseconds()
	if err != nil {
		fin.Status, fin.Error = ToolError, err.Error()
		out = "error: " + err.Error()
		call.Memory.changes = nil
	} else {
		fin.Status = ToolOK
	}
	fin.Result, fin.Truncated = truncate(out, cfg.MaxResultBytes)
	msgs <- toolMsg{idx: idx, done: fin, mem: call.Memory.changes}
}

// callTool makes one attempt. A panic becomes an error; so does a timeout,
// even when the tool ignores its context (its goroutine is then left to end
// on its own).
func callTool(ctx context.Context, t Tool, call *Call, timeout time.Duration) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	mem := *call.Memory
	c := *call
	c.Memory = &mem
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("tool panicked: %v", p)}
			}
		}()
		out, err := t.Func(cctx, &c)
		done <- result{out, err}
	}()
	select {
	case res := <-done:
		if res.err == nil {
			*call.Memory = mem
			return res.out, nil
		}
		if errors.Is(res.err, context.DeadlineExceeded) && ctx.Err() == nil {
			return "", Transient(fmt.Errorf("timed out after %s", timeout), 0)
		}
		return res.out, res.err
	case <-cctx.Done():
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", Transient(fmt.Errorf("timed out after %s", timeout), 0)
	}
}

// truncate caps s at n bytes, on a rune boundary, saying what was cut.
func truncate(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[truncated: %d of %d bytes shown]", cut, len(s)), true
}
