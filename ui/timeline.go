package ui

import (
	"fmt"
	"strings"
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
	errors   []string
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

	// The lines view drew, reused until something changes.
	cache    []string
	cacheKey [3]int
	dirty    bool
}

func newTimeline() timeline {
	return timeline{follow: true, details: map[int]*stepDetail{}, byCall: map[callKey]int{}, ordered: true,
		calls: map[callRef]int{}, agents: map[callKey]string{}, subs: map[string]*subRun{}, children: map[int][]int{},
		newest: map[int]int{}, steps: map[string]int{}}
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

func (t *timeline) apply(ev engine.Event) {
	if ev.Kind == engine.KindTextDelta {
		return // the chat shows those
	}
	t.dirty = true
	sub := t.subs[ev.Run]
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		text := "▶ " + engine.OneLine(d.Task, 60)
		if ev.ParentRun != "" && sub == nil { // a continued sub-run stays where it was
			p, ok := t.calls[parentOf(ev)]
			if !ok {
				p = -1
				text = "▶ " + ev.Agent + ": " + engine.OneLine(d.Task, 60)
			}
			t.subs[ev.Run] = &subRun{parent: p}
			if p >= 0 {
				t.rows[p].sub = t.subs[ev.Run]
			}
		}
		t.add(ev, row{step: ev.Step, text: text, status: "run"})
	case *engine.Handoff:
		t.add(ev, row{step: ev.Step, text: "⇄ handed off to " + d.To, status: "handoff"})
	case *engine.WorkflowStarted:
		t.steps = map[string]int{}
	case *engine.WorkflowStepFinished:
		if ev.ParentRun != "" || d.Step == "" {
			break
		}
		ev.WorkflowStep = d.Step
		_, had := t.steps[ev.WorkflowStep]
		r := &t.rows[t.stepRow(ev)]
		r.wf.end, r.status = d, d.Status
		if had {
			r.dur = since(r.started, ev.Time)
		}
	case *engine.StepStarted:
		if sub != nil {
			sub.steps++
		}
		t.add(ev, row{step: ev.Step, phase: engine.Perceive, status: "running", started: ev.Time})
	case *engine.ModelRequest:
		t.detail(ev).request = d
		if r := t.last(ev.Step, engine.Perceive); r != nil {
			r.text = fmt.Sprintf("%d msg%s, %d tok", d.Messages, plural(d.Messages), d.Tokens)
			r.status, r.dur = "ok", since(r.started, ev.Time)
		}
		t.add(ev, row{step: ev.Step, phase: engine.Decide, text: "thinking", status: "running", started: ev.Time})
	case *engine.ContextTrimmed:
		t.detail(ev).trimmed = d
	case *engine.ContextCompacted:
		dt := t.detail(ev)
		dt.compacts = append(dt.compacts, d)
		status := "auto"
		if d.Manual {
			status = "manual"
		}
		t.add(ev, row{step: ev.Step, text: "compacted", status: status, compact: d})
	case *engine.RetryScheduled:
		dt := t.detail(ev)
		dt.retries = append(dt.retries, d)
		phase := engine.Decide
		if d.Op != "model" {
			phase = engine.Act
		}
		if r := t.last(ev.Step, phase); r != nil {
			r.retries++
		}
	case *engine.Decided:
		t.detail(ev).decision = d
		if sub != nil {
			sub.tools += len(d.ToolCalls)
		}
		for _, c := range d.ToolCalls {
			if c.Name == agentTool {
				t.agents[keyOf(ev, c.ID)], _ = delegation(c.Args)
			}
		}
		if r := t.last(ev.Step, engine.Decide); r != nil {
			r.status, r.dur = "ok", since(r.started, ev.Time)
			if len(d.ToolCalls) == 0 {
				r.text = "answer"
			} else {
				var names []string
				for _, c := range d.ToolCalls {
					names = append(names, flatten(c.Name))
				}
				r.text = "call " + strings.Join(names, ", ")
			}
		}
	case *engine.UsageRecorded:
		t.detail(ev).usage = d
	case *engine.ToolStarted:
		t.detail(ev).args[d.ID] = string(d.Args)
		k := keyOf(ev, d.ID)
		if d.Name == agentTool {
			t.agents[k], _ = delegation(d.Args) // the arguments as run, edited at the gate or not
		}
		if r := t.callRow(k); r != nil {
			// The call was paused at the gate: its row goes on, now running.
			r.text, r.status, r.started, r.agent = flatten(d.Name), "running", ev.Time, t.agents[k]
			break
		}
		t.addCall(ev, row{step: ev.Step, phase: engine.Act, text: flatten(d.Name), status: "running", call: k, started: ev.Time})
	case *engine.ToolFinished:
		dt := t.detail(ev)
		dt.tools = append(dt.tools, d)
		k := keyOf(ev, d.ID)
		if r := t.callRow(k); r != nil {
			r.text, r.status, r.dur = flatten(d.Name), string(d.Status), time.Duration(d.DurationMS)*time.Millisecond
			if r.sub != nil && !r.toggled && !r.folded {
				// Its sub-run is over: it folds into one row, unless the
				// person chose otherwise.
				r.folded, t.ordered = true, false
			}
		} else {
			t.addCall(ev, row{step: ev.Step, phase: engine.Act, text: flatten(d.Name), status: string(d.Status), call: k})
		}
	case *engine.GatePaused:
		// A pause is drawn on the row of what it holds back: the decide
		// row that model_request began ("waiting" for the person), or the
		// tool call's own row, which tool_started and tool_finished then
		// carry on. The details say what each pause was and its answer.
		dt := t.detail(ev)
		switch {
		case d.ToolCall == nil:
			dt.gates = append(dt.gates, "paused before deciding")
		case d.Reason == engine.ReasonApproval:
			dt.gates = append(dt.gates, "asked to approve "+flatten(d.ToolCall.Name))
		default:
			dt.gates = append(dt.gates, "paused before calling "+flatten(d.ToolCall.Name))
		}
		switch r := t.last(ev.Step, engine.Decide); {
		case d.ToolCall != nil:
			k := keyOf(ev, d.ToolCall.ID)
			t.addCall(ev, row{step: ev.Step, phase: d.At, text: flatten(d.ToolCall.Name), status: "paused", call: k})
		case r != nil && r.status == "running":
			r.text, r.status, r.started = "waiting", "paused", time.Time{}
		default:
			t.add(ev, row{step: ev.Step, phase: d.At, text: "waiting", status: "paused"})
		}
	case *engine.GateResumed:
		if dt := t.details[ev.Step]; dt != nil && len(dt.gates) > 0 {
			dt.gates[len(dt.gates)-1] += ": " + string(d.Action)
		}
		i := len(t.rows) - 1 // the run's paused row: parallel sub-runs may each have one
		for i >= 0 && (t.rows[i].status != "paused" || t.rows[i].run != ev.Run) {
			i--
		}
		if i < 0 {
			break
		}
		r := &t.rows[i]
		switch {
		case d.Action == engine.Abort:
			r.status = string(d.Action)
		case r.phase == engine.Decide:
			// The model is asked now: its time starts here, not when the
			// person was asked.
			r.text, r.status, r.started = "thinking", "running", ev.Time
		default:
			r.status = string(d.Action) // the tool call's row: tool_started or tool_finished follows
		}
	case *engine.StepFinished:
		if d.ToolCalls > 0 { // a step that only answered has nothing to observe
			t.add(ev, row{step: ev.Step, phase: engine.Observe, text: count(d.ToolCalls, "result"), status: "ok"})
		}
	case *engine.RunFinished:
		// A sub-run's end ends its own rows; the top-level run's, all.
		for i := range t.rows {
			if r := &t.rows[i]; (r.status == "running" || r.status == "paused") && (ev.ParentRun == "" || r.run == ev.Run) {
				r.status = string(d.StopReason)
				if d.StopReason == engine.StopError {
					r.status = "error"
				}
			}
		}
		if d.Error != "" {
			t.detail(ev).errors = append(t.detail(ev).errors, d.Error)
		}
		if ev.ParentRun == "" || d.StopReason != engine.StopAnswered {
			// A sub-run that answered needs no row of its own: its
			// call's row turns ok.
			t.add(ev, row{step: ev.Step, text: "■ " + string(d.StopReason), status: string(d.StopReason)})
		}
	}
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
