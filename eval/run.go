package eval

// Running a suite: each case (each repeat) a real run in its own journaled
// session, in parallel up to the concurrency; verdicts with repeat and
// min_pass; recordings kept and replayed.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// Run and case statuses.
const (
	Passed            = "passed"
	Failed            = "failed"
	NeedsRecording    = "needs_recording"
	Skipped           = "skipped"
	evalFlakyNote     = "flaky"
	memorySourceEvals = "eval"
)

// Runner runs a suite's cases.
type Runner struct {
	// Around puts the trace and NATS sinks, if any, after a case's journal;
	// nil: the journal alone.
	Around func(journal engine.Sink) engine.Sink
	Suite  *Suite
	Cases  []*Case // those the filter kept
	// Engine runs the cases live; replaying, each case gets an engine of
	// Config with its recording in place of the model.
	Engine    *engine.Engine
	Config    engine.Config
	Store     *sessions.Store
	Judge     JudgeFunc // nil: no judge assertions
	RecordDir string
	ReplayDir string
	// ToolsFrom: the cases run live (Config's model) with the tool results
	// of their recordings in this folder where the calls match (tools.go).
	ToolsFrom string
	// Expand makes a turn that names a custom command ("/review x") its
	// prompt, and the engine of its run on base (app.Setup.Command); nil:
	// turns are sent as written. Replaying, only the prompt is used: the
	// recording's model answers.
	Expand func(ctx context.Context, base *engine.Engine, task string) (*engine.Engine, string, []string, error)
	// Base are the settings the flags and the suite give every case: a
	// case's own are over them; replaying, the recording's under them.
	Base Settings
	// Models picks the model a case names (live); Workspace makes the
	// tools that work in the workspace (the file tools, the shell when
	// offered) again for the folder dir, and release lets it go. Nil: a
	// case may not name a model, or have a workspace.
	Models      func(name string) (engine.Model, string, error)
	Workspace   func(dir string) (ts []engine.Tool, release func(), err error)
	Concurrency int
	FailFast    bool
	Report      Reporter
}

// evalJob is one run of a case: its repeat, from 1.
type evalJob struct {
	c   *Case
	rep int
}

func (j evalJob) label() string {
	if j.c.Repeat > 1 {
		return fmt.Sprintf("%s #%d", j.c.Name, j.rep)
	}
	return j.c.Name
}

// runResult is how one run of a case went.
type runResult struct {
	Repeat  int      `json:"repeat"`
	Session string   `json:"session,omitempty"`
	Status  string   `json:"status"`
	Reasons []string `json:"reasons,omitempty"`
	Answer  string   `json:"answer,omitempty"`
	Stop    string   `json:"stop_reason,omitempty"`
	Steps   int      `json:"steps"`
	Tokens  int      `json:"tokens"`
	// Cost is what the run's model calls cost (US dollars); left out,
	// with CostUnknown, when a call had no price.
	Cost        *float64 `json:"cost_usd,omitempty"`
	CostUnknown bool     `json:"cost_unknown,omitempty"`
	// ReplayedCost is what the recording's calls cost when it was made
	// (a replayed run spends nothing).
	ReplayedCost float64 `json:"replayed_cost_usd,omitempty"`
	Duration     float64 `json:"duration_s"`
	// Started and Finished are the times of the run's first and last
	// journaled events (zero when it did not run).
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
}

// CaseResult is a case's verdict over its runs.
type CaseResult struct {
	c       *Case
	Name    string       `json:"name"`
	Status  string       `json:"status"`
	Flaky   bool         `json:"flaky,omitempty"`
	Passed  int          `json:"passed"`
	Repeat  int          `json:"repeat"`
	MinPass float64      `json:"min_pass"`
	Runs    []*runResult `json:"runs"`
	done    int
}

// Time is the case's time: the sum of its runs'.
func (c *CaseResult) Time() float64 {
	t := 0.0
	for _, r := range c.Runs {
		t += r.Duration
	}
	return t
}

// verdict sets the case's status from its runs, once all are in.
func (c *CaseResult) verdict() {
	var pass, fail, skip, needs int
	for _, r := range c.Runs {
		switch r.Status {
		case Passed:
			pass++
		case Skipped:
			skip++
		case NeedsRecording:
			needs++
		default:
			fail++
		}
	}
	c.Passed = pass
	c.Flaky = pass > 0 && fail > 0
	enough := func(n int) bool { return float64(n) >= c.MinPass*float64(c.Repeat)-1e-9 }
	switch {
	case needs > 0:
		c.Status = NeedsRecording
	case skip == c.Repeat:
		c.Status = Skipped
	case !enough(pass + skip):
		c.Status = Failed
	case skip > 0:
		c.Status = Skipped
	case enough(pass):
		c.Status = Passed
	default:
		c.Status = Failed
	}
}

// lost reports whether the case can no longer pass, whatever its other
// runs do.
func (c *CaseResult) lost() bool {
	var pass, open int
	for _, r := range c.Runs {
		switch r.Status {
		case NeedsRecording:
			return true
		case Passed, "":
			pass++ // an open run may still pass
			if r.Status == "" {
				open++
			}
		}
	}
	return float64(pass) < c.MinPass*float64(c.Repeat)-1e-9
}

// Run runs every case (as many at once as Concurrency says) and returns
// their results, in file order.
func (r *Runner) Run(ctx context.Context) []*CaseResult {
	results := make([]*CaseResult, len(r.Cases))
	var jobs []evalJob
	for i, c := range r.Cases {
		results[i] = &CaseResult{c: c, Name: c.Name, Repeat: c.Repeat, MinPass: c.MinPass, Runs: make([]*runResult, c.Repeat)}
		for rep := 1; rep <= c.Repeat; rep++ {
			results[i].Runs[rep-1] = &runResult{Repeat: rep}
			jobs = append(jobs, evalJob{c, rep})
		}
	}
	byCase := map[*Case]*CaseResult{}
	for _, cr := range results {
		byCase[cr.c] = cr
	}
	r.Report.start(len(jobs))
	var (
		mu      sync.Mutex // guards the results' runs and done counts
		stopped atomic.Bool
		wg      sync.WaitGroup
	)
	queue := make(chan evalJob)
	for range max(1, r.Concurrency) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				cr := byCase[j.c]
				var res *runResult
				if stopped.Load() || ctx.Err() != nil {
					res = &runResult{Repeat: j.rep, Status: Skipped, Reasons: []string{"not run: --fail-fast stopped the suite"}}
					if ctx.Err() != nil {
						res.Reasons = []string{"not run: cancelled"}
					}
				} else {
					r.Report.runStarted(j)
					res = r.runOne(ctx, j)
				}
				mu.Lock()
				cr.Runs[j.rep-1] = res
				cr.done++
				complete := cr.done == cr.Repeat
				if complete {
					cr.verdict()
				}
				if r.FailFast && res.Status != Skipped && cr.lost() {
					stopped.Store(true)
				}
				mu.Unlock()
				var whole *CaseResult
				if complete {
					whole = cr
				}
				r.Report.runFinished(j, res, whole)
			}
		}()
	}
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	wg.Wait()
	r.Report.done()
	return results
}

// recordingPath is where a case's run is recorded: DIR/CASE.jsonl, and
// DIR/CASE~N.jsonl for the Nth repeat after the first ('~' is in no
// case's file name, so no repeat can take another case's recording).
func recordingPath(dir string, j evalJob) string {
	name := FileName(j.c.Name)
	if j.rep > 1 {
		name += fmt.Sprintf("~%d", j.rep)
	}
	return filepath.Join(dir, name+".jsonl")
}

// FileName keeps letters, digits, '.', '-' and '_' of a case's name,
// making anything else '_'.
func FileName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && i > 0
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}

// evalCollector notes what the assertions look at as the events go by.
type evalCollector struct {
	job    evalJob
	report Reporter
	calls  []engine.ToolCall
	first  time.Time
	last   time.Time
}

func (c *evalCollector) Emit(ev engine.Event) error {
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		if c.first.IsZero() {
			c.first = ev.Time
		}
	case *engine.Decided:
		c.calls = append(c.calls, d.ToolCalls...)
	case *engine.RunFinished:
		c.last = ev.Time
	}
	c.report.event(c.job, ev)
	return nil
}

// turns runs a case's turns in s, each a custom command's prompt where
// it names one (Expand), until one does not answer: the next would build
// on it.
func (r *Runner) turns(ctx context.Context, eng *engine.Engine, s *engine.Session, turns []string, sinks engine.Sink) (engine.Result, error) {
	var last engine.Result
	for _, task := range turns {
		run := eng
		if r.Expand != nil {
			e, t, _, err := r.Expand(ctx, eng, task)
			if err != nil {
				return last, err
			}
			if task = t; r.ReplayDir == "" {
				run = e
			}
		}
		if last = run.Run(ctx, s, task, sinks); last.StopReason != engine.StopAnswered {
			break
		}
	}
	return last, nil
}

// runOne runs one job in a new session and judges it.
func (r *Runner) runOne(ctx context.Context, j evalJob) *runResult {
	res := &runResult{Repeat: j.rep}
	failed := func(status, format string, a ...any) *runResult {
		res.Status = status
		res.Reasons = append(res.Reasons, fmt.Sprintf(format, a...))
		return res
	}
	cs, status, err := r.setupFor(ctx, j)
	if err != nil {
		return failed(status, "%v", err)
	}
	defer cs.done()
	eng := cs.eng
	journal, err := r.Store.Create()
	if err != nil {
		return failed(Failed, "%v", err)
	}
	res.Session = journal.ID
	journal.SetTitle(fmt.Sprintf("eval: %s / %s", r.Suite.Name, j.label()))
	s := engine.NewSession(journal.ID)
	s.UseSettings(engine.Settings{Origin: "eval"}) // lists mark (and can hide) an eval's sessions
	col := &evalCollector{job: j, report: r.Report}
	var first engine.Sink = journal
	if r.Around != nil {
		first = r.Around(journal)
	}
	sinks := engine.Sinks{first, col}
	for _, f := range j.c.Memory {
		if _, err := s.ChangeMemory(engine.MemoryChanged{Op: engine.MemorySet, Key: f.Key, Value: f.Value, Source: memorySourceEvals}, sinks); err != nil {
			journal.Close()
			return failed(Failed, "memory %s: %v", f.Key, err)
		}
	}
	last, err := r.turns(ctx, eng, s, j.c.Turns, sinks)
	if err != nil {
		journal.Close()
		return failed(Failed, "%v", err)
	}
	closeErr := journal.Close()
	o := &outcome{
		Session: journal.ID, Task: j.c.Turns[len(j.c.Turns)-1], Answer: last.Answer, Stop: last.StopReason,
		Steps: s.Steps, Calls: col.calls, Memory: s.Memory(), Tokens: s.Usage.PromptTokens + s.Usage.CompletionTokens, Usage: s.Usage,
		Duration: col.last.Sub(col.first),
	}
	if col.first.IsZero() || col.last.IsZero() {
		o.Duration = 0
	}
	if last.Err != nil {
		o.Err = last.Err.Error()
	}
	if g := (*engine.GuardrailError)(nil); errors.As(last.Err, &g) {
		o.Guardrail = g.Name
	}
	res.Answer, res.Stop, res.Steps, res.Tokens, res.Duration = o.Answer, string(o.Stop), o.Steps, o.Tokens, o.Duration.Seconds()
	if o.Usage.Priced < o.Usage.Calls {
		res.CostUnknown = true
	} else {
		cost := o.Usage.Cost
		res.Cost = &cost
	}
	res.ReplayedCost = o.Usage.ReplayedCost
	res.Started, res.Finished = col.first, col.last
	if closeErr != nil {
		return failed(Failed, "the session's journal: %v", closeErr)
	}
	var nr *needsRecording
	if errors.As(last.Err, &nr) {
		return failed(NeedsRecording, "%v", nr.err)
	}
	if err := r.record(j, journal.ID, cs.settings); err != nil {
		return failed(Failed, "record: %v", err)
	}
	res.Status = Passed
	r.check(ctx, j.c, o, failed)
	return res
}

// record keeps the journal of job j's session and what it ran with in
// RecordDir, when recording.
func (r *Runner) record(j evalJob, session string, s Settings) error {
	if r.RecordDir == "" {
		return nil
	}
	if err := copyFile(r.Store.JournalPath(session), recordingPath(r.RecordDir, j)); err != nil {
		return err
	}
	return writeSettings(r.RecordDir, j.c, s)
}

// check fails the case c, through failed, for each of its assertions that
// o does not meet, and when it did not answer without saying it may not.
func (r *Runner) check(ctx context.Context, c *Case, o *outcome, failed func(status, format string, a ...any) *runResult) {
	if !c.stopAsserted && o.Stop != engine.StopAnswered {
		why := string(o.Stop)
		if o.Err != "" {
			why += ": " + engine.OneLine(o.Err, 200)
		}
		failed(Failed, "the run did not answer (%s)", why)
	}
	for _, a := range c.Asserts {
		ok, why, err := a.check(ctx, o, r.Judge)
		switch {
		case err != nil:
			failed(Failed, "%s (line %d): could not check: %v", a.Text, a.Line, err)
		case !ok:
			failed(Failed, "%s (line %d): %s", a.Text, a.Line, why)
		}
	}
}

// NewJudge grades answers with model m: it is asked to reply PASS or FAIL
// with a reason.
func NewJudge(m engine.Model) JudgeFunc {
	return func(ctx context.Context, o *outcome, rubric string) (bool, string, error) {
		req := &engine.Request{
			System: "You grade the answer of an AI agent against a rubric. Reply with PASS or FAIL on the first line, " +
				"then one line saying why.",
			Messages: []engine.Message{{Role: engine.RoleUser, Content: fmt.Sprintf(
				"Task:\n%s\n\nThe agent's answer:\n%s\n\nRubric:\n%s\n\nDoes the answer meet the rubric? Reply PASS or FAIL, then why.",
				o.Task, o.Answer, rubric)}},
			Session: o.Session, Run: "judge", Attempt: 1,
		}
		d, err := m.Decide(ctx, req)
		if err != nil {
			return false, "", fmt.Errorf("judge: %w", err)
		}
		return parseVerdict(d.Text)
	}
}

// parseVerdict reads a judge's reply: PASS or FAIL first, the reason after.
func parseVerdict(text string) (bool, string, error) {
	t := strings.TrimSpace(text)
	word := strings.ToUpper(strings.TrimLeft(t, "*_#> `\"'"))
	var pass bool
	switch {
	case strings.HasPrefix(word, "PASS"):
		pass = true
	case strings.HasPrefix(word, "FAIL"):
	default:
		return false, "", fmt.Errorf("judge: the reply does not start with PASS or FAIL: %s", clip(t))
	}
	reason := strings.TrimLeft(t, "*_#> `\"'")[4:]
	reason = strings.TrimSpace(strings.TrimLeft(reason, "*_`\"':.-–— \t\n"))
	if reason == "" {
		reason = "(no reason given)"
	}
	return pass, reason, nil
}
