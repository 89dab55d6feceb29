package ui

// The Timeline's keys, its rows as drawn, and a step's details.

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentty/agentty/engine"
)

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
	t.top = max(min(t.top, len(order)-1, len(order)-t.height), 0) // no blank rows below while rows are hidden above
	out := make([]string, 0, t.height)
	for p := t.top; p < len(order) && len(out) < t.height; p++ {
		i := order[p]
		r := &t.rows[i]
		indent := strings.Repeat("  ", min(r.depth, maxIndent))
		var line string
		if r.compact != nil {
			line = compactRow(indent, r.step, r.compact, width)
		} else if r.wf != nil || r.hook {
			extra := ""
			if r.dur > 0 {
				extra = " " + fmtDur(r.dur)
			}
			right := extra + " " + statusStyle(r.status).Render(r.status)
			room := max(width-ansi.StringWidth(right), 0)
			text := "▣ " + t.label(i)
			if r.hook {
				text = r.text
			}
			line = padRight(ansi.Truncate(indent+styleRun.Render(text), room, "…"), room) + right
		} else if r.phase == "" && !r.judge {
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
			switch {
			case r.judge: // no phase of its own: it judges the run's task or answer
				left = fmt.Sprintf("%s⚖ %s", indent, t.label(i))
			case r.agent != "": // the agent's name matters more than "act" (its icon says so)
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
	if r.judge {
		s = "judge " + r.agent
	}
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
	for _, h := range d.hooks {
		fmt.Fprintf(&b, "Hook: %s\n", h)
	}
	if len(d.files) > 0 {
		fmt.Fprintf(&b, "Files changed (/diff %d shows how; /rewind %d undoes it): %s\n", d.step, d.step, strings.Join(d.files, ", "))
	}
	for _, r := range d.retries {
		fmt.Fprintf(&b, "Retry %s attempt %d after %dms: %s\n", r.Op, r.Attempt, r.DelayMS, r.Cause)
	}
	writeDecision(&b, d)
	if u := d.usage; u != nil {
		est := ""
		if u.Estimated {
			est = " (estimated)"
		}
		cached := ""
		if u.CachedTokens > 0 {
			cached = fmt.Sprintf(" (%d cached)", u.CachedTokens)
		}
		fmt.Fprintf(&b, "\nTokens: %d in%s, %d out%s · %s\n", u.PromptTokens, cached, u.CompletionTokens, est, engine.FormatCost(u.Cost, u.Priced, 1))
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

// writeDecision writes a step's decision and the results of its tool
// calls.
func writeDecision(b *strings.Builder, d *stepDetail) {
	if dec := d.decision; dec != nil {
		b.WriteString("\nDecision")
		if dec.Attempts > 1 {
			fmt.Fprintf(b, " (after %d attempts)", dec.Attempts)
		}
		b.WriteString(":\n")
		if dec.Reasoning != "" {
			fmt.Fprintf(b, "  reasoning: %s\n", dec.Reasoning)
		}
		if dec.Text != "" {
			fmt.Fprintf(b, "  %s\n", dec.Text)
		}
		for _, c := range dec.ToolCalls {
			fmt.Fprintf(b, "  call %s %s (%s)\n", c.Name, string(c.Args), c.ID)
		}
	}
	for _, tf := range d.tools {
		fmt.Fprintf(b, "\nTool %s: %s in %dms, %s", flatten(tf.Name), tf.Status, tf.DurationMS, count(tf.Attempts, "attempt"))
		if tf.Truncated {
			b.WriteString(", truncated")
		}
		fmt.Fprintf(b, "\n  args: %s\n", d.args[tf.ID])
		if tf.Error != "" {
			fmt.Fprintf(b, "  error: %s\n", tf.Error)
		}
		fmt.Fprintf(b, "  result:\n")
		for _, l := range strings.Split(tf.Result, "\n") {
			fmt.Fprintf(b, "    %s\n", l)
		}
	}
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
