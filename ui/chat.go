package ui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/x/ansi"

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
	name, args, result, status string
	truncated                  bool
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

	lines []string
	width int
}

// streamWrap word-wraps text as it arrives: rows that are full never change,
// so each delta re-wraps only the unfinished last row, and the finished rows
// are fitted to the pane once and kept in lines (after a header). Rows are
// indented by glamour's margin, so that the text stays where it is when the
// finished message is rendered as Markdown.
type streamWrap struct {
	width int // wrapping width
	fitW  int // the pane's width
	lines []string
	cur   string
}

func newStreamWrap(width, fitW int, header string) streamWrap {
	return streamWrap{width: width, fitW: fitW, lines: []string{fit(header, fitW)}}
}

func (w *streamWrap) add(s string) {
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			w.cur += s
			break
		}
		w.cur += s[:i]
		w.finish(wrapRows(w.cur, w.width))
		w.cur = ""
		s = s[i+1:]
	}
	if rows := wrapRows(w.cur, w.width); len(rows) > 1 {
		w.finish(rows[:len(rows)-1])
		w.cur = rows[len(rows)-1]
	}
}

func (w *streamWrap) finish(rows []string) {
	for _, r := range rows {
		w.lines = append(w.lines, fit(markdownMargin+r, w.fitW))
	}
}

// view returns the header, the finished rows and the unfinished one. It
// shares the finished rows rather than copying them: it is valid until the
// next add.
func (w *streamWrap) view() []string {
	out := w.lines[:len(w.lines):cap(w.lines)]
	for _, r := range wrapRows(w.cur, w.width) {
		out = append(out, fit(markdownMargin+r, w.fitW))
	}
	return append(out, strings.Repeat(" ", w.fitW))
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
	items     []*chatItem
	byCall    map[callKey]*chatItem
	calls     map[callRef]*chatItem // each run's newest agent call with an id
	subs      map[string]*chatItem  // the delegation of each sub-run, by its id
	steps     map[string]*chatItem  // the steps of the workflow the last run carries out
	expanded  bool
	follow    bool
	topItem   int
	topLine   int
	width     int
	height    int
	renderers map[int]*glamour.TermRenderer
	style     string
}

func newChat(style string) chat {
	return chat{follow: true, byCall: map[callKey]*chatItem{}, calls: map[callRef]*chatItem{}, subs: map[string]*chatItem{},
		steps: map[string]*chatItem{}, renderers: map[int]*glamour.TermRenderer{}, style: style}
}

func (c *chat) add(it *chatItem) {
	c.items = append(c.items, it)
	if it.kind == itemTool {
		c.byCall[it.call] = it
	}
}

// newCall makes the item of a tool call that ev decided; a call of the
// tool agent becomes a delegation, found again by the sub-run it starts.
func (c *chat) newCall(ev engine.Event, tc engine.ToolCall) *chatItem {
	it := &chatItem{kind: itemTool, call: keyOf(ev, tc.ID), name: tc.Name, args: string(tc.Args), status: "pending"}
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
			call.status, call.result, call.truncated = string(d.Status), d.Result, d.Truncated
			changed(call)
		}
	case *engine.Handoff:
		sub.items = append(sub.items, &chatItem{kind: itemNote, text: "⇄ handed off to " + d.To, parent: it})
	case *engine.RunFinished:
		sub.done, sub.stop, sub.answer, sub.err = true, d.StopReason, d.Answer, d.Error
	}
	changed(it)
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
	if ev.ParentRun != "" {
		c.applySub(ev)
		return
	}
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		c.add(&chatItem{kind: itemUser, text: d.Task})
	case *engine.Handoff:
		c.add(&chatItem{kind: itemNote, text: "⇄ handed off to " + d.To})
	case *engine.Notice: // a warning from inside a run (compaction fell back to trimming)
		c.add(&chatItem{kind: itemNote, text: d.Message})
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
			it.stream.add(d.Text)
		}
		it.lines = nil
	case *engine.RetryScheduled:
		if d.Op == "model" {
			c.dropStreaming()
		}
	case *engine.Decided:
		c.dropStreaming()
		if d.Text != "" {
			c.add(&chatItem{kind: itemAssistant, text: d.Text})
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
			it.status, it.result, it.truncated = string(d.Status), d.Result, d.Truncated
			changed(it)
		}
	case *engine.RunFinished:
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
		}
	}
}

func (c *chat) textWidth() int { return max(c.width-2, 10) }

// streamWidth is the width streamed text is wrapped at: glamour's, inside
// its margins.
func (c *chat) streamWidth() int { return c.textWidth() - 2*len(markdownMargin) }

// linesOf returns an item's rendered lines, each fitted to the pane's
// width, rendering it if its cache is stale. A streaming item's cache is
// dropped by each delta, and re-rendering it touches only its last row.
func (c *chat) linesOf(it *chatItem) []string {
	w := c.textWidth()
	if it.lines != nil && it.width == w {
		return it.lines
	}
	it.width = w
	var lines []string
	switch it.kind {
	case itemUser:
		lines = append([]string{styleUser.Render("▍You")}, plainLines(it.text, w)...)
	case itemAssistant:
		if it.streaming {
			if sw := c.streamWidth(); it.stream.width != sw || it.stream.fitW != c.width {
				it.stream = newStreamWrap(sw, c.width, streamHeader)
				it.stream.add(it.buf.String())
			}
			it.lines = it.stream.view()
			if it.buf.Len() == 0 && it.reasoning != "" {
				think := strings.Join(strings.Fields(it.reasoning), " ")
				think = ansi.TruncateLeft(think, max(ansi.StringWidth(think)-(c.streamWidth()-10), 0), "…")
				it.lines = []string{it.lines[0], fit(markdownMargin+styleDim.Render("thinking: "+think), c.width), it.lines[len(it.lines)-1]}
			}
			return it.lines
		}
		lines = append([]string{styleAgent.Render("▍agentty")}, c.markdown(it.text, w)...)
	case itemTool:
		if it.name == agentTool {
			lines = delegationLines(it, w, c.expanded)
		} else {
			lines = toolLines(it, w, c.expanded)
		}
	case itemStep:
		lines = stepItemLines(it, w, c.expanded)
	case itemNote:
		for _, l := range wrapRows(it.text, w) {
			lines = append(lines, styleNote.Render(l))
		}
	}
	lines = append(lines, "")
	for i, l := range lines {
		lines[i] = fit(l, c.width)
	}
	it.lines = lines
	return lines
}

// statusMark is the mark of a tool call's status.
func statusMark(status string) string {
	return map[string]string{"ok": styleOK.Render("✓"), "error": styleErr.Render("✗"), "denied": styleErr.Render("⊘"),
		"skipped": styleDim.Render("↷"), "running": styleDim.Render("…"), "pending": styleDim.Render("·"), "not run": styleDim.Render("–")}[status]
}

// delegationLines draws a call of the tool agent: one line, the agent, its
// task (cut to leave room for the rest) and what its sub-run did,
//
//	⚙ agent researcher: find the sources…  → 3 steps, 2 tools ✓
//
// and, expanded (ctrl+x, as every tool call), the sub-run's own tool calls
// and nested delegations, indented, then its answer (or error).
func delegationLines(it *chatItem, w int, expanded bool) []string {
	head := "⚙ agent"
	if it.agent != "" {
		head += " " + it.agent
	}
	tail := ""
	if s := it.sub; s != nil {
		tail = fmt.Sprintf("  → %s, %s", count(s.steps, "step"), count(s.tools, "tool"))
	}
	tail += " " + statusMark(it.status)
	if it.task != "" {
		room := max(w-ansi.StringWidth(head)-2-ansi.StringWidth(tail), 12)
		head += ": " + ansi.Truncate(it.task, room, "…")
	}
	lines := []string{ansi.Truncate(styleTool.Render(head+tail), w, "…")}
	if !expanded {
		return lines
	}
	inner := max(w-2, 10)
	var body []string
	answer, failed := it.result, it.status == "error"
	if s := it.sub; s != nil {
		for _, c := range s.items {
			switch {
			case c.kind == itemNote:
				for _, l := range wrapRows(c.text, inner) {
					body = append(body, styleNote.Render(l))
				}
			case c.name == agentTool:
				body = append(body, delegationLines(c, inner, true)...)
			default:
				body = append(body, toolLines(c, inner, false)...)
			}
		}
		if s.done {
			answer, failed = s.answer, s.stop != engine.StopAnswered
			if answer == "" {
				answer = s.err
			}
		}
	}
	if answer != "" {
		label, style := "answer:", styleDim
		if failed {
			label, style = "error:", styleErr
		}
		body = append(body, style.Render(label))
		for _, l := range strings.Split(answer, "\n") {
			for _, r := range hangRows(l, inner-2) {
				body = append(body, "  "+r)
			}
		}
	}
	for _, l := range body {
		lines = append(lines, "  "+l)
	}
	return lines
}

func toolLines(it *chatItem, w int, expanded bool) []string {
	mark := statusMark(it.status)
	size := ""
	if it.status != "running" && it.status != "pending" {
		size = fmt.Sprintf(" → %s", byteSize(len(it.result)))
		if it.truncated {
			size += " (truncated)"
		}
	}
	head := fmt.Sprintf("⚙ %s %s%s %s", flatten(it.name), compactArgs(it.args), size, mark)
	lines := []string{ansi.Truncate(styleTool.Render(head), w, "…")}
	if !expanded {
		return lines
	}
	if it.args != "" && it.args != "{}" {
		for _, l := range wrapRows("args: "+prettyJSON(it.args), w-2) {
			lines = append(lines, "  "+styleDim.Render(l))
		}
	}
	for _, l := range strings.Split(it.result, "\n") {
		for _, r := range hangRows(l, w-2) {
			lines = append(lines, "  "+r)
		}
	}
	return lines
}

func compactArgs(a string) string {
	if a == "" || a == "{}" {
		return ""
	}
	var v map[string]any
	if json.Unmarshal([]byte(a), &v) != nil {
		return ansi.Truncate(flatten(a), 40, "…")
	}
	var parts []string
	for k, x := range v {
		b, _ := json.Marshal(x)
		parts = append(parts, k+"="+string(b))
	}
	slices.Sort(parts)
	return ansi.Truncate(flatten(strings.Join(parts, " ")), 40, "…")
}

func prettyJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func byteSize(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}

// invalidate drops every cached rendering (the width changed, or tool calls
// were expanded).
func (c *chat) invalidate() {
	for _, it := range c.items {
		it.lines = nil
	}
}

// view returns exactly height lines of the chat window.
// setSize sets the size of the pane's content; the rendered messages are
// dropped when the width changes.
func (c *chat) setSize(width, height int) {
	if c.width != width {
		c.width = width
		c.invalidate()
	}
	c.height = height
}

// view draws the messages in view. The Chat marks no row when focused.
func (c *chat) view(bool) []string {
	if c.follow {
		c.toBottom()
	}
	out := make([]string, 0, c.height)
	i, skip := c.topItem, c.topLine
	for ; i < len(c.items) && len(out) < c.height; i++ {
		ls := c.linesOf(c.items[i])
		if skip < len(ls) {
			ls = ls[skip:]
		} else {
			ls = nil
		}
		skip = 0
		out = append(out, ls[:min(len(ls), c.height-len(out))]...)
	}
	for len(out) < c.height {
		out = append(out, "")
	}
	return out
}

// toBottom anchors the window so that the last line is at the bottom.
func (c *chat) toBottom() {
	need := c.height
	for i := len(c.items) - 1; i >= 0; i-- {
		n := len(c.linesOf(c.items[i]))
		if n >= need {
			c.topItem, c.topLine = i, n-need
			return
		}
		need -= n
	}
	c.topItem, c.topLine = 0, 0
}

// scroll moves the window by n lines (negative: up). Reaching the bottom
// turns following back on.
// update handles a key while the Chat has the focus: a line up or down,
// the start, the end (where it follows new output again).
func (c *chat) update(msg tea.KeyMsg, k keyMap) {
	switch {
	case key.Matches(msg, k.Up):
		c.scroll(-1)
	case key.Matches(msg, k.Down):
		c.scroll(1)
	case key.Matches(msg, k.Top):
		c.scroll(-1 << 20)
	case key.Matches(msg, k.Bottom):
		c.follow = true
	}
}

func (c *chat) scroll(n int) {
	if len(c.items) == 0 {
		c.topItem, c.topLine, c.follow = 0, 0, true
		return // nothing to scroll (a new chat with a real model starts empty)
	}
	if c.topItem >= len(c.items) { // the item at the top was dropped (a retried stream)
		c.topItem, c.topLine = len(c.items)-1, 0
	}
	if c.follow {
		c.toBottom()
		c.follow = false
	}
	for ; n < 0; n++ {
		if c.topLine > 0 {
			c.topLine--
		} else if c.topItem > 0 {
			c.topItem--
			c.topLine = len(c.linesOf(c.items[c.topItem])) - 1
		} else {
			break
		}
	}
	for ; n > 0; n-- {
		if c.topLine+1 < len(c.linesOf(c.items[c.topItem])) {
			c.topLine++
		} else if c.topItem+1 < len(c.items) {
			c.topItem++
			c.topLine = 0
		}
	}
	// At the bottom when what is below the top fits the window.
	below := -c.topLine
	for i := c.topItem; i < len(c.items) && below <= c.height; i++ {
		below += len(c.linesOf(c.items[i]))
	}
	if below <= c.height {
		c.follow = true
	}
}

// stepItem returns the Chat's item of a workflow step, adding it when the
// step has none yet.
func (c *chat) stepItem(name string) *chatItem {
	if it := c.steps[name]; it != nil {
		return it
	}
	it := &chatItem{kind: itemStep, step: &stepChat{name: flatten(name)}}
	c.steps[name] = it
	c.add(it)
	return it
}

// stepItemLines draws a workflow step: one line, its name, how it is going
// and its output (cut to fit),
//
//	▣ step check: 23*17 = 391 ✓
//
// and, expanded (ctrl+x, as every tool call), its calls, a delegation with
// what its sub-run did, then its whole output.
func stepItemLines(it *chatItem, w int, expanded bool) []string {
	st := it.step
	status := "pending" // decided, not yet called
	if len(st.calls) > 0 {
		status = "running"
	}
	head := "▣ step " + st.name
	out := ""
	if e := st.end; e != nil {
		status = e.Status
		if e.Attempts > 1 {
			head += fmt.Sprintf(" (%d attempts)", e.Attempts)
		}
		if e.Items > 0 {
			head += " · " + count(e.Items, "item")
		}
		switch status {
		case "skipped":
			out = "skipped (its if was false)"
		case "not run":
			out = "not run"
		default:
			out = flatten(strings.TrimSpace(e.Output))
		}
	} else if len(st.calls) > 0 {
		var names []string
		for _, c := range st.calls {
			n := flatten(c.name)
			if c.name == agentTool && c.agent != "" {
				n += " " + c.agent
			}
			names = append(names, n)
		}
		out = "calling " + strings.Join(names, ", ")
	}
	tail := " " + statusMark(status)
	if out != "" {
		room := max(w-ansi.StringWidth(head)-2-ansi.StringWidth(tail), 12)
		head += ": " + ansi.Truncate(out, room, "…")
	}
	lines := []string{ansi.Truncate(styleTool.Render(head+tail), w, "…")}
	if !expanded {
		return lines
	}
	inner := max(w-2, 10)
	var body []string
	for _, c := range st.calls {
		if c.name == agentTool {
			body = append(body, delegationLines(c, inner, true)...)
		} else {
			body = append(body, toolLines(c, inner, false)...)
		}
	}
	if e := st.end; e != nil && e.Output != "" {
		label, style := "output:", styleDim
		if e.Status == "error" {
			label, style = "error:", styleErr
		}
		body = append(body, style.Render(label))
		for _, l := range strings.Split(e.Output, "\n") {
			for _, r := range hangRows(l, inner-2) {
				body = append(body, "  "+r)
			}
		}
	}
	for _, l := range body {
		lines = append(lines, "  "+l)
	}
	return lines
}
