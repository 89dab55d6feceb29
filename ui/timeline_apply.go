package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

func (t *timeline) apply(ev engine.Event) {
	if ev.Kind == engine.KindTextDelta {
		return // the chat shows those
	}
	t.dirty = true
	sub := t.subs[ev.Run]
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		t.runStarted(ev, d, sub)
	case *engine.Handoff:
		t.add(ev, row{step: ev.Step, text: "⇄ handed off to " + d.To, status: "handoff"})
	case *engine.WorkflowStarted:
		t.steps = map[string]int{}
	case *engine.WorkflowStepFinished:
		t.workflowStepFinished(ev, d)
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
		t.decided(ev, d, sub)
		dt := t.detail(ev)
		for _, c := range d.ToolCalls { // a call aborted before it started has them too
			if _, ok := dt.args[c.ID]; !ok {
				dt.args[c.ID] = string(c.Args)
			}
		}
	case *engine.RequestEdited:
		t.requestEdited(ev, d)
	case *engine.UsageRecorded:
		t.detail(ev).usage = d
	case *engine.ToolStarted:
		t.toolStarted(ev, d)
	case *engine.ToolFinished:
		t.toolFinished(ev, d)
	case *engine.GatePaused:
		t.gatePaused(ev, d)
	case *engine.GateResumed:
		t.gateResumed(ev, d)
	default:
		t.applyEnd(ev)
	}
}

// applyEnd applies what comes at a step's end and after: its observe row,
// the run's end, checkpoints, notices, hooks.
func (t *timeline) applyEnd(ev engine.Event) {
	switch d := ev.Data.(type) {
	case *engine.StepFinished:
		if d.ToolCalls > 0 { // a step that only answered has nothing to observe
			t.add(ev, row{step: ev.Step, phase: engine.Observe, text: count(d.ToolCalls, "result"), status: "ok"})
		}
	case *engine.RunFinished:
		t.runFinished(ev, d)
	case *engine.Checkpointed:
		t.checkpointed(ev, d)
	case *engine.Notice:
		t.notice(ev, d)
	case *engine.HookRun:
		t.hook(ev, d)
	}
}

// hook applies a hook's run: a row of its step (what it decided, how
// long it took), and in the step's details the whole of it.
func (t *timeline) hook(ev engine.Event, d *engine.HookRun) {
	text, status := "⚓ "+string(d.Event)+" "+engine.OneLine(d.Command, 40), "ok"
	if d.Tool != "" {
		text = "⚓ " + string(d.Event) + " " + flatten(d.Tool) + ": " + engine.OneLine(d.Command, 30)
	}
	switch {
	case d.Error != "":
		status = "error"
	case d.Decision != "":
		status = d.Decision
	}
	t.add(ev, row{step: ev.Step, text: text, status: status, hook: true, dur: time.Duration(d.DurationMS) * time.Millisecond})
	t.detail(ev).hooks = append(t.detail(ev).hooks, hookLine(d))
}

// hookLine says what a hook did, on one line: its event, command and
// where it is from, its exit, its decision and why, and its error.
func hookLine(d *engine.HookRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (%s): exit %d in %dms", d.Event, flatten(engine.OneLine(d.Command, 80)), d.Source, d.Exit, d.DurationMS)
	if d.Decision != "" {
		fmt.Fprintf(&b, ", %s", d.Decision)
	}
	for _, part := range []struct{ label, text string }{{"why", d.Reason}, {"context", d.Context}, {"said", d.Output}, {"error", d.Error}, {"stop", d.Stop}} {
		if part.text != "" {
			fmt.Fprintf(&b, "; %s: %s", part.label, flatten(engine.OneLine(part.text, 200)))
		}
	}
	return b.String()
}

// notice applies a notice: a checkpoint that failed is a row of its step
// (its tools ran with no "before" to rewind to), its cause in the details.
func (t *timeline) notice(ev engine.Event, d *engine.Notice) {
	if d.About == engine.NoticeCheckpoint {
		t.add(ev, row{step: ev.Step, text: "⚠ no checkpoint", status: "error"})
		t.detail(ev).errors = append(t.detail(ev).errors, d.Message)
	}
}

// checkpointed applies a checkpoint: what changed since the run's last
// one (the steps from that one's on) is said on that step's observe row
// (±N files) and in its details.
func (t *timeline) checkpointed(ev engine.Event, d *engine.Checkpointed) {
	if t.cpStep == nil {
		t.cpStep = map[string]int{}
	}
	if prev, ok := t.cpStep[ev.Run]; ok && len(d.Changed) > 0 {
		for i := len(t.rows) - 1; i >= 0; i-- {
			if r := &t.rows[i]; r.run == ev.Run && r.step == prev && r.phase == engine.Observe {
				r.text += " ±" + count(len(d.Changed), "file")
				break
			}
		}
		if dt := t.details[prev]; dt != nil {
			dt.files = d.Changed
		}
	}
	switch d.Reason {
	case engine.CheckpointBefore:
		t.cpStep[ev.Run] = ev.Step
	case engine.CheckpointAfter:
		delete(t.cpStep, ev.Run)
	}
}

// runStarted applies run_started: a run's row, a sub-run under the call that started it.
func (t *timeline) runStarted(ev engine.Event, d *engine.RunStarted, sub *subRun) {
	text := "▶ " + engine.OneLine(d.Task, 60)
	if ev.ParentRun != "" && sub == nil { // a continued sub-run stays where it was
		p, ok := t.calls[parentOf(ev)]
		if !ok && strings.HasPrefix(ev.ParentCall, "guard_") {
			p, ok = t.judgeRow(ev), true
		}
		if !ok {
			p = -1
			text = "▶ " + ev.Agent + ": " + engine.OneLine(d.Task, 60)
		}
		t.subs[ev.Run] = &subRun{parent: p}
		if p >= 0 {
			t.rows[p].sub = t.subs[ev.Run]
		}
	}
	i := t.add(ev, row{step: ev.Step, text: text, status: "run"})
	if _, ok := t.runFirst[ev.Run]; !ok {
		t.runFirst[ev.Run] = i
	}
}

// judgeRow adds the row that a guardrail's judge, a sub-run that no tool
// call started, hangs under: among the rows of the run it judges (under
// its call when that run is itself a sub-run).
func (t *timeline) judgeRow(ev engine.Event) int {
	at := engine.Event{Run: ev.ParentRun, Step: ev.Step, Time: ev.Time}
	if _, sub := t.subs[ev.ParentRun]; sub {
		at.ParentRun = ev.ParentRun // add places it as the judged sub-run's
	}
	return t.add(at, row{step: ev.Step, text: "guardrail", agent: ev.Agent, judge: true, status: "running", started: ev.Time})
}

// judged ends the row of a guardrail's judge whose run ended with stop:
// it folds, unless the person unfolded it.
func (t *timeline) judged(ev engine.Event, stop engine.StopReason) {
	s := t.subs[ev.Run]
	if s == nil || s.parent < 0 || !t.rows[s.parent].judge {
		return
	}
	r := &t.rows[s.parent]
	r.status, r.dur = "ok", since(r.started, ev.Time)
	if stop != engine.StopAnswered {
		r.status = string(stop)
	}
	if !r.toggled && !r.folded {
		r.folded, t.ordered = true, false
	}
}

// workflowStepFinished applies workflow_step_finished: the end of a workflow step on its row.
func (t *timeline) workflowStepFinished(ev engine.Event, d *engine.WorkflowStepFinished) {
	if ev.ParentRun != "" || d.Step == "" {
		return
	}
	ev.WorkflowStep = d.Step
	_, had := t.steps[ev.WorkflowStep]
	r := &t.rows[t.stepRow(ev)]
	r.wf.end, r.status = d, d.Status
	if had {
		r.dur = since(r.started, ev.Time)
	}
}

// decided applies decided: the decide row says what was decided.
func (t *timeline) decided(ev engine.Event, d *engine.Decided, sub *subRun) {
	dt := t.detail(ev)
	dt.decision = d
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
		if dt.edited {
			r.text += " · edited" // the request it was asked with was the person's
		}
	}
}

// toolStarted applies tool_started: the call's row runs.
func (t *timeline) toolStarted(ev engine.Event, d *engine.ToolStarted) {
	t.detail(ev).args[d.ID] = string(d.Args)
	k := keyOf(ev, d.ID)
	if d.Name == agentTool {
		t.agents[k], _ = delegation(d.Args) // the arguments as run, edited at the gate or not
	}
	if r := t.callRow(k); r != nil {
		// The call was paused at the gate: its row goes on, now running.
		r.text, r.status, r.started, r.agent = flatten(d.Name), "running", ev.Time, t.agents[k]
		return
	}
	t.addCall(ev, row{step: ev.Step, phase: engine.Act, text: flatten(d.Name), status: "running", call: k, started: ev.Time})
}

// toolFinished applies tool_finished: the call's row ends (a sub-run's folds).
func (t *timeline) toolFinished(ev engine.Event, d *engine.ToolFinished) {
	dt := t.detail(ev)
	dt.tools = append(dt.tools, d)
	k := keyOf(ev, d.ID)
	if r := t.callRow(k); r != nil {
		r.text, r.status, r.dur = flatten(d.Name), finishedStatus(d), time.Duration(d.DurationMS)*time.Millisecond
		if r.sub != nil && !r.toggled && !r.folded {
			// Its sub-run is over: it folds into one row, unless the
			// person chose otherwise.
			r.folded, t.ordered = true, false
		}
	} else {
		t.addCall(ev, row{step: ev.Step, phase: engine.Act, text: flatten(d.Name), status: finishedStatus(d), call: k})
	}
}

// gatePaused applies gate_paused: the row of what the pause holds back.
func (t *timeline) gatePaused(ev engine.Event, d *engine.GatePaused) {
	// A pause is drawn on the row of what it holds back: the decide
	// row that model_request began ("waiting" for the person), or the
	// tool call's own row, which tool_started and tool_finished then
	// carry on. The details say what each pause was and its answer.
	dt := t.detail(ev)
	why := ""
	if d.Break != "" {
		why = "breakpoint " + flatten(d.Break) + ": "
	}
	switch {
	case d.At == engine.Observe:
		dt.gates = append(dt.gates, why+"paused before the answer")
	case d.ToolCall == nil:
		dt.gates = append(dt.gates, why+"paused before deciding")
	case d.Reason == engine.ReasonInterrupted:
		dt.gates = append(dt.gates, why+flatten(d.ToolCall.Name)+" was interrupted before; asked whether to run it again")
	case d.Reason == engine.ReasonApproval:
		dt.gates = append(dt.gates, why+"asked to approve "+flatten(d.ToolCall.Name))
	default:
		dt.gates = append(dt.gates, why+"paused before calling "+flatten(d.ToolCall.Name))
	}
	switch r := t.last(ev.Step, engine.Decide); {
	case d.ToolCall != nil:
		k := keyOf(ev, d.ToolCall.ID)
		if r := t.callRow(k); r != nil { // a call a continued run asks about again: one row a call
			r.status = "paused"
			break
		}
		t.addCall(ev, row{step: ev.Step, phase: d.At, text: flatten(d.ToolCall.Name), status: "paused", call: k})
	case r != nil && r.status == "running":
		r.text, r.status, r.started = "waiting", "paused", time.Time{}
	default:
		t.add(ev, row{step: ev.Step, phase: d.At, text: "waiting", status: "paused"})
	}
}

// gateResumed applies gate_resumed: the paused row goes on.
func (t *timeline) gateResumed(ev engine.Event, d *engine.GateResumed) {
	if dt := t.details[ev.Step]; dt != nil && len(dt.gates) > 0 {
		dt.gates[len(dt.gates)-1] += ": " + resumedAs(d)
	}
	i := len(t.rows) - 1 // the run's paused row: parallel sub-runs may each have one
	for i >= 0 && (t.rows[i].status != "paused" || t.rows[i].run != ev.Run) {
		i--
	}
	if i < 0 {
		return
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
}

// resumedAs says how a pause was answered, for the step's details.
func resumedAs(d *engine.GateResumed) string {
	what := string(d.Action)
	switch {
	case d.Action == engine.Respond:
		what = "answered for the tool: " + engine.OneLine(d.Result, 60)
	case d.Action == engine.Proceed && d.Args != nil:
		what = "edited: " + engine.OneLine(string(d.Args), 60)
	}
	if d.By != "" {
		what += " (" + flatten(d.By) + ")"
	}
	return what
}

// requestEdited applies request_edited: the step's details say how.
func (t *timeline) requestEdited(ev engine.Event, d *engine.RequestEdited) {
	var what []string
	if d.System != nil {
		what = append(what, "the system prompt changed")
	}
	for _, m := range d.Messages {
		if m.Drop {
			what = append(what, fmt.Sprintf("message %d dropped", m.Index))
		} else {
			what = append(what, fmt.Sprintf("message %d changed", m.Index))
		}
	}
	if d.Note != "" {
		what = append(what, "a note: "+engine.OneLine(d.Note, 60))
	}
	dt := t.detail(ev)
	dt.edited = true
	dt.gates = append(dt.gates, fmt.Sprintf("the request was edited (%s; %s tokens)", strings.Join(what, ", "), kTok(d.Tokens)))
	if r := t.last(ev.Step, engine.Decide); r != nil {
		r.text = "thinking (request edited)"
	}
}

// runFinished applies run_finished: what still runs ends, and the run's end row.
func (t *timeline) runFinished(ev engine.Event, d *engine.RunFinished) {
	// A sub-run's end ends its own rows; the top-level run's, all. Only
	// the rows from the run's first on can be going (those before are of
	// runs that ended): a long session's ends do not each scan it all.
	for i := t.runFirst[ev.Run]; i < len(t.rows); i++ {
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
	if ev.ParentRun != "" {
		t.judged(ev, d.StopReason)
	}
	if ev.ParentRun == "" || d.StopReason != engine.StopAnswered {
		// A sub-run that answered needs no row of its own: its
		// call's row turns ok.
		t.add(ev, row{step: ev.Step, text: "■ " + string(d.StopReason), status: string(d.StopReason)})
	}
}
