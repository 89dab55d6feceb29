package eval

// The reporting of a suite: its progress (plain or a live table), and its
// results (the summary, JUnit XML, --json).

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentty/agentty/engine"
	"golang.org/x/term"
)

// Reporter shows a suite's progress. Its methods are called from the
// runs' goroutines, concurrently.
type Reporter interface {
	start(runs int)
	runStarted(j evalJob)
	event(j evalJob, ev engine.Event)
	// runFinished reports a run; c is its case when this run was the
	// case's last, with its verdict, else nil.
	runFinished(j evalJob, r *runResult, c *CaseResult)
	done()
}

// caseLine is a finished case on one line.
func caseLine(c *CaseResult) string {
	mark := map[string]string{Passed: "PASS ", Failed: "FAIL ", NeedsRecording: "STALE", Skipped: "SKIP "}[c.Status]
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s", mark, c.Name)
	if c.Repeat > 1 {
		fmt.Fprintf(&b, "  %d/%d passed (min %g)", c.Passed, c.Repeat, c.MinPass)
	}
	if c.Flaky {
		b.WriteString("  flaky")
	}
	if c.Status == NeedsRecording {
		b.WriteString("  needs a new recording")
	}
	if c.Repeat == 1 && c.Status != Skipped {
		r := c.Runs[0]
		fmt.Fprintf(&b, "  (%d %s, %s)", r.Steps, engine.Plural(r.Steps, "step"), secs(r.Duration))
	}
	return b.String()
}

func secs(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}

// plainReporter prints a line per finished case: for logs and pipes.
// NewPlainReporter reports a line per case on w, for a pipe or a file.
func NewPlainReporter(w io.Writer) Reporter { return &plainReporter{w: w} }

type plainReporter struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *plainReporter) start(int)                   {}
func (p *plainReporter) runStarted(evalJob)          {}
func (p *plainReporter) event(evalJob, engine.Event) {}
func (p *plainReporter) done()                       {}

func (p *plainReporter) runFinished(_ evalJob, _ *runResult, c *CaseResult) {
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
	// sanitize makes foreign text safe for the terminal.
	sanitize func(string) string
}

type liveRun struct {
	started time.Time
	step    int
}

// NewLiveReporter is a reporter for a terminal, w: a table of the runs
// going on, redrawn as they go. sanitize makes the foreign text it shows
// (case names, errors) safe for the terminal.
func NewLiveReporter(w io.Writer, sanitize func(string) string) *liveReporter {
	l := &liveReporter{w: w, width: 80, running: map[string]*liveRun{}, sanitize: sanitize}
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

func (l *liveReporter) runFinished(j evalJob, r *runResult, c *CaseResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended++
	switch r.Status {
	case Passed:
		l.passed++
	case Skipped:
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
		b.WriteString(l.line(line))
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
		fmt.Fprintf(&b, "%s\n", l.line(fmt.Sprintf("  ▸ %-40s step %-3d %s", label, r.step, time.Since(r.started).Round(100*time.Millisecond))))
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

// line makes a line of foreign text safe for the terminal, one line cut
// to the width.
func (l *liveReporter) line(s string) string {
	return engine.Clip(l.sanitize(strings.ReplaceAll(s, "\n", " ")), l.width)
}

// junit writes the results as JUnit XML: one testsuite, a testcase per
// case (its repeats together), with a failure, error (a stale recording)
// or skipped element, and the sessions in system-out.
func WriteJUnit(w io.Writer, s *Suite, results []*CaseResult, took time.Duration, at time.Time) error {
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
		case Failed:
			ts.Failures++
			tc.Failure = &failure{Message: failMessage(c), Type: "assertion", Text: strings.Join(caseReasons(c), "\n")}
		case NeedsRecording:
			ts.Errors++
			tc.Error = &failure{Message: "needs a new recording", Type: "needs_recording", Text: strings.Join(caseReasons(c), "\n")}
		case Skipped:
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
func failMessage(c *CaseResult) string {
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
func caseReasons(c *CaseResult) []string {
	var out []string
	for _, r := range c.Runs {
		if r.Status == Passed || r.Status == Skipped {
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

// Report is the --json output.
type Report struct {
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
	Cases       []*CaseResult `json:"cases"`
}

// Tally counts the cases by status.
func Tally(results []*CaseResult) (rep Report) {
	for _, c := range results {
		switch c.Status {
		case Passed:
			rep.Passed++
		case Failed:
			rep.Failed++
		case NeedsRecording:
			rep.Stale++
		case Skipped:
			rep.Skipped++
		}
		if c.Flaky {
			rep.Flaky++
		}
	}
	return rep
}

// WriteSummary prints the counts, then each case that did not pass with
// its reasons and the sessions to open.
func WriteSummary(w io.Writer, results []*CaseResult, took time.Duration) {
	t := Tally(results)
	var bad []*CaseResult
	for _, c := range results {
		if c.Status != Passed || c.Flaky {
			bad = append(bad, c)
		}
	}
	for _, c := range bad {
		head := map[string]string{Failed: "FAILED", NeedsRecording: "NEEDS A NEW RECORDING", Skipped: "SKIPPED", Passed: "FLAKY (passed)"}[c.Status]
		fmt.Fprintf(w, "\n%s: %s", head, c.Name)
		if c.Repeat > 1 {
			fmt.Fprintf(w, " (%d of %d runs passed, min_pass %g)", c.Passed, c.Repeat, c.MinPass)
		}
		fmt.Fprintln(w)
		for _, r := range c.Runs {
			if r.Status == Passed || r.Status == Skipped {
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
