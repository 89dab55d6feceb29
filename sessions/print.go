package sessions

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/agentty/agentty/engine"
)

// PrintSteps prints a session's timeline as a tree: each top-level run and
// its steps, and under the step whose call delegated to it, each sub-run
// (indented) with its own steps.
func PrintSteps(w io.Writer, steps []Step) {
	byRun := map[string][]Step{}
	subs := map[string][]string{} // "run#step" → the sub-runs its calls started
	var tops []string
	for _, s := range steps {
		if _, seen := byRun[s.Run]; !seen {
			if s.ParentRun == "" {
				tops = append(tops, s.Run)
			} else {
				k := s.ParentRun + "#" + strconv.Itoa(s.ParentStep)
				subs[k] = append(subs[k], s.Run)
			}
		}
		byRun[s.Run] = append(byRun[s.Run], s)
	}
	var print func(run string, depth int)
	print = func(run string, depth int) {
		pad := strings.Repeat("    ", depth)
		for _, s := range byRun[run] {
			retries := ""
			if s.Retries > 0 {
				retries = fmt.Sprintf(" (%d retries)", s.Retries)
			}
			fmt.Fprintf(w, "%s  step %-3d %-11s %s%s\n", pad, s.Step, s.Status, s.Decision, retries)
			for _, t := range s.Tools {
				fmt.Fprintf(w, "%s           %-8s %s %dms: %s\n", pad, t.Status, t.Name, t.DurationMS, t.Result)
			}
			for _, r := range s.Refused {
				fmt.Fprintf(w, "%s           refused  %s\n", pad, engine.OneLine(r, 120))
			}
			started := subs[run+"#"+strconv.Itoa(s.Step)]
			slices.SortStableFunc(started, func(a, b string) int { // in the decision's order
				return cmp.Compare(slices.Index(s.Calls, byRun[a][0].ParentCall), slices.Index(s.Calls, byRun[b][0].ParentCall))
			})
			for _, sub := range started {
				fmt.Fprintf(w, "%s    ↳ agent %s (%s):\n", pad, byRun[sub][0].Agent, sub)
				print(sub, depth+1)
			}
		}
	}
	for _, run := range tops {
		name := run
		if a := byRun[run][0].Agent; a != "" {
			name += " (agent " + a + ")"
		}
		fmt.Fprintf(w, "%s:\n", name)
		print(run, 0)
	}
}

// WaitingFor says what ev, a gate_paused or question_asked, waits for.
func WaitingFor(ev *engine.Event) string {
	switch d := ev.Data.(type) {
	case *engine.GatePaused:
		what := fmt.Sprintf("the pause at step %d (%s", ev.Step, d.Reason)
		if d.ToolCall != nil {
			what += ", " + d.ToolCall.Name
		}
		return what + ")"
	case *engine.QuestionAsked:
		return fmt.Sprintf("the question at step %d", ev.Step)
	}
	return fmt.Sprintf("the pause at step %d", ev.Step)
}
