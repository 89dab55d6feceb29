package sessions

import (
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// Step is one step of a session's timeline, as show prints it. A
// sub-run's step names its agent, its parent run and the parent's step
// whose call started it.
type Step struct {
	Run        string `json:"run"`
	Agent      string `json:"agent,omitempty"`
	ParentRun  string `json:"parent_run,omitempty"`
	ParentStep int    `json:"parent_step,omitempty"`
	ParentCall string `json:"parent_call,omitempty"`
	Step       int    `json:"step"`
	Decision   string `json:"decision"`
	// Calls are the ids of the decision's tool calls, in its order.
	Calls   []string   `json:"calls,omitempty"`
	Tools   []StepTool `json:"tools,omitempty"`
	Retries int        `json:"retries,omitempty"`
	// Refused are the answers to the step's pauses and questions that
	// were not taken (not signed by whoever may steer the session).
	Refused  []string      `json:"refused,omitempty"`
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

// Timeline summarises events step by step, in the order the steps
// started. Steps are numbered across the session, so the events of
// parallel sub-runs, which interleave, each find their own step.
func Timeline(events []engine.Event) []Step {
	var out []Step
	index := map[int]int{}        // step → its place in out
	last := map[string]int{}      // run → the place of its last step
	startedAt := map[string]int{} // sub-run → its parent's step
	starts := map[int]time.Time{} // step → when it started
	at := func(step int) *Step {
		if i, ok := index[step]; ok {
			return &out[i]
		}
		return nil
	}
	for _, ev := range events {
		if _, ok := ev.Data.(*engine.StepStarted); ok {
			index[ev.Step], last[ev.Run] = len(out), len(out)
			out = append(out, Step{Run: ev.Run, Agent: ev.Agent, ParentRun: ev.ParentRun, ParentStep: startedAt[ev.Run], ParentCall: ev.ParentCall, Step: ev.Step, Status: "running"})
			starts[ev.Step] = ev.Time
			continue
		}
		if _, ok := ev.Data.(*engine.RunStarted); ok && ev.ParentRun != "" {
			startedAt[ev.Run] = ev.Step
			continue
		}
		cur := at(ev.Step)
		if cur == nil || cur.Run != ev.Run {
			if d, ok := ev.Data.(*engine.RunFinished); ok {
				if i, ok := last[ev.Run]; ok && d.StopReason != engine.StopAnswered {
					out[i].Status = string(d.StopReason)
				}
			}
			continue // a sub-run's run_finished carries its parent's step
		}
		switch d := ev.Data.(type) {
		case *engine.Decided:
			if len(d.ToolCalls) == 0 {
				cur.Decision = "answer: " + engine.OneLine(d.Text, 60)
			} else {
				var names []string
				for _, c := range d.ToolCalls {
					names = append(names, c.Name)
					cur.Calls = append(cur.Calls, c.ID)
				}
				cur.Decision = "call " + strings.Join(names, ", ")
			}
		case *engine.ToolFinished:
			cur.Tools = append(cur.Tools, StepTool{Name: d.Name, Status: d.Status, DurationMS: d.DurationMS, Result: engine.OneLine(d.Result, 80)})
		case *engine.RetryScheduled:
			cur.Retries++
		case *engine.GateResumed:
			cur.Refused = append(cur.Refused, d.Refused...)
		case *engine.QuestionAnswered:
			cur.Refused = append(cur.Refused, d.Rejected...)
		case *engine.UsageRecorded:
			cur.Tokens = d.PromptTokens + d.CompletionTokens
		case *engine.StepFinished:
			cur.Status, cur.Duration = "ok", ev.Time.Sub(starts[ev.Step])
		case *engine.RunFinished:
			if d.StopReason != engine.StopAnswered {
				cur.Status = string(d.StopReason)
			}
		}
	}
	// A step still running is interrupted unless it is the last one of a
	// run of the session's last top-level run (its sub-runs included): a
	// run that may still be going, or may be continued.
	lastTop := ""
	for _, st := range out {
		if st.ParentRun == "" {
			lastTop = st.Run
		}
	}
	for i := range out {
		top, _, _ := strings.Cut(out[i].Run, "/")
		if out[i].Status == "running" && (last[out[i].Run] != i || top != lastTop) {
			out[i].Status = "interrupted"
		}
	}
	return out
}

// Unanswered is the pause or question a session's journal ends waiting
// on (its gate_paused or question_asked, with no answer after it), nil
// when it waits on none: a run on a worker waiting for a console that
// may answer it, or one left so when its process died.
func Unanswered(events []engine.Event) *engine.Event {
	var open *engine.Event
	for i := range events {
		switch events[i].Kind {
		case engine.KindGatePaused, engine.KindQuestionAsked:
			open = &events[i]
		case engine.KindGateResumed, engine.KindQuestionAnswered, engine.KindRunFinished, engine.KindStepStarted:
			open = nil
		}
	}
	return open
}
