package ui

import (
	"time"

	"github.com/agentty/agentty/engine"
)

// row is one line of the Timeline: a phase of a step, or a run boundary.
// A sub-run's rows hang under the row of the agent call that started it
// (parent), one level deeper.
type row struct {
	step    int
	phase   engine.Phase
	text    string
	status  string // ok, error, running, paused, cancelled, ...
	dur     time.Duration
	retries int
	call    callKey // the tool call of an act row
	started time.Time

	run    string // the run the row is of
	parent int    // the agent call row it hangs under; -1: none
	depth  int
	// An agent call's row: the agent, the sub-run it started, and whether
	// the sub-run's rows are folded under it (toggled: by the person, and
	// so no longer folded by the console when the sub-run ends).
	agent   string
	sub     *subRun
	folded  bool
	toggled bool
	judge   bool // the row of a guardrail's judge, which has no call
	hook    bool // the row of a hook's run: its status is its decision
	// compact is the compaction a row stands for (its details show it).
	compact *engine.ContextCompacted
	// wf is set on the row of a workflow step, which its calls hang under.
	wf *wfStep
}

// wfStep is what a workflow step's row knows of it: its name, and how it
// ended (nil while it runs).
type wfStep struct {
	name string
	end  *engine.WorkflowStepFinished
}

// subRun is what the Timeline knows of a sub-run: the row it hangs under
// and what its folded call row sums up.
type subRun struct {
	parent       int // the call row; -1: none seen
	steps, tools int
}

// stepPhase keys the newest row of a step's phase (steps are unique in a
// session, sub-runs' too): the step and the phase, in one int.
func stepPhase(step int, phase engine.Phase) int {
	n := 0
	switch phase {
	case engine.Perceive:
		n = 1
	case engine.Decide:
		n = 2
	case engine.Act:
		n = 3
	case engine.Observe:
		n = 4
	}
	return step*8 + n
}

// callKey names a tool call. A call's id is unique only within its
// decision: the offline model and some servers (llama.cpp's "call_0") give
// the same id to a call in every step, so a call is known by its run, its
// step and its id.
type callKey struct {
	run  string
	step int
	id   string
}

func keyOf(ev engine.Event, id string) callKey { return callKey{ev.Run, ev.Step, id} }

// stepDetail is everything the detail view shows of one step.
type stepDetail struct {
	run      string
	agent    string
	step     int
	request  *engine.ModelRequest
	trimmed  *engine.ContextTrimmed
	compacts []*engine.ContextCompacted
	decision *engine.Decided
	usage    *engine.UsageRecorded
	tools    []*engine.ToolFinished
	args     map[string]string
	retries  []*engine.RetryScheduled
	gates    []string // each pause of the step and the person's answer
	hooks    []string // each hook that ran at the step and what it did
	errors   []string
	edited   bool     // the person edited the request of the step's decision
	files    []string // the files the step changed (its checkpoints say)
}

// timeline is the Timeline pane: one row per step and phase as it happens,
// a sub-run's rows under the agent call that started it.
//
// rows are kept in the order they came, so that an index names a row for
// good; order is the order they are shown in (each sub-run's rows after its
// call row, in the order they came, unless folded), rebuilt when a row
// comes under a call or a call is folded, and posOf is a row's place in it
// (-1: folded away). sel is the row under the cursor.
type timeline struct {
	rows          []row
	runFirst      map[string]int // each run's first row (its run_started's)
	sel           int
	follow        bool
	top           int
	width, height int
	details       map[int]*stepDetail
	byCall        map[callKey]int

	calls    map[callRef]int    // the newest row of each call of a run
	agents   map[callKey]string // the agent each decided agent call names
	subs     map[string]*subRun // by sub-run id
	children map[int][]int      // a call row's sub-run rows, in the order they came
	newest   map[int]int        // the newest row of a step's phase, by stepPhase
	order    []int
	posOf    []int
	ordered  bool
	steps    map[string]int // the row of each step of the workflow the last run carries out
	cpStep   map[string]int // the step of each run's last checkpoint

	// The lines view drew, reused until something changes.
	cache    []string
	cacheKey [3]int
	dirty    bool
}

func newTimeline() timeline {
	return timeline{follow: true, details: map[int]*stepDetail{}, byCall: map[callKey]int{}, ordered: true,
		calls: map[callRef]int{}, agents: map[callKey]string{}, subs: map[string]*subRun{}, children: map[int][]int{},
		newest: map[int]int{}, steps: map[string]int{}, runFirst: map[string]int{}}
}

// reserve makes room for the rows of n events (about two rows for three
// events): a long session's resume grows its rows once, not a dozen times,
// each growth a copy of every row.
func (t *timeline) reserve(n int) {
	if n > 64 {
		t.rows = make([]row, 0, n*2/3)
		t.posOf = make([]int, 0, n*2/3)
		t.order = make([]int, 0, n*2/3)
	}
}

func (t *timeline) detail(ev engine.Event) *stepDetail {
	d := t.details[ev.Step]
	if d == nil {
		d = &stepDetail{run: ev.Run, agent: ev.Agent, step: ev.Step, args: map[string]string{}}
		t.details[ev.Step] = d
	}
	return d
}

// add adds a row of ev's run: under the agent call that started it when
// ev is a sub-run's, and returns its index.
func (t *timeline) add(ev engine.Event, r row) int {
	i := len(t.rows)
	r.run, r.parent = ev.Run, -1
	if ev.ParentRun != "" {
		if sub := t.subs[ev.Run]; sub != nil {
			r.parent = sub.parent
		} else if p, ok := t.calls[parentOf(ev)]; ok { // no run_started seen
			r.parent = p
		}
	} else if ev.WorkflowStep != "" && r.call.id != "" {
		// A workflow step's call hangs under the step's row.
		r.parent = t.stepRow(ev)
		i = len(t.rows)
	}
	if r.parent >= 0 {
		r.depth = t.rows[r.parent].depth + 1
		t.children[r.parent] = append(t.children[r.parent], i)
	}
	if r.phase != "" {
		t.newest[stepPhase(r.step, r.phase)] = i
	}
	t.rows = append(t.rows, r)
	switch {
	case r.parent < 0 && t.ordered: // a top-level row comes last
		t.posOf = append(t.posOf, len(t.order))
		t.order = append(t.order, i)
	default:
		t.posOf = append(t.posOf, -1)
		t.ordered = false
	}
	return i
}

// addCall adds the row of a tool call and remembers it as its run's call
// with that id, which a sub-run names as its parent.
func (t *timeline) addCall(ev engine.Event, r row) {
	r.agent = t.agents[r.call]
	i := t.add(ev, r)
	t.byCall[r.call] = i
	t.calls[callRef{ev.Run, r.call.id}] = i
}

// stepRow returns the row of ev's workflow step, adding it (running) when
// the step has none yet.
func (t *timeline) stepRow(ev engine.Event) int {
	if i, ok := t.steps[ev.WorkflowStep]; ok && i < len(t.rows) {
		return i
	}
	name := flatten(ev.WorkflowStep)
	i := t.add(engine.Event{Run: ev.Run, Step: ev.Step}, row{step: ev.Step, text: name, status: "running", started: ev.Time, wf: &wfStep{name: name}})
	t.steps[ev.WorkflowStep] = i
	return i
}

// selected returns the row under the cursor; ok is false when there is
// none.
func (t *timeline) selected() (r row, ok bool) {
	if len(t.shown()) == 0 || t.sel < 0 || t.sel >= len(t.rows) {
		return row{}, false
	}
	return t.rows[t.sel], true
}

// last returns the newest row of a step and phase.
func (t *timeline) last(step int, phase engine.Phase) *row {
	if i, ok := t.newest[stepPhase(step, phase)]; ok {
		return &t.rows[i]
	}
	return nil
}

// callRow returns the row of a tool call, if it has one.
func (t *timeline) callRow(k callKey) *row {
	if i, ok := t.byCall[k]; ok && i < len(t.rows) && t.rows[i].call == k {
		return &t.rows[i]
	}
	return nil
}

// interrupt ends the rows of a run that was interrupted (a resumed session
// whose journal stops mid-run): nothing is running or paused any more.
func (t *timeline) interrupt() {
	for i := range t.rows {
		if t.rows[i].status == "running" || t.rows[i].status == "paused" {
			t.rows[i].status = "interrupted"
		}
	}
	t.dirty = true
}

var phaseIcon = map[engine.Phase]string{engine.Perceive: "◌", engine.Decide: "◆", engine.Act: "⚙", engine.Observe: "◉"}

// followEnd puts the cursor back on the last row and keeps it there as
// rows come (a run starts, or pauses on its newest row).
func (t *timeline) followEnd() {
	t.follow, t.dirty = true, true
}

// shown returns the rows in the order they are shown, and puts the cursor
// on a row that is shown: the last when following, else the row it was on
// or, folded away, the call it is folded under.
func (t *timeline) shown() []int {
	if !t.ordered {
		t.order = t.order[:0]
		for i := range t.posOf {
			t.posOf[i] = -1
		}
		var put func(i int)
		put = func(i int) {
			t.posOf[i] = len(t.order)
			t.order = append(t.order, i)
			if !t.rows[i].folded {
				for _, c := range t.children[i] {
					put(c)
				}
			}
		}
		for i := range t.rows {
			if t.rows[i].parent < 0 {
				put(i)
			}
		}
		t.ordered = true
	}
	switch {
	case len(t.order) == 0:
		t.sel = 0
	case t.follow || t.sel < 0 || t.sel >= len(t.rows):
		t.sel = t.order[len(t.order)-1]
	default:
		for t.posOf[t.sel] < 0 {
			t.sel = t.rows[t.sel].parent
		}
	}
	return t.order
}
