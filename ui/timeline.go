package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

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

// update handles a key while the Timeline has the focus: it moves the
// selection, folds or unfolds an agent's rows, and reports whether the key
// asks for the selected step's details.
func (t *timeline) update(msg tea.KeyMsg, k keyMap) (details bool) {
	switch {
	case key.Matches(msg, k.Up):
		t.move(-1)
	case key.Matches(msg, k.Down):
		t.move(1)
	case key.Matches(msg, k.Fold):
		t.fold()
	case key.Matches(msg, k.Detail):
		return true
	}
	return false
}

func (t *timeline) move(n int) {
	order := t.shown()
	if len(order) == 0 {
		return
	}
	p := min(max(t.posOf[t.sel]+n, 0), len(order)-1)
	t.sel = order[p]
	t.follow = p == len(order)-1
	t.dirty = true
}

// selectStep puts the cursor on the row shown of run's step that holds
// what a search found there (a user message: the run's row; an answer:
// the decide row; a tool result or a memory fact: the act row), else the
// step's first row, and stops following the end; run "" is any run. It
// reports whether there was such a row.
func (t *timeline) selectStep(run string, step int, kind string) bool {
	order := t.shown()
	first, best := -1, -1
	for _, i := range order {
		r := t.rows[i]
		if r.step != step || r.run != run && run != "" {
			continue
		}
		if first < 0 {
			first = i
		}
		if best < 0 && (kind == "user" && r.status == "run" || kind == "answer" && r.phase == engine.Decide ||
			(kind == "tool" || kind == "memory") && r.phase == engine.Act) {
			best = i
		}
	}
	if best < 0 {
		best = first
	}
	if best < 0 && run != "" {
		return t.selectStep("", step, kind)
	}
	if best < 0 {
		return false
	}
	t.sel, t.follow, t.dirty = best, false, true
	return true
}

// fold folds or unfolds the sub-run under the cursor's call row: the row's
// own, or, on a sub-run's row, the one it is under (the cursor goes to its
// call row).
func (t *timeline) fold() {
	t.shown()
	i := t.sel
	for i >= 0 && i < len(t.rows) && len(t.children[i]) == 0 {
		i = t.rows[i].parent
	}
	if i < 0 || i >= len(t.rows) {
		return
	}
	r := &t.rows[i]
	r.folded, r.toggled = !r.folded, true
	t.sel, t.follow, t.ordered, t.dirty = i, false, false, true
}

// setSize sets the size of the pane's content.
func (t *timeline) setSize(width, height int) { t.width, t.height = width, height }

// view draws the rows in view, the selected one marked when focused.
func (t *timeline) view(focused bool) []string {
	width := t.width
	key := [3]int{width, t.height, 0}
	if focused {
		key[2] = 1
	}
	if !t.dirty && key == t.cacheKey && t.cache != nil {
		return t.cache
	}
	t.cache, t.cacheKey, t.dirty = t.render(width, focused), key, false
	return t.cache
}

// maxIndent bounds how deep a sub-run's rows are indented, so that deep
// delegations leave room for the rows' text.
const maxIndent = 4

// render draws the rows in view, each fitted to width.
func (t *timeline) render(width int, focused bool) []string {
	order := t.shown()
	cursor := 0
	if len(order) > 0 {
		cursor = t.posOf[t.sel]
	}
	if cursor < t.top {
		t.top = cursor
	}
	if cursor >= t.top+t.height {
		t.top = cursor - t.height + 1
	}
	t.top = max(min(t.top, len(order)-1), 0)
	out := make([]string, 0, t.height)
	for p := t.top; p < len(order) && len(out) < t.height; p++ {
		i := order[p]
		r := &t.rows[i]
		indent := strings.Repeat("  ", min(r.depth, maxIndent))
		var line string
		if r.compact != nil {
			line = compactRow(indent, r.step, r.compact, width)
		} else if r.wf != nil {
			extra := ""
			if r.dur > 0 {
				extra = " " + fmtDur(r.dur)
			}
			right := extra + " " + statusStyle(r.status).Render(r.status)
			room := max(width-ansi.StringWidth(right), 0)
			line = padRight(ansi.Truncate(indent+styleRun.Render("▣ "+t.label(i)), room, "…"), room) + right
		} else if r.phase == "" {
			line = indent + styleRun.Render(ansi.Truncate(r.text, max(width-len(indent), 0), "…"))
		} else {
			extra := ""
			if r.dur > 0 {
				extra = " " + fmtDur(r.dur)
			}
			if r.retries > 0 {
				extra += fmt.Sprintf(" ↻%d", r.retries)
			}
			status := statusStyle(r.status).Render(r.status)
			left := fmt.Sprintf("%s%s %3d %-8s %s", indent, phaseIcon[r.phase], r.step, r.phase, t.label(i))
			if r.agent != "" { // the agent's name matters more than "act" (its icon says so)
				left = fmt.Sprintf("%s%s %3d %s", indent, phaseIcon[r.phase], r.step, t.label(i))
			}
			right := extra + " " + status
			room := max(width-ansi.StringWidth(right), 0)
			line = padRight(ansi.Truncate(left, room, "…"), room) + right
		}
		if focused && p == cursor {
			line = styleCursor.Render(padRight(ansi.Strip(line), width))
		}
		out = append(out, fit(line, width))
	}
	for len(out) < t.height {
		out = append(out, strings.Repeat(" ", width))
	}
	return out
}

// label is a row's text; an agent call's names its agent, and says
// whether its sub-run's rows are folded (▸, with what they sum up) or not
// (▾).
func (t *timeline) label(i int) string {
	r := &t.rows[i]
	if r.wf != nil {
		s := "step " + r.wf.name
		if e := r.wf.end; e != nil && e.Attempts > 1 {
			s += fmt.Sprintf(" (%d attempts)", e.Attempts)
		}
		if e := r.wf.end; e != nil && e.Items > 0 {
			s += " · " + count(e.Items, "item")
		}
		switch n := len(t.children[i]); {
		case n == 0:
			return s
		case !r.folded:
			return "▾ " + s
		default:
			return "▸ " + s + "  " + count(n, "call")
		}
	}
	if r.agent == "" {
		return r.text
	}
	s := "agent " + r.agent
	switch sub := r.sub; {
	case len(t.children[i]) == 0:
		return s
	case !r.folded:
		return "▾ " + s
	case sub != nil:
		return "▸ " + s + "  " + count(sub.steps, "step") + ", " + count(sub.tools, "tool")
	}
	return "▸ " + s
}

// detailLines renders the detail view of the step under the cursor.
func (t *timeline) detailLines(width int) []string {
	if len(t.shown()) == 0 {
		return []string{"No steps yet."}
	}
	sel := t.rows[t.sel]
	if sel.compact != nil {
		return compactLines(sel.step, sel.compact, width)
	}
	if sel.wf != nil {
		return stepLines(sel, width)
	}
	step := sel.step
	if sel.status == "run" { // a run's first row: its first step
		for _, r := range t.rows[t.sel+1:] {
			if r.phase != "" && r.run == sel.run {
				step = r.step
				break
			}
		}
	}
	d := t.details[step]
	if d == nil {
		return []string{fmt.Sprintf("Step %d has no details yet.", step)}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Step %d of %s", d.step, d.run)
	if d.agent != "" {
		fmt.Fprintf(&b, " (agent %s)", d.agent)
	}
	b.WriteString("\n\n")
	if r := d.request; r != nil {
		fmt.Fprintf(&b, "Model request: %s, %s, %s, ~%d tokens of a %d budget (system %d, memory %d, tools %d)\n",
			count(r.Messages, "message"), count(r.MemoryFacts, "memory fact"), count(r.Tools, "tool"), r.Tokens, r.Budget, r.SystemTokens, r.MemoryTokens, r.ToolTokens)
	}
	for _, c := range d.compacts {
		fmt.Fprintf(&b, "Context compacted: %s → %s tokens, the first %s summarised (its row has the summary)\n",
			kTok(c.TokensBefore), kTok(c.TokensAfter), count(c.Upto, "message"))
	}
	if tr := d.trimmed; tr != nil {
		fmt.Fprintf(&b, "Context trimmed: %s (~%d tokens) left out, %d kept\n", count(tr.Dropped, "oldest message"), tr.DroppedTokens, tr.Kept)
	}
	for _, g := range d.gates {
		fmt.Fprintf(&b, "Gate: %s\n", g)
	}
	for _, r := range d.retries {
		fmt.Fprintf(&b, "Retry %s attempt %d after %dms: %s\n", r.Op, r.Attempt, r.DelayMS, r.Cause)
	}
	if dec := d.decision; dec != nil {
		b.WriteString("\nDecision")
		if dec.Attempts > 1 {
			fmt.Fprintf(&b, " (after %d attempts)", dec.Attempts)
		}
		b.WriteString(":\n")
		if dec.Reasoning != "" {
			fmt.Fprintf(&b, "  reasoning: %s\n", dec.Reasoning)
		}
		if dec.Text != "" {
			fmt.Fprintf(&b, "  %s\n", dec.Text)
		}
		for _, c := range dec.ToolCalls {
			fmt.Fprintf(&b, "  call %s %s (%s)\n", c.Name, string(c.Args), c.ID)
		}
	}
	for _, tf := range d.tools {
		fmt.Fprintf(&b, "\nTool %s: %s in %dms, %s", flatten(tf.Name), tf.Status, tf.DurationMS, count(tf.Attempts, "attempt"))
		if tf.Truncated {
			b.WriteString(", truncated")
		}
		fmt.Fprintf(&b, "\n  args: %s\n", d.args[tf.ID])
		if tf.Error != "" {
			fmt.Fprintf(&b, "  error: %s\n", tf.Error)
		}
		fmt.Fprintf(&b, "  result:\n")
		for _, l := range strings.Split(tf.Result, "\n") {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	if u := d.usage; u != nil {
		est := ""
		if u.Estimated {
			est = " (estimated)"
		}
		fmt.Fprintf(&b, "\nTokens: %d in, %d out%s\n", u.PromptTokens, u.CompletionTokens, est)
	}
	for _, e := range d.errors {
		fmt.Fprintf(&b, "\nError: %s\n", e)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		out = append(out, hangRows(l, width)...)
	}
	return out
}

// since is the time from start to end, or 0 when start is unknown (a row
// that did not begin with a timed event) or after end.
func since(start, end time.Time) time.Duration {
	if start.IsZero() || end.Before(start) {
		return 0
	}
	return end.Sub(start)
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "<1ms"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func padRight(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// count says n things: "1 tool", "2 tools".
func count(n int, thing string) string { return fmt.Sprintf("%d %s%s", n, thing, plural(n)) }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// compactRow draws a compaction's row, as much of it as fits width:
//
//	⇊  12 compacted 40 msgs, 9.1k → 2.3k tok
//	⇊  12 40 msgs, 9.1k→2.3k tok
func compactRow(indent string, step int, d *engine.ContextCompacted, width int) string {
	msgs, before, after := count(d.Messages, "msg"), kTok(d.TokensBefore), kTok(d.TokensAfter)
	var line string
	for _, text := range []string{
		fmt.Sprintf("compacted %s, %s → %s tok", msgs, before, after),
		fmt.Sprintf("compacted %s, %s→%s tok", msgs, before, after),
		fmt.Sprintf("%s, %s→%s tok", msgs, before, after),
	} {
		if line = fmt.Sprintf("%s⇊ %3d %s", indent, step, text); ansi.StringWidth(line) <= width {
			break
		}
	}
	return ansi.Truncate(line, width, "…")
}

// compactLines are the details of a compaction: what it stands for, its
// sizes, the model and its usage, the focus asked for, and the summary.
func compactLines(step int, d *engine.ContextCompacted, width int) []string {
	var b strings.Builder
	how := "automatically, as the request outgrew the trigger"
	if d.Manual {
		how = "when asked (/compact)"
	}
	fmt.Fprintf(&b, "Context compacted at step %d, %s\n\n", step, how)
	fmt.Fprintf(&b, "Stands for: the first %s of the history (%d summarised now); the Chat and the journal keep them all\n",
		count(d.Upto, "message"), d.Messages)
	fmt.Fprintf(&b, "Tokens: %d before, %d after\n", d.TokensBefore, d.TokensAfter)
	model := d.Model
	if model == "" {
		model = "the run's"
	}
	fmt.Fprintf(&b, "Model: %s, %d tokens in, %d out\n", model, d.Usage.PromptTokens, d.Usage.CompletionTokens)
	if d.Focus != "" {
		fmt.Fprintf(&b, "Focus: %s\n", d.Focus)
	}
	b.WriteString("\nSummary:\n")
	for _, l := range strings.Split(d.Summary, "\n") {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		out = append(out, hangRows(l, width)...)
	}
	return out
}

// kTok says a number of tokens briefly: 900, 9.1k, 128k.
func kTok(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 100_000:
		return strings.Replace(fmt.Sprintf("%.1fk", float64(n)/1000), ".0k", "k", 1)
	}
	return fmt.Sprintf("%dk", (n+500)/1000)
}

// stepLines are the details of a workflow step: how it ended, its
// attempts and items, and its output.
func stepLines(r row, width int) []string {
	var b strings.Builder
	fmt.Fprintf(&b, "Workflow step %s: %s", r.wf.name, r.status)
	if r.dur > 0 {
		fmt.Fprintf(&b, " in %s", fmtDur(r.dur))
	}
	b.WriteString("\n")
	if e := r.wf.end; e != nil {
		if e.Attempts > 0 {
			fmt.Fprintf(&b, "Attempts: %d\n", e.Attempts)
		}
		if e.Items > 0 {
			fmt.Fprintf(&b, "Items: %d (foreach)\n", e.Items)
		}
		switch {
		case e.Status == "skipped":
			b.WriteString("\nSkipped: its if was false.\n")
		case e.Status == "not run":
			b.WriteString("\nNot run: the workflow stopped before it.\n")
		default:
			b.WriteString("\nOutput:\n")
			for _, l := range strings.Split(e.Output, "\n") {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
	} else {
		b.WriteString("\nIts calls are under its row; the output comes when they are done.\n")
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		out = append(out, hangRows(l, width)...)
	}
	return out
}
