package main

// Running a suite: each case (each repeat) a real run in its own journaled
// session, in parallel up to the concurrency; verdicts with repeat and
// min_pass; recordings kept and replayed.

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/replay"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/ui"
	"golang.org/x/term"
)

// Run and case statuses.
const (
	evalPass          = "passed"
	evalFail          = "failed"
	evalNeedsRecord   = "needs_recording"
	evalSkipped       = "skipped"
	evalFlakyNote     = "flaky"
	memorySourceEvals = "eval"
)

// evalRunner runs a suite's cases.
type evalRunner struct {
	// around puts the trace and NATS sinks, if any, after a case's journal
	// (setup.withTrace); nil: the journal alone.
	around func(journal engine.Sink) engine.Sink
	suite  *evalSuite
	cases  []*evalCase // those the filter kept
	// eng runs the cases live; replaying, each case gets an engine of cfg
	// with its recording in place of the model.
	eng         *engine.Engine
	cfg         engine.Config
	store       *sessions.Store
	judge       judgeFunc
	recordDir   string
	replayDir   string
	concurrency int
	failFast    bool
	report      evalReporter
}

// evalJob is one run of a case: its repeat, from 1.
type evalJob struct {
	c   *evalCase
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
	Repeat   int      `json:"repeat"`
	Session  string   `json:"session,omitempty"`
	Status   string   `json:"status"`
	Reasons  []string `json:"reasons,omitempty"`
	Answer   string   `json:"answer,omitempty"`
	Stop     string   `json:"stop_reason,omitempty"`
	Steps    int      `json:"steps"`
	Tokens   int      `json:"tokens"`
	Duration float64  `json:"duration_s"`
	// Started and Finished are the times of the run's first and last
	// journaled events (zero when it did not run).
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
}

// caseResult is a case's verdict over its runs.
type caseResult struct {
	c       *evalCase
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
func (c *caseResult) Time() float64 {
	t := 0.0
	for _, r := range c.Runs {
		t += r.Duration
	}
	return t
}

// verdict sets the case's status from its runs, once all are in.
func (c *caseResult) verdict() {
	var pass, fail, skip, needs int
	for _, r := range c.Runs {
		switch r.Status {
		case evalPass:
			pass++
		case evalSkipped:
			skip++
		case evalNeedsRecord:
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
		c.Status = evalNeedsRecord
	case skip == c.Repeat:
		c.Status = evalSkipped
	case !enough(pass + skip):
		c.Status = evalFail
	case skip > 0:
		c.Status = evalSkipped
	case enough(pass):
		c.Status = evalPass
	default:
		c.Status = evalFail
	}
}

// lost reports whether the case can no longer pass, whatever its other
// runs do.
func (c *caseResult) lost() bool {
	var pass, open int
	for _, r := range c.Runs {
		switch r.Status {
		case evalNeedsRecord:
			return true
		case evalPass, "":
			pass++ // an open run may still pass
			if r.Status == "" {
				open++
			}
		}
	}
	return float64(pass) < c.MinPass*float64(c.Repeat)-1e-9
}

// run runs every case and returns their results, in file order.
func (r *evalRunner) run(ctx context.Context) []*caseResult {
	results := make([]*caseResult, len(r.cases))
	var jobs []evalJob
	for i, c := range r.cases {
		results[i] = &caseResult{c: c, Name: c.Name, Repeat: c.Repeat, MinPass: c.MinPass, Runs: make([]*runResult, c.Repeat)}
		for rep := 1; rep <= c.Repeat; rep++ {
			results[i].Runs[rep-1] = &runResult{Repeat: rep}
			jobs = append(jobs, evalJob{c, rep})
		}
	}
	byCase := map[*evalCase]*caseResult{}
	for _, cr := range results {
		byCase[cr.c] = cr
	}
	r.report.start(len(jobs))
	var (
		mu      sync.Mutex // guards the results' runs and done counts
		stopped atomic.Bool
		wg      sync.WaitGroup
	)
	queue := make(chan evalJob)
	for range max(1, r.concurrency) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				cr := byCase[j.c]
				var res *runResult
				if stopped.Load() || ctx.Err() != nil {
					res = &runResult{Repeat: j.rep, Status: evalSkipped, Reasons: []string{"not run: --fail-fast stopped the suite"}}
					if ctx.Err() != nil {
						res.Reasons = []string{"not run: cancelled"}
					}
				} else {
					r.report.runStarted(j)
					res = r.runOne(ctx, j)
				}
				mu.Lock()
				cr.Runs[j.rep-1] = res
				cr.done++
				complete := cr.done == cr.Repeat
				if complete {
					cr.verdict()
				}
				if r.failFast && res.Status != evalSkipped && cr.lost() {
					stopped.Store(true)
				}
				mu.Unlock()
				var whole *caseResult
				if complete {
					whole = cr
				}
				r.report.runFinished(j, res, whole)
			}
		}()
	}
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	wg.Wait()
	r.report.done()
	return results
}

// needsRecording marks a replayed decision that the recording cannot give:
// the request changed, or there is no such decision.
type needsRecording struct{ err error }

func (e *needsRecording) Error() string { return e.err.Error() }
func (e *needsRecording) Unwrap() error { return e.err }

// recordingModel plays a recording and marks its failures as needing a
// new recording.
type recordingModel struct{ m replay.Model }

func (m recordingModel) Decide(ctx context.Context, req *engine.Request) (engine.Decision, error) {
	d, err := m.m.Decide(ctx, req)
	if err != nil {
		return d, engine.Permanent(&needsRecording{err})
	}
	return d, nil
}

// recordingPath is where a case's run is recorded: DIR/CASE.jsonl, and
// DIR/CASE~N.jsonl for the Nth repeat after the first ('~' is in no
// case's file name, so no repeat can take another case's recording).
func recordingPath(dir string, j evalJob) string {
	name := safeFileName(j.c.Name)
	if j.rep > 1 {
		name += fmt.Sprintf("~%d", j.rep)
	}
	return filepath.Join(dir, name+".jsonl")
}

// safeFileName keeps letters, digits, '.', '-' and '_' of a case's name,
// making anything else '_'.
func safeFileName(s string) string {
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
	report evalReporter
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

// runOne runs one job in a new session and judges it.
func (r *evalRunner) runOne(ctx context.Context, j evalJob) *runResult {
	res := &runResult{Repeat: j.rep}
	failed := func(status, format string, a ...any) *runResult {
		res.Status = status
		res.Reasons = append(res.Reasons, fmt.Sprintf(format, a...))
		return res
	}
	eng := r.eng
	if r.replayDir != "" {
		path := recordingPath(r.replayDir, j)
		l, err := readRecording(path)
		if err != nil {
			return failed(evalNeedsRecord, "%v", err)
		}
		cfg := r.cfg
		cfg.Model = recordingModel{replay.NewModel(replay.FromEvents(l))}
		cfg.ModelName = "replay of " + filepath.Base(path)
		cfg.Agents = append([]engine.Agent(nil), cfg.Agents...)
		for i := range cfg.Agents {
			cfg.Agents[i].Model = cfg.Model // the agents' decisions are in the one recording too
		}
		if cfg.Compact.Model != nil {
			cfg.Compact.Model = cfg.Model
		}
		eng = engine.New(cfg)
		if err := eng.Err(); err != nil {
			return failed(evalFail, "%v", err)
		}
	}
	journal, err := r.store.Create()
	if err != nil {
		return failed(evalFail, "%v", err)
	}
	res.Session = journal.ID
	journal.SetTitle(fmt.Sprintf("eval: %s / %s", r.suite.Name, j.label()))
	s := engine.NewSession(journal.ID)
	col := &evalCollector{job: j, report: r.report}
	var first engine.Sink = journal
	if r.around != nil {
		first = r.around(journal)
	}
	sinks := engine.Sinks{first, col}
	for _, f := range j.c.Memory {
		if _, err := s.ChangeMemory(engine.MemoryChanged{Op: engine.MemorySet, Key: f.Key, Value: f.Value, Source: memorySourceEvals}, sinks); err != nil {
			journal.Close()
			return failed(evalFail, "memory %s: %v", f.Key, err)
		}
	}
	var last engine.Result
	for _, task := range j.c.Turns {
		last = eng.Run(ctx, s, task, sinks)
		if last.StopReason != engine.StopAnswered {
			break // the next turns would build on a run that did not answer
		}
	}
	closeErr := journal.Close()
	o := &outcome{
		Session: journal.ID, Task: j.c.Turns[len(j.c.Turns)-1], Answer: last.Answer, Stop: last.StopReason,
		Steps: s.Steps, Calls: col.calls, Memory: s.Memory(), Tokens: s.Usage.PromptTokens + s.Usage.CompletionTokens,
		Duration: col.last.Sub(col.first),
	}
	if col.first.IsZero() || col.last.IsZero() {
		o.Duration = 0
	}
	if last.Err != nil {
		o.Err = last.Err.Error()
	}
	res.Answer, res.Stop, res.Steps, res.Tokens, res.Duration = o.Answer, string(o.Stop), o.Steps, o.Tokens, o.Duration.Seconds()
	res.Started, res.Finished = col.first, col.last
	if closeErr != nil {
		return failed(evalFail, "the session's journal: %v", closeErr)
	}
	var nr *needsRecording
	if errors.As(last.Err, &nr) {
		return failed(evalNeedsRecord, "%v", nr.err)
	}
	if r.recordDir != "" {
		if err := copyFile(r.store.JournalPath(journal.ID), recordingPath(r.recordDir, j)); err != nil {
			return failed(evalFail, "record: %v", err)
		}
	}
	res.Status = evalPass
	if !j.c.stopAsserted && o.Stop != engine.StopAnswered {
		why := string(o.Stop)
		if o.Err != "" {
			why += ": " + engine.OneLine(o.Err, 200)
		}
		failed(evalFail, "the run did not answer (%s)", why)
	}
	for _, a := range j.c.Asserts {
		ok, why, err := a.check(ctx, o, r.judge)
		switch {
		case err != nil:
			failed(evalFail, "%s (line %d): could not check: %v", a.Text, a.Line, err)
		case !ok:
			failed(evalFail, "%s (line %d): %s", a.Text, a.Line, why)
		}
	}
	return res
}

// readRecording reads a recorded journal.
func readRecording(path string) ([]engine.Event, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no recording at %s (record it with --record)", path)
	}
	if err != nil {
		return nil, err
	}
	l := sessions.Read(b, path, "recording")
	if l.Corrupt != nil {
		return nil, fmt.Errorf("recording: %v", l.Corrupt)
	}
	return l.Events, nil
}

// copyFile copies src to dst, replacing dst atomically.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".rec-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// newJudge grades answers with model m: it is asked to reply PASS or FAIL
// with a reason.
func newJudge(m engine.Model) judgeFunc {
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

// evalReporter shows a suite's progress. Its methods are called from the
// runs' goroutines, concurrently.
type evalReporter interface {
	start(runs int)
	runStarted(j evalJob)
	event(j evalJob, ev engine.Event)
	// runFinished reports a run; c is its case when this run was the
	// case's last, with its verdict, else nil.
	runFinished(j evalJob, r *runResult, c *caseResult)
	done()
}

// caseLine is a finished case on one line.
func caseLine(c *caseResult) string {
	mark := map[string]string{evalPass: "PASS ", evalFail: "FAIL ", evalNeedsRecord: "STALE", evalSkipped: "SKIP "}[c.Status]
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s", mark, c.Name)
	if c.Repeat > 1 {
		fmt.Fprintf(&b, "  %d/%d passed (min %g)", c.Passed, c.Repeat, c.MinPass)
	}
	if c.Flaky {
		b.WriteString("  flaky")
	}
	if c.Status == evalNeedsRecord {
		b.WriteString("  needs a new recording")
	}
	if c.Repeat == 1 && c.Status != evalSkipped {
		r := c.Runs[0]
		fmt.Fprintf(&b, "  (%d %s, %s)", r.Steps, plural(r.Steps, "step"), secs(r.Duration))
	}
	return b.String()
}

func secs(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}

// plainReporter prints a line per finished case: for logs and pipes.
type plainReporter struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *plainReporter) start(int)                   {}
func (p *plainReporter) runStarted(evalJob)          {}
func (p *plainReporter) event(evalJob, engine.Event) {}
func (p *plainReporter) done()                       {}

func (p *plainReporter) runFinished(_ evalJob, _ *runResult, c *caseResult) {
	if c == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, caseLine(c))
}

// liveReporter draws, on a terminal, the finished cases as lines that
// stay, and below them a table of the runs going on with a progress bar,
// redrawn as the runs go.
type liveReporter struct {
	mu      sync.Mutex // guards everything below
	w       io.Writer  // the terminal, unsanitized: names are sanitized here
	width   int
	total   int
	ended   int
	passed  int
	failed  int
	running map[string]*liveRun // by label
	order   []string            // labels in the order they started
	drawn   int                 // lines of the table last drawn
	stop    chan struct{}
	stopped chan struct{}
}

type liveRun struct {
	started time.Time
	step    int
}

func newLiveReporter(w io.Writer) *liveReporter {
	l := &liveReporter{w: w, width: 80, running: map[string]*liveRun{}}
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 20 {
			l.width = cols - 1
		}
	}
	return l
}

func (l *liveReporter) start(total int) {
	l.mu.Lock()
	l.total = total
	l.stop, l.stopped = make(chan struct{}), make(chan struct{})
	l.draw("")
	l.mu.Unlock()
	go func() { // the elapsed times tick on
		defer close(l.stopped)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				l.mu.Lock()
				l.draw("")
				l.mu.Unlock()
			}
		}
	}()
}

func (l *liveReporter) runStarted(j evalJob) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running[j.label()] = &liveRun{started: time.Now()}
	l.order = append(l.order, j.label())
	l.draw("")
}

func (l *liveReporter) event(j evalJob, ev engine.Event) {
	if ev.Kind != engine.KindStepStarted {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.running[j.label()]; r != nil {
		r.step = ev.Step
	}
}

func (l *liveReporter) runFinished(j evalJob, r *runResult, c *caseResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended++
	switch r.Status {
	case evalPass:
		l.passed++
	case evalSkipped:
	default:
		l.failed++
	}
	delete(l.running, j.label())
	if i := slices.Index(l.order, j.label()); i >= 0 {
		l.order = append(l.order[:i], l.order[i+1:]...)
	}
	line := ""
	if c != nil {
		line = caseLine(c)
	}
	l.draw(line)
}

func (l *liveReporter) done() {
	close(l.stop)
	<-l.stopped
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	l.drawn = 0
}

// clear takes the table away; l.mu is held.
func (l *liveReporter) clear() {
	if l.drawn > 0 {
		fmt.Fprintf(l.w, "\x1b[%dA\x1b[J", l.drawn)
	}
}

// draw redraws the table, printing line above it first; l.mu is held.
func (l *liveReporter) draw(line string) {
	var b strings.Builder
	if l.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", l.drawn)
	}
	if line != "" {
		b.WriteString(sanitizeLine(line, l.width))
		b.WriteString("\n")
	}
	const most = 8
	n := 0
	for _, label := range l.order {
		if n == most {
			fmt.Fprintf(&b, "  … and %d more running\n", len(l.order)-most)
			n++
			break
		}
		r := l.running[label]
		fmt.Fprintf(&b, "%s\n", sanitizeLine(fmt.Sprintf("  ▸ %-40s step %-3d %s", label, r.step, time.Since(r.started).Round(100*time.Millisecond)), l.width))
		n++
	}
	const barWidth = 30
	fill := 0
	if l.total > 0 {
		fill = barWidth * l.ended / l.total
	}
	fmt.Fprintf(&b, "[%s%s] %d/%d runs  %d passed  %d failed\n", strings.Repeat("█", fill), strings.Repeat("░", barWidth-fill), l.ended, l.total, l.passed, l.failed)
	l.drawn = n + 1
	io.WriteString(l.w, b.String())
}

// sanitizeLine makes a line of foreign text safe for the terminal, one
// line cut to width.
func sanitizeLine(s string, width int) string {
	return engine.Clip(ui.Sanitize(strings.ReplaceAll(s, "\n", " ")), width)
}

// junit writes the results as JUnit XML: one testsuite, a testcase per
// case (its repeats together), with a failure, error (a stale recording)
// or skipped element, and the sessions in system-out.
func writeJUnit(w io.Writer, s *evalSuite, results []*caseResult, took time.Duration, at time.Time) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	type skipped struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Error     *failure `xml:"error,omitempty"`
		Skipped   *skipped `xml:"skipped,omitempty"`
		SystemOut string   `xml:"system-out,omitempty"`
	}
	type testsuite struct {
		XMLName   xml.Name   `xml:"testsuite"`
		Name      string     `xml:"name,attr"`
		Tests     int        `xml:"tests,attr"`
		Failures  int        `xml:"failures,attr"`
		Errors    int        `xml:"errors,attr"`
		Skipped   int        `xml:"skipped,attr"`
		Time      string     `xml:"time,attr"`
		Timestamp string     `xml:"timestamp,attr"`
		Testcases []testcase `xml:"testcase"`
	}
	type testsuites struct {
		XMLName  xml.Name    `xml:"testsuites"`
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Time     string      `xml:"time,attr"`
		Suites   []testsuite `xml:"testsuite"`
	}
	ts := testsuite{Name: s.Name, Time: fmt.Sprintf("%.3f", took.Seconds()), Timestamp: at.UTC().Format("2006-01-02T15:04:05")}
	for _, c := range results {
		tc := testcase{Name: c.Name, Classname: s.Name, Time: fmt.Sprintf("%.3f", c.Time())}
		var out []string
		for _, r := range c.Runs {
			if r.Session != "" {
				out = append(out, fmt.Sprintf("run %d: %s, session %s (agentty --resume %s)", r.Repeat, r.Status, r.Session, r.Session))
			}
		}
		if c.Flaky {
			out = append(out, fmt.Sprintf("flaky: %d of %d runs passed (min_pass %g)", c.Passed, c.Repeat, c.MinPass))
		}
		tc.SystemOut = strings.Join(out, "\n")
		switch c.Status {
		case evalFail:
			ts.Failures++
			tc.Failure = &failure{Message: failMessage(c), Type: "assertion", Text: strings.Join(caseReasons(c), "\n")}
		case evalNeedsRecord:
			ts.Errors++
			tc.Error = &failure{Message: "needs a new recording", Type: "needs_recording", Text: strings.Join(caseReasons(c), "\n")}
		case evalSkipped:
			ts.Skipped++
			tc.Skipped = &skipped{Message: "not run: --fail-fast stopped the suite"}
		}
		ts.Testcases = append(ts.Testcases, tc)
	}
	ts.Tests = len(ts.Testcases)
	all := testsuites{Name: "agentty eval", Tests: ts.Tests, Failures: ts.Failures, Errors: ts.Errors, Skipped: ts.Skipped, Time: ts.Time, Suites: []testsuite{ts}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// failMessage is a failed case's reason in one line.
func failMessage(c *caseResult) string {
	if c.Repeat > 1 {
		m := fmt.Sprintf("%d of %d runs passed, %g needed", c.Passed, c.Repeat, c.MinPass)
		if c.Flaky {
			m = "flaky: " + m
		}
		return m
	}
	if rs := caseReasons(c); len(rs) > 0 {
		return engine.OneLine(rs[0], 200)
	}
	return "failed"
}

// caseReasons are the reasons of the case's runs that did not pass, each
// prefixed with its run when there are repeats.
func caseReasons(c *caseResult) []string {
	var out []string
	for _, r := range c.Runs {
		if r.Status == evalPass || r.Status == evalSkipped {
			continue
		}
		for _, why := range r.Reasons {
			if c.Repeat > 1 {
				why = fmt.Sprintf("run %d: %s", r.Repeat, why)
			}
			out = append(out, why)
		}
	}
	return out
}

// evalReport is the --json output.
type evalReport struct {
	Suite       string        `json:"suite"`
	File        string        `json:"file"`
	Description string        `json:"description,omitempty"`
	Model       string        `json:"model"`
	Passed      int           `json:"passed"`
	Failed      int           `json:"failed"`
	Flaky       int           `json:"flaky"`
	Stale       int           `json:"needs_recording"`
	Skipped     int           `json:"skipped"`
	DurationS   float64       `json:"duration_s"`
	Cases       []*caseResult `json:"cases"`
}

// tally counts the cases by status.
func tally(results []*caseResult) (rep evalReport) {
	for _, c := range results {
		switch c.Status {
		case evalPass:
			rep.Passed++
		case evalFail:
			rep.Failed++
		case evalNeedsRecord:
			rep.Stale++
		case evalSkipped:
			rep.Skipped++
		}
		if c.Flaky {
			rep.Flaky++
		}
	}
	return rep
}

// writeSummary prints the counts, then each case that did not pass with
// its reasons and the sessions to open.
func writeSummary(w io.Writer, results []*caseResult, took time.Duration) {
	t := tally(results)
	var bad []*caseResult
	for _, c := range results {
		if c.Status != evalPass || c.Flaky {
			bad = append(bad, c)
		}
	}
	for _, c := range bad {
		head := map[string]string{evalFail: "FAILED", evalNeedsRecord: "NEEDS A NEW RECORDING", evalSkipped: "SKIPPED", evalPass: "FLAKY (passed)"}[c.Status]
		fmt.Fprintf(w, "\n%s: %s", head, c.Name)
		if c.Repeat > 1 {
			fmt.Fprintf(w, " (%d of %d runs passed, min_pass %g)", c.Passed, c.Repeat, c.MinPass)
		}
		fmt.Fprintln(w)
		for _, r := range c.Runs {
			if r.Status == evalPass || r.Status == evalSkipped {
				continue
			}
			prefix := "  "
			if c.Repeat > 1 {
				fmt.Fprintf(w, "  run %d:\n", r.Repeat)
				prefix = "    "
			}
			for _, why := range r.Reasons {
				fmt.Fprintf(w, "%s- %s\n", prefix, why)
			}
			if r.Session != "" {
				fmt.Fprintf(w, "%sopen it: agentty --resume %s\n", prefix, r.Session)
			}
		}
	}
	fmt.Fprintf(w, "\n%d passed, %d failed", t.Passed, t.Failed)
	if t.Flaky > 0 {
		fmt.Fprintf(w, ", %d flaky", t.Flaky)
	}
	if t.Stale > 0 {
		fmt.Fprintf(w, ", %d need a new recording", t.Stale)
	}
	if t.Skipped > 0 {
		fmt.Fprintf(w, ", %d skipped", t.Skipped)
	}
	fmt.Fprintf(w, " in %s\n", took.Round(time.Millisecond))
}
