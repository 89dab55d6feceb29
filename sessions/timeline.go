package sessions

import (
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

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
	Name       string            `json:"name"`
	Status     engine.ToolStatus `json:"status"`
	DurationMS int64             `json:"duration_ms"`
	Result     string            `json:"result"`
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
		case *engine.Decided:
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
		case *engine.RetryScheduled:
			if len(out) > 0 {
				cur().Retries++
			}
		case *engine.UsageRecorded:
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
