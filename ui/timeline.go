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
type row struct {
	step    int
	phase   engine.Phase
	text    string
	status  string // ok, error, running, paused, cancelled, ...
	dur     time.Duration
	retries int
	call    callKey // the tool call of an act row
	started time.Time
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
	step     int
	request  *engine.ModelRequest
	trimmed  *engine.ContextTrimmed
	decision *engine.Decided
	usage    *engine.UsageRecorded
	tools    []*engine.ToolFinished
	args     map[string]string
	retries  []*engine.RetryScheduled
	gates    []string // each pause of the step and the person's answer
	errors   []string
}

// timeline is the Timeline pane: one row per step and phase as it happens.
type timeline struct {
	rows          []row
	cursor        int
	follow        bool
	top           int
	width, height int
	details       map[int]*stepDetail
	byCall        map[callKey]int

	// The lines view drew, reused until something changes.
	cache    []string
	cacheKey [3]int
	dirty    bool
}

func newTimeline() timeline {
	return timeline{follow: true, details: map[int]*stepDetail{}, byCall: map[callKey]int{}}
}

func (t *timeline) detail(run string, step int) *stepDetail {
	d := t.details[step]
	if d == nil {
		d = &stepDetail{run: run, step: step, args: map[string]string{}}
		t.details[step] = d
	}
	return d
}

func (t *timeline) add(r row) {
	t.rows = append(t.rows, r)
	if t.follow {
		t.cursor = len(t.rows) - 1
	}
}

// last returns the newest row of a step and phase.
func (t *timeline) last(step int, phase engine.Phase) *row {
	for i := len(t.rows) - 1; i >= 0 && i >= len(t.rows)-64; i-- {
		if r := &t.rows[i]; r.step == step && r.phase == phase {
			return r
		}
	}
	return nil
}

func (t *timeline) apply(ev engine.Event) {
	if ev.Kind == engine.KindTextDelta {
		return // the chat shows those
	}
	t.dirty = true
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		t.add(row{step: ev.Step, text: "▶ " + engine.OneLine(d.Task, 60), status: "run"})
	case *engine.StepStarted:
		t.add(row{step: ev.Step, phase: engine.Perceive, status: "running", started: ev.Time})
	case *engine.ModelRequest:
		t.detail(ev.Run, ev.Step).request = d
		if r := t.last(ev.Step, engine.Perceive); r != nil {
			r.text = fmt.Sprintf("%d msg%s, %d tok", d.Messages, plural(d.Messages), d.Tokens)
			r.status, r.dur = "ok", since(r.started, ev.Time)
		}
		t.add(row{step: ev.Step, phase: engine.Decide, text: "thinking", status: "running", started: ev.Time})
	case *engine.ContextTrimmed:
		t.detail(ev.Run, ev.Step).trimmed = d
	case *engine.RetryScheduled:
		dt := t.detail(ev.Run, ev.Step)
		dt.retries = append(dt.retries, d)
		phase := engine.Decide
		if d.Op != "model" {
			phase = engine.Act
		}
		if r := t.last(ev.Step, phase); r != nil {
			r.retries++
		}
	case *engine.Decided:
		t.detail(ev.Run, ev.Step).decision = d
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
		t.detail(ev.Run, ev.Step).usage = d
	case *engine.ToolStarted:
		t.detail(ev.Run, ev.Step).args[d.ID] = string(d.Args)
		k := keyOf(ev, d.ID)
		if r := t.callRow(k); r != nil {
			// The call was paused at the gate: its row goes on, now running.
			r.text, r.status, r.started = flatten(d.Name), "running", ev.Time
			break
		}
		t.byCall[k] = len(t.rows)
		t.add(row{step: ev.Step, phase: engine.Act, text: flatten(d.Name), status: "running", call: k, started: ev.Time})
	case *engine.ToolFinished:
		dt := t.detail(ev.Run, ev.Step)
		dt.tools = append(dt.tools, d)
		k := keyOf(ev, d.ID)
		if r := t.callRow(k); r != nil {
			r.text, r.status, r.dur = flatten(d.Name), string(d.Status), time.Duration(d.DurationMS)*time.Millisecond
		} else {
			t.byCall[k] = len(t.rows)
			t.add(row{step: ev.Step, phase: engine.Act, text: flatten(d.Name), status: string(d.Status), call: k})
		}
	case *engine.GatePaused:
		// A pause is drawn on the row of what it holds back: the decide
		// row that model_request began ("waiting" for the person), or the
		// tool call's own row, which tool_started and tool_finished then
		// carry on. The details say what each pause was and its answer.
		dt := t.detail(ev.Run, ev.Step)
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
			t.byCall[k] = len(t.rows)
			t.add(row{step: ev.Step, phase: d.At, text: flatten(d.ToolCall.Name), status: "paused", call: k})
		case r != nil && r.status == "running":
			r.text, r.status, r.started = "waiting", "paused", time.Time{}
		default:
			t.add(row{step: ev.Step, phase: d.At, text: "waiting", status: "paused"})
		}
	case *engine.GateResumed:
		if dt := t.details[ev.Step]; dt != nil && len(dt.gates) > 0 {
			dt.gates[len(dt.gates)-1] += ": " + string(d.Action)
		}
		i := len(t.rows) - 1
		for i >= 0 && t.rows[i].status != "paused" {
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
			t.add(row{step: ev.Step, phase: engine.Observe, text: count(d.ToolCalls, "result"), status: "ok"})
		}
	case *engine.RunFinished:
		for i := range t.rows {
			if t.rows[i].status == "running" || t.rows[i].status == "paused" {
				t.rows[i].status = string(d.StopReason)
				if d.StopReason == engine.StopError {
					t.rows[i].status = "error"
				}
			}
		}
		if d.Error != "" {
			t.detail(ev.Run, ev.Step).errors = append(t.detail(ev.Run, ev.Step).errors, d.Error)
		}
		t.add(row{step: ev.Step, text: "■ " + string(d.StopReason), status: string(d.StopReason)})
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
	if len(t.rows) > 0 {
		t.cursor = len(t.rows) - 1
	}
}

// update handles a key while the Timeline has the focus: it moves the
// selection, and reports whether the key asks for the selected step's
// details.
func (t *timeline) update(msg tea.KeyMsg, k keyMap) (details bool) {
	switch {
	case key.Matches(msg, k.Up):
		t.move(-1)
	case key.Matches(msg, k.Down):
		t.move(1)
	case key.Matches(msg, k.Detail):
		return true
	}
	return false
}

func (t *timeline) move(n int) {
	if len(t.rows) == 0 {
		return
	}
	t.cursor = min(max(t.cursor+n, 0), len(t.rows)-1)
	t.follow = t.cursor == len(t.rows)-1
	t.dirty = true
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

// render draws the rows in view, each fitted to width.
func (t *timeline) render(width int, focused bool) []string {
	if t.follow && len(t.rows) > 0 {
		t.cursor = len(t.rows) - 1
	}
	if t.cursor < t.top {
		t.top = t.cursor
	}
	if t.cursor >= t.top+t.height {
		t.top = t.cursor - t.height + 1
	}
	out := make([]string, 0, t.height)
	for i := t.top; i < len(t.rows) && len(out) < t.height; i++ {
		r := t.rows[i]
		var line string
		if r.phase == "" {
			line = styleRun.Render(ansi.Truncate(r.text, width, "…"))
		} else {
			extra := ""
			if r.dur > 0 {
				extra = " " + fmtDur(r.dur)
			}
			if r.retries > 0 {
				extra += fmt.Sprintf(" ↻%d", r.retries)
			}
			status := statusStyle(r.status).Render(r.status)
			left := fmt.Sprintf("%s %3d %-8s %s", phaseIcon[r.phase], r.step, r.phase, r.text)
			right := extra + " " + status
			room := max(width-ansi.StringWidth(right), 0)
			line = padRight(ansi.Truncate(left, room, "…"), room) + right
		}
		if focused && i == t.cursor {
			line = styleCursor.Render(padRight(ansi.Strip(line), width))
		}
		out = append(out, fit(line, width))
	}
	for len(out) < t.height {
		out = append(out, strings.Repeat(" ", width))
	}
	return out
}

// detailLines renders the detail view of the step under the cursor.
func (t *timeline) detailLines(width int) []string {
	if len(t.rows) == 0 {
		return []string{"No steps yet."}
	}
	step := t.rows[t.cursor].step
	if t.rows[t.cursor].status == "run" { // a run's first row: its first step
		for _, r := range t.rows[t.cursor+1:] {
			if r.phase != "" {
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
	fmt.Fprintf(&b, "Step %d of %s\n\n", d.step, d.run)
	if r := d.request; r != nil {
		fmt.Fprintf(&b, "Model request: %s, %s, %s, ~%d tokens of a %d budget (system %d, memory %d, tools %d)\n",
			count(r.Messages, "message"), count(r.MemoryFacts, "memory fact"), count(r.Tools, "tool"), r.Tokens, r.Budget, r.SystemTokens, r.MemoryTokens, r.ToolTokens)
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
