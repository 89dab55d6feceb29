package engine

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// ReasonBreak: a breakpoint's condition hit (GatePaused.Break names it).
const ReasonBreak PauseReason = "break"

// Break is one breakpoint: a condition a run stops at, as step mode does,
// wherever it holds (a sub-run, a workflow's step, a remote run). Parse one
// with ParseBreak.
type Break struct {
	cond string // as written, trimmed
	kind string
	arg  string
	n    int
	re   *regexp.Regexp
}

// BreakSyntax lists the conditions a breakpoint may have.
const BreakSyntax = "tool=GLOB, agent=NAME, step=N, error, text=/REGEXP/, tokens>N, workflow_step=NAME"

// ParseBreak reads a breakpoint's condition:
//
//	tool=GLOB           before a call of a tool whose name matches (fs__*)
//	agent=NAME          before the first decision of a run as that agent
//	step=N              before the decision of step N
//	error               after a tool error, a timeout or a retry: at the next pause
//	text=/REGEXP/       after a tool result or the model's text matches: at the
//	                    next pause (before the answer, for an answer)
//	tokens>N            before a decision whose request holds over N tokens
//	workflow_step=NAME  before a workflow's step runs
func ParseBreak(s string) (Break, error) {
	s = strings.TrimSpace(s)
	b := Break{cond: s}
	bad := func(why string) (Break, error) {
		return Break{}, fmt.Errorf("breakpoint %q: %s (the conditions are %s)", s, why, BreakSyntax)
	}
	if s == "error" {
		b.kind = "error"
		return b, nil
	}
	if k, v, ok := strings.Cut(s, ">"); ok && strings.TrimSpace(k) == "tokens" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return bad("tokens> wants a number of tokens")
		}
		b.kind, b.n = "tokens", n
		return b, nil
	}
	k, v, ok := strings.Cut(s, "=")
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !ok || v == "" {
		return bad("no condition")
	}
	b.kind, b.arg = k, v
	switch k {
	case "tool":
		if _, err := path.Match(v, ""); err != nil {
			return bad("a bad glob")
		}
	case "agent", "workflow_step":
	case "step":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return bad("step= wants a step number from 1")
		}
		b.n = n
	case "text":
		if len(v) >= 2 && v[0] == '/' && v[len(v)-1] == '/' {
			v = v[1 : len(v)-1]
		}
		re, err := regexp.Compile(v)
		if err != nil {
			return bad("a bad regular expression: " + err.Error())
		}
		b.re = re
	default:
		return bad("unknown condition " + strconv.Quote(k))
	}
	return b, nil
}

// String is the condition as it was written.
func (b Break) String() string { return b.cond }

// Breakpoints are the conditions a gate stops runs at.
type Breakpoints struct {
	List []Break
	// StepOf names the workflow step a pause belongs to ("" for none), for
	// workflow_step=NAME; nil: no pause belongs to one.
	StepOf func(Pending) string
}

// Breaker is a Gate with breakpoints: the engine asks it for the current
// ones of a session's runs at each pause it could make and after each tool
// result, and pauses where one holds, whether or not Stop would.
type Breaker interface {
	Breakpoints(session string) *Breakpoints
}

// before is the condition that holds before p ("" for none): tokens is the
// size of the request about to be sent, entered whether p is the first
// decision of the run as its agent.
func (bs *Breakpoints) before(p *Pending, tokens int, entered bool) string {
	for i := range bs.List {
		b := &bs.List[i]
		hit := false
		switch b.kind {
		case "tool":
			hit = p.ToolCall != nil && p.Question == nil && globMatch(b.arg, p.ToolCall.Name)
		case "agent":
			hit = p.At == Decide && entered && p.Agent == b.arg
		case "step":
			hit = p.At == Decide && p.Step == b.n
		case "tokens":
			hit = p.At == Decide && tokens > b.n
		case "workflow_step":
			hit = bs.StepOf != nil && p.ParentRun == "" && p.ToolCall != nil && bs.StepOf(*p) == b.arg
		}
		if hit {
			return b.cond
		}
	}
	return ""
}

// after is the condition that an event's outcome meets ("" for none): a
// failure, or text.
func (bs *Breakpoints) after(text string, failed bool) string {
	for i := range bs.List {
		b := &bs.List[i]
		if b.kind == "error" && failed || b.kind == "text" && text != "" && b.re.MatchString(text) {
			return b.cond
		}
	}
	return ""
}

func globMatch(glob, name string) bool {
	ok, _ := path.Match(glob, name)
	return ok
}

// breakBefore is the breakpoint that stops the run at p ("" for none): one
// an earlier event met (at the run's first pause after it), else one that
// holds before p.
func (r *run) breakBefore(p *Pending) string {
	bs := r.breakpoints()
	if bs == nil {
		r.brkHit = ""
		return ""
	}
	entered := false
	if p.At == Decide {
		entered = !r.brkSeen || r.brkAgent != r.prof.agent
		r.brkSeen, r.brkAgent = true, r.prof.agent
	}
	if h := r.brkHit; h != "" {
		r.brkHit = ""
		return h
	}
	return bs.before(p, r.reqTokens, entered)
}

// breakpoints are the gate's breakpoints for this run's session, nil for
// none.
func (r *run) breakpoints() *Breakpoints {
	if r.e.brk == nil {
		return nil
	}
	bs := r.e.brk.Breakpoints(r.root.ID)
	if bs == nil || len(bs.List) == 0 {
		return nil
	}
	return bs
}

// observeBreak notes an event that meets a breakpoint's condition: the run
// stops at its next pause.
func (r *run) observeBreak(data any) {
	var text string
	failed := false
	switch d := data.(type) {
	case *ToolFinished:
		text, failed = d.Result, d.Status == ToolError
	case *RetryScheduled:
		failed = true
	case *Decided:
		text = d.Text
	default:
		return
	}
	if r.brkHit != "" {
		return
	}
	if bs := r.breakpoints(); bs != nil {
		r.brkHit = bs.after(text, failed)
	}
}
