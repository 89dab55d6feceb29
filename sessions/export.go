package sessions

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// Fork makes a new session whose journal is the prefix of id's up to the end
// of step at. The source is only read, so it may be open elsewhere.
func (s *Store) Fork(id string, at int) (string, error) {
	l, err := s.Load(id)
	if err != nil {
		return "", err
	}
	if at < 0 || at > l.Session.Steps {
		return "", fmt.Errorf("sessions: fork %s: step %d is not in the session (it has steps 0 to %d)", id, at, l.Session.Steps)
	}
	j, err := s.Create()
	if err != nil {
		return "", err
	}
	for _, ev := range l.Events {
		// A run that starts at step `at` begins after it.
		if ev.Step > at || ev.Step == at && ev.Kind == engine.KindRunStarted {
			break
		}
		ev.Session = j.ID
		if err := j.Emit(ev); err != nil {
			j.Close()
			return "", err
		}
	}
	j.mu.Lock()
	j.meta.Title = Title(fmt.Sprintf("%s (fork of %s at step %d)", l.Meta.Title, id, at))
	j.mu.Unlock()
	if err := j.Close(); err != nil {
		return "", err
	}
	return j.ID, nil
}

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
		switch d := ev.Data.(type) {
		case *engine.RunStarted:
			fmt.Fprintf(&b, "## You\n\n%s\n\n", d.Task)
		case *engine.DecisionData:
			if len(d.ToolCalls) == 0 {
				fmt.Fprintf(&b, "## agentty\n\n%s\n\n", d.Text)
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

// Step is one step of a session's timeline, as show prints it.
type Step struct {
	Run      string        `json:"run"`
	Step     int           `json:"step"`
	Decision string        `json:"decision"`
	Tools    []StepTool    `json:"tools,omitempty"`
	Retries  int           `json:"retries,omitempty"`
	Tokens   int           `json:"tokens,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	Status   string        `json:"status"`
}

// StepTool is a tool call of a Step.
type StepTool struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	DurationMS int64  `json:"duration_ms"`
	Result     string `json:"result"`
}

// Timeline summarises events step by step.
func Timeline(events []engine.Event) []Step {
	var out []Step
	var start time.Time
	cur := func() *Step { return &out[len(out)-1] }
	for _, ev := range events {
		switch d := ev.Data.(type) {
		case *engine.StepStarted:
			out = append(out, Step{Run: ev.Run, Step: ev.Step, Status: "running"})
			start = ev.Time
		case *engine.DecisionData:
			if len(out) == 0 {
				continue
			}
			if len(d.ToolCalls) == 0 {
				cur().Decision = "answer: " + engine.OneLine(d.Text, 60)
			} else {
				var names []string
				for _, c := range d.ToolCalls {
					names = append(names, c.Name)
				}
				cur().Decision = "call " + strings.Join(names, ", ")
			}
		case *engine.ToolFinished:
			if len(out) > 0 {
				cur().Tools = append(cur().Tools, StepTool{Name: d.Name, Status: d.Status, DurationMS: d.DurationMS, Result: engine.OneLine(d.Result, 80)})
			}
		case *engine.RetryData:
			if len(out) > 0 {
				cur().Retries++
			}
		case *engine.UsageData:
			if len(out) > 0 {
				cur().Tokens = d.PromptTokens + d.CompletionTokens
			}
		case *engine.StepFinished:
			if len(out) > 0 {
				cur().Status, cur().Duration = "ok", ev.Time.Sub(start)
			}
		case *engine.RunFinished:
			if len(out) > 0 && cur().Run == ev.Run && d.StopReason != engine.StopAnswered {
				cur().Status = string(d.StopReason)
			}
		}
	}
	for i := range out {
		if out[i].Status == "running" && i < len(out)-1 {
			out[i].Status = "interrupted"
		}
	}
	return out
}

// JournalPath returns the path of a session's journal, for messages.
func (s *Store) JournalPath(id string) string { return filepath.Join(s.dir, id, "events.jsonl") }
