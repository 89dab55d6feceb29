package ui

// The Chat as drawn: each item's lines, the window over them, scrolling.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentty/agentty/engine"
)

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
		for _, p := range it.attached {
			lines = append(lines, styleDim.Render(ansi.Truncate(markdownMargin+"📎 "+flatten(Sanitize(p)), w, "…")))
		}
	case itemAssistant:
		if it.streaming {
			if it.stream.width != c.streamWidth() || it.stream.fitW != c.width {
				c.restream(it)
			}
			it.lines = it.stream.view()
			if it.buf.Len() == 0 && it.reasoning != "" {
				think := strings.Join(strings.Fields(it.reasoning), " ")
				think = ansi.TruncateLeft(think, max(ansi.StringWidth(think)-(c.streamWidth()-10), 0), "…")
				it.lines = []string{it.lines[0], fit(markdownMargin+styleDim.Render("thinking: "+think), c.width), it.lines[len(it.lines)-1]}
			}
			return it.lines
		}
		head := styleAgent.Render("▍agentty")
		if it.yours {
			head = styleUser.Render("▍You") + styleDim.Render(" · your command's output")
		}
		lines = append([]string{head}, c.answerLines(it, w)...)
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
	if failedCommand(status) {
		return styleErr.Render("✗ " + status)
	}
	return map[string]string{"ok": styleOK.Render("✓"), "error": styleErr.Render("✗"), "denied": styleErr.Render("⊘"),
		"skipped": styleDim.Render("↷"), "running": styleDim.Render("…"), "pending": styleDim.Render("·"), "not run": styleDim.Render("–"),
		"answered": styleNote.Render("✎ answered by you")}[status]
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
	name, tail := "⚙ "+flatten(it.name)+" ", size+" "+mark
	args := compactArgs(it.args, it.order, w-ansi.StringWidth(name)-ansi.StringWidth(tail))
	lines := []string{ansi.Truncate(styleTool.Render(name+args+tail), w, "")}
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

// compactArgs shows a call's arguments on one line of at most room cells:
// key="value" in the order of the tool's schema (order; the rest as
// written), strings unescaped, one ellipsis where the room ends.
func compactArgs(a string, order []string, room int) string {
	if a == "" || a == "{}" {
		return ""
	}
	keys, vals := orderedArgs(a)
	if keys == nil {
		return ansi.Truncate(flatten(a), max(room, 1), "…")
	}
	rank := func(k string) int {
		if i := slices.Index(order, k); i >= 0 {
			return i
		}
		return len(order)
	}
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return rank(keys[x]) - rank(keys[y]) })
	var b strings.Builder
	for n, i := range idx {
		if n > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(keys[i] + "=" + vals[i])
	}
	return ansi.Truncate(flatten(Sanitize(b.String())), max(room, 1), "…")
}

// orderedArgs reads a JSON object's keys in the order written and its
// values as shown: a string in quotes as it reads (not JSON-escaped), the
// rest as compact JSON. keys is nil when a is not an object.
func orderedArgs(a string) (keys, vals []string) {
	dec := json.NewDecoder(strings.NewReader(a))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil
	}
	for dec.More() {
		k, err := dec.Token()
		name, ok := k.(string)
		var v json.RawMessage
		if err != nil || !ok || dec.Decode(&v) != nil {
			return nil, nil
		}
		var s string
		shown := string(v)
		if json.Unmarshal(v, &s) == nil {
			shown = `"` + s + `"`
		} else {
			var c bytes.Buffer
			if json.Compact(&c, v) == nil {
				shown = c.String()
			}
		}
		keys, vals = append(keys, name), append(vals, shown)
	}
	return keys, vals
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
