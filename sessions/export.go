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
	fmt.Fprintf(&b, "Session `%s` · model %s · %d runs · %d steps · created %s\n\n", l.Meta.ID, orDash(l.Meta.Model), l.Meta.Runs, l.Meta.LastStep, l.Meta.Created.Format(time.DateTime))
	for _, ev := range l.Events {
		if ev.ParentRun != "" {
			subRunMarkdown(&b, ev)
			continue
		}
		switch d := ev.Data.(type) {
		case *engine.RunStarted:
			fmt.Fprintf(&b, "## You\n\n%s\n\n", d.Task)
		case *engine.Handoff:
			fmt.Fprintf(&b, "- handed off to **%s**\n", d.To)
		case *engine.ContextCompacted:
			fmt.Fprintf(&b, "- context compacted: the first %d messages are summarised for the model (%d → %d tokens); they stay here in full\n", d.Upto, d.TokensBefore, d.TokensAfter)
		case *engine.ModelChanged:
			fmt.Fprintf(&b, "- model changed to %s\n", d.Model)
		case *engine.Decided:
			if len(d.ToolCalls) == 0 {
				fmt.Fprintf(&b, "## %s\n\n%s\n\n", cmp.Or(ev.Agent, "agentty"), d.Text)
				continue
			}
			if d.Text != "" {
				fmt.Fprintf(&b, "%s\n\n", d.Text)
			}
		case *engine.ToolFinished:
			fmt.Fprintf(&b, "- step %d: `%s` → %s: %s\n", ev.Step, d.Name, d.Status, engine.OneLine(d.Result, 200))
		case *engine.StepFinished:
			if d.ToolCalls > 0 {
				b.WriteString("\n")
			}
		case *engine.MemoryChanged:
			if d.Op == engine.MemorySet {
				fmt.Fprintf(&b, "- memory: %s = %s\n", d.Key, d.Value)
			} else {
				fmt.Fprintf(&b, "- memory: forgot %s\n", d.Key)
			}
		case *engine.RunFinished:
			if d.StopReason != engine.StopAnswered {
				fmt.Fprintf(&b, "_Run stopped: %s. %s_\n\n", d.StopReason, d.Error)
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
		fmt.Fprintf(b, "%s**%s** was asked (`%s`): %s\n%s\n", q, ev.Agent, ev.Run, engine.OneLine(d.Task, 200), q)
	case *engine.Decided:
		if len(d.ToolCalls) == 0 {
			fmt.Fprintf(b, "%s**%s** answered: %s\n%s\n", q, ev.Agent, engine.OneLine(d.Text, 400), q)
		}
	case *engine.ToolFinished:
		fmt.Fprintf(b, "%s- %s, step %d: `%s` → %s: %s\n", q, ev.Agent, ev.Step, d.Name, d.Status, engine.OneLine(d.Result, 200))
	case *engine.MemoryChanged:
		fmt.Fprintf(b, "%s- %s, memory: %s %s\n", q, ev.Agent, d.Op, d.Key)
	case *engine.Handoff:
		fmt.Fprintf(b, "%s- %s handed off to **%s**\n", q, ev.Agent, d.To)
	case *engine.RunFinished:
		if d.StopReason != engine.StopAnswered {
			fmt.Fprintf(b, "%s_%s stopped: %s. %s_\n%s\n", q, ev.Agent, d.StopReason, d.Error, q)
		}
	}
}

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
