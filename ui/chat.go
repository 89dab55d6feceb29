package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/glamour"

	"github.com/agentty/agentty/engine"
)

type itemKind int

const (
	itemUser itemKind = iota
	itemAssistant
	itemTool
	itemNote
	itemStep // a workflow step: its calls and its output
)

// chatItem is one entry of the chat. Its rendered lines are cached for the
// width they were rendered at; only the streaming item is re-rendered as it
// grows, and only its last line.
type chatItem struct {
	kind itemKind
	text string
	// tool calls
	call                       callKey
	attached                   []string // the files a message has attached (@path)
	order                      []string // the tool's arguments in its schema's order
	name, args, result, status string
	truncated                  bool
	yours                      bool // an answer that is the output of the person's own "!command"
	// a call of the tool agent: the agent, the task, and its sub-run once
	// it has started; parent is the delegation whose sub-run made this
	// item (nil for the chat's own items)
	agent, task string
	sub         *subChat
	parent      *chatItem
	// a workflow step (itemStep)
	step *stepChat
	// streaming assistant text, kept in buf until the decision replaces it
	streaming bool
	buf       strings.Builder
	stream    streamWrap
	reasoning string // the tail of the model's reasoning, shown until text comes
	raw       string // an answer's text as the model wrote it, redacted, not sanitized (/copy)
	// pre is what the streaming of a finished answer rendered, for its
	// first drawing (nil: none, or drawn)
	pre *streamed

	lines []string
	width int
	at    stepRef // the step that made it
}

// subChat is what the Chat keeps of a sub-run, for its delegation line:
// what it did (its tool calls, nested delegations and handoffs, in order),
// and how it ended.
type subChat struct {
	steps, tools int
	items        []*chatItem
	done         bool
	stop         engine.StopReason
	answer, err  string
}

// stepChat is what the Chat keeps of a workflow step: its calls (each
// attempt's, each item's) and how it ended (nil while it runs).
type stepChat struct {
	name  string
	calls []*chatItem
	end   *engine.WorkflowStepFinished
}

var streamHeader = styleAgent.Render("▍agentty") + styleDim.Render(" …")

// markdownMargin is glamour's margin on each side of a rendered message.
const markdownMargin = "  "

// chat is the Chat pane: items, and a window onto their lines anchored at
// the top row (item index, line in it), so that a long chat costs only what
// is on screen, and new output never moves a reader who scrolled up.
type chat struct {
	// argOrder gives a tool's arguments in its schema's order (nil: as
	// the model wrote them).
	argOrder  func(tool string) []string
	items     []*chatItem
	byCall    map[callKey]*chatItem
	calls     map[callRef]*chatItem // each run's newest agent call with an id
	subs      map[string]*chatItem  // the delegation of each sub-run, by its id
	steps     map[string]*chatItem  // the steps of the workflow the last run carries out
	expanded  bool
	follow    bool
	shellRun  string // the run of the person's last "!command": its output is theirs, not the model's
	topItem   int
	topLine   int
	width     int
	height    int
	renderers map[int]*glamour.TermRenderer
	style     string
	// at is the top-level run and step of the event being applied: each
	// item made for it is stamped with them, for showStep.
	at stepRef
}

// stepRef names a step of a run.
type stepRef struct {
	run  string
	step int
}

func newChat(style string) chat {
	return chat{follow: true, byCall: map[callKey]*chatItem{}, calls: map[callRef]*chatItem{}, subs: map[string]*chatItem{},
		steps: map[string]*chatItem{}, renderers: map[int]*glamour.TermRenderer{}, style: style}
}

func (c *chat) add(it *chatItem) {
	it.at = c.at
	c.items = append(c.items, it)
	if it.kind == itemTool {
		c.byCall[it.call] = it
	}
}

// newCall makes the item of a tool call that ev decided; a call of the
// tool agent becomes a delegation, found again by the sub-run it starts.
func (c *chat) newCall(ev engine.Event, tc engine.ToolCall) *chatItem {
	it := &chatItem{kind: itemTool, call: keyOf(ev, tc.ID), name: tc.Name, args: string(tc.Args), status: "pending"}
	if c.argOrder != nil {
		it.order = c.argOrder(tc.Name)
	}
	if tc.Name == agentTool {
		it.agent, it.task = delegation(tc.Args)
		c.calls[callRef{ev.Run, tc.ID}] = it
	}
	return it
}

// changed drops the rendering of an item and of the delegations it is
// drawn in.
func changed(it *chatItem) {
	for ; it != nil; it = it.parent {
		it.lines = nil
	}
}

// applySub applies a sub-run's event to its delegation: its streamed text
// and its answer are not the chat's own messages, and its end is not the
// run's.
func (c *chat) applySub(ev engine.Event) {
	it := c.subs[ev.Run]
	if d, ok := ev.Data.(*engine.RunStarted); ok {
		it = c.calls[parentOf(ev)]
		if it == nil { // its call is not in the chat (a journal cut short)
			it = &chatItem{kind: itemTool, name: agentTool, status: "running", call: callKey{ev.ParentRun, -1, ev.ParentCall}}
			c.add(it)
		}
		if it.agent == "" {
			it.agent = ev.Agent
		}
		if it.task == "" {
			it.task = flatten(d.Task)
		}
		if it.sub == nil { // a continued sub-run goes on with what it did
			it.sub = &subChat{}
		}
		it.sub.done = false
		c.subs[ev.Run] = it
	}
	if it == nil || it.sub == nil {
		return
	}
	sub := it.sub
	switch d := ev.Data.(type) {
	case *engine.StepStarted:
		sub.steps++
	case *engine.Decided:
		sub.tools += len(d.ToolCalls)
		for _, tc := range d.ToolCalls {
			call := c.newCall(ev, tc)
			call.parent = it
			sub.items = append(sub.items, call)
			c.byCall[call.call] = call
		}
	case *engine.ToolStarted:
		if call := c.byCall[keyOf(ev, d.ID)]; call != nil {
			call.status, call.args = "running", string(d.Args)
			if call.name == agentTool {
				call.agent, call.task = delegation(d.Args)
			}
			changed(call)
		}
	case *engine.ToolFinished:
		if call := c.byCall[keyOf(ev, d.ID)]; call != nil {
			call.status, call.result, call.truncated = finishedStatus(d), d.Result, d.Truncated
			changed(call)
		}
	case *engine.Handoff:
		sub.items = append(sub.items, &chatItem{kind: itemNote, text: "⇄ handed off to " + d.To, parent: it})
	case *engine.RunFinished:
		sub.done, sub.stop, sub.answer, sub.err = true, d.StopReason, d.Answer, d.Error
	}
	changed(it)
}

// finishedStatus is a finished call's status as the Chat and the Timeline
// show it: "answered" when the person gave its result in place of the
// tool, how a shell command that ran ended when it failed ("exit 2").
func finishedStatus(d *engine.ToolFinished) string {
	if d.By == "person" {
		return "answered"
	}
	if f := commandFailure(d); f != "" {
		return f
	}
	return string(d.Status)
}

// commandFailure is how a command run_shell ran ended when it failed
// ("exit 2", "signal: killed"), from its result, whose first line is the
// process's state (the model reads the same); "" when it succeeded, or for
// another tool. The call itself succeeded: the command ran.
func commandFailure(d *engine.ToolFinished) string {
	if d.Status != engine.ToolOK || d.Name != "run_shell" {
		return ""
	}
	first, _, _ := strings.Cut(d.Result, "\n")
	if code, ok := strings.CutPrefix(first, "exit status "); ok {
		if code == "0" {
			return ""
		}
		return "exit " + code
	}
	if strings.HasPrefix(first, "signal: ") {
		return first
	}
	return ""
}

// failedCommand reports whether a status is commandFailure's.
func failedCommand(status string) bool {
	return strings.HasPrefix(status, "exit ") || strings.HasPrefix(status, "signal: ")
}

// showStep scrolls the Chat to the first item of run's step (of the run's
// start, for step 0 or a user's task), and stops following the end.
func (c *chat) showStep(run string, step int) {
	for i, it := range c.items {
		if it.at.run == run && it.at.step >= step || runAfter(it.at.run, run) {
			n := 0
			for _, after := range c.items[i:] {
				n += len(c.linesOf(after))
			}
			// From there on all fits: the end is shown, and the step with it.
			c.topItem, c.topLine, c.follow = i, 0, n <= c.height
			return
		}
	}
}

// runAfter reports whether run a began after run b (run-10 after run-9).
func runAfter(a, b string) bool {
	var x, y int
	fmt.Sscanf(a, "run-%d", &x)
	fmt.Sscanf(b, "run-%d", &y)
	return x > y
}

// streamingItem returns the assistant message being streamed, starting one
// when there is none.
func (c *chat) streamingItem() *chatItem {
	if n := len(c.items); n > 0 && c.items[n-1].streaming {
		return c.items[n-1]
	}
	it := &chatItem{kind: itemAssistant, streaming: true}
	c.add(it)
	return it
}

// dropStreaming removes a streamed message whose attempt failed.
func (c *chat) dropStreaming() {
	if n := len(c.items); n > 0 && c.items[n-1].streaming {
		c.items = c.items[:n-1]
	}
}

// keepStreaming turns the text streamed so far into a message of its own,
// as cancelling leaves it, and reports whether there was any.
func (c *chat) keepStreaming() bool {
	n := len(c.items)
	if n == 0 || !c.items[n-1].streaming || c.items[n-1].buf.Len() == 0 {
		return false
	}
	it := c.items[n-1]
	c.items[n-1] = &chatItem{kind: itemAssistant, text: it.buf.String()}
	return true
}

func (c *chat) apply(ev engine.Event) {
	if ev.ParentRun == "" {
		c.at = stepRef{ev.Run, ev.Step}
	}
	if ev.ParentRun != "" {
		c.applySub(ev)
		return
	}
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		if strings.HasPrefix(d.Task, "!") && ev.ParentRun == "" {
			c.shellRun = ev.Run
		}
		text, attached := withoutAttachments(d.Task)
		c.add(&chatItem{kind: itemUser, text: text, attached: attached})
	case *engine.Handoff:
		c.add(&chatItem{kind: itemNote, text: "⇄ handed off to " + d.To})
	case *engine.Notice: // a warning from inside a run (compaction fell back to trimming)
		c.add(&chatItem{kind: itemNote, text: d.Message})
	case *engine.HookRun:
		if n := hookNote(d); n != "" {
			c.add(&chatItem{kind: itemNote, text: n})
		}
	case *engine.ModelChanged:
		c.add(&chatItem{kind: itemNote, text: "Model " + flatten(d.Model) + " from the next run."})
	case *engine.ContextCompacted:
		// The Chat keeps every message: this says only that the model
		// now sees a summary of the oldest.
		c.add(&chatItem{kind: itemNote, text: fmt.Sprintf("⇊ %s summarised for the model (%s → %s tokens); the Timeline has the summary.",
			count(d.Upto, "older message"), kTok(d.TokensBefore), kTok(d.TokensAfter))})
	case *engine.TextDelta:
		if d.Reasoning {
			it := c.streamingItem()
			it.reasoning = tail(it.reasoning+d.Text, 300)
			it.lines = nil
			return
		}
		it := c.streamingItem()
		it.buf.WriteString(d.Text)
		if it.stream.width == c.streamWidth() && it.stream.fitW == c.width {
			c.feed(it, d.Text)
		}
		it.lines = nil
	case *engine.RetryScheduled:
		if d.Op == "model" {
			c.dropStreaming()
		}
	case *engine.Decided:
		c.decided(ev, d)
	case *engine.WorkflowStarted:
		c.steps = map[string]*chatItem{}
	case *engine.WorkflowStepFinished:
		if d.Step != "" {
			st := c.stepItem(d.Step)
			st.step.end = d
			changed(st)
		}
	case *engine.ToolStarted:
		if it := c.byCall[keyOf(ev, d.ID)]; it != nil {
			it.status, it.args = "running", string(d.Args)
			if it.name == agentTool { // the arguments as run, edited at the gate or not
				it.agent, it.task = delegation(d.Args)
			}
			changed(it)
		}
	case *engine.ToolFinished:
		if it := c.byCall[keyOf(ev, d.ID)]; it != nil {
			it.status, it.result, it.truncated = finishedStatus(d), d.Result, d.Truncated
			changed(it)
		}
	case *engine.RunFinished:
		c.runFinished(d)
	}
}

// decided drops the streamed text for the decision: its text, and a line
// per call (a workflow step's in the step's line).
func (c *chat) decided(ev engine.Event, d *engine.Decided) {
	var pre *streamed
	if n := len(c.items); n > 0 && c.items[n-1].streaming {
		pre = c.handOver(c.items[n-1], d.Text)
	}
	c.dropStreaming()
	if d.Text != "" {
		c.add(&chatItem{kind: itemAssistant, text: d.Text, yours: ev.Run == c.shellRun && ev.Run != "", pre: pre})
	}
	for _, tc := range d.ToolCalls {
		call := c.newCall(ev, tc)
		name := ""
		if ev.Workflow != "" {
			name = stepOfCall(tc.ID)
		}
		if name == "" {
			c.add(call)
			continue
		}
		// A workflow step's call is drawn in the step's line.
		st := c.stepItem(name)
		call.parent = st
		st.step.calls = append(st.step.calls, call)
		c.byCall[call.call] = call
		changed(st)
	}
}

// runFinished says how a run ended when it did not answer.
func (c *chat) runFinished(d *engine.RunFinished) {
	cut := d.StopReason == engine.StopCancelled && c.keepStreaming()
	c.dropStreaming()
	if d.StopReason == engine.StopCancelled && !cut && d.Partial != "" {
		// A resumed journal has no deltas: the text streamed before
		// the cancel comes with run_finished.
		c.add(&chatItem{kind: itemAssistant, text: d.Partial})
		cut = true
	}
	switch d.StopReason {
	case engine.StopStepLimit:
		c.add(&chatItem{kind: itemNote, text: "Stopped: " + d.Error})
	case engine.StopCancelled:
		if cut {
			c.add(&chatItem{kind: itemNote, text: "Cancelled: the answer above was cut off."})
		} else {
			c.add(&chatItem{kind: itemNote, text: "Cancelled."})
		}
	case engine.StopError:
		c.add(&chatItem{kind: itemNote, text: "Error: " + d.Error})
	case engine.StopGuardrail:
		c.add(&chatItem{kind: itemNote, text: "Stopped: " + d.Error})
	}
}

func (c *chat) textWidth() int { return max(c.width-2, 10) }

// streamWidth is the width streamed text is wrapped at: glamour's, inside
// its margins.
func (c *chat) streamWidth() int { return c.textWidth() - 2*len(markdownMargin) }

// hookNote is what the Chat says of a hook's run: what it blocked, what
// it told the person, how it failed ("" for a hook that only let things
// be: the Timeline has those).
func hookNote(d *engine.HookRun) string {
	what := string(d.Event) + " hook"
	if d.Tool != "" {
		what += " on " + d.Tool
	}
	switch {
	case d.Error != "":
		return "⚓ " + what + ": " + engine.OneLine(d.Error, 160)
	case d.Decision == engine.HookDeny || d.Decision == engine.HookBlock:
		return "⚓ " + what + " " + map[string]string{engine.HookDeny: "denied", engine.HookBlock: "blocked"}[d.Decision] + ": " + engine.OneLine(d.Reason, 160)
	case d.Stop != "":
		return "⚓ " + what + " stopped the run: " + engine.OneLine(d.Stop, 160)
	case d.Output != "":
		return "⚓ " + what + ": " + engine.OneLine(d.Output, 160)
	}
	return ""
}
