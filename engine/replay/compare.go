package replay

import (
	"fmt"
	"strings"

	"github.com/agentty/agentty/engine"
)

// What a replay is compared with and takes from its recording: each tool
// result against the recorded one (Compare), the answers its questions
// got, and the agent it ran as.

// Difference is a tool result that differs from its recording.
type Difference struct {
	Run  string   `json:"run"`
	Step int      `json:"step"`
	Call string   `json:"call"`
	Tool string   `json:"tool"`
	What string   `json:"what"`
	Diff []string `json:"diff,omitempty"`
}

// Compare compares each tool result of a replay with the recording's (up
// to step Until, when it is not negative): a sink of the replay's events.
type Compare struct {
	Recording *Recording
	Until     int
	Calls     int          // the tool results compared
	Diffs     []Difference // those that differ
}

// Emit compares ev, when it is a tool's result.
func (c *Compare) Emit(ev engine.Event) error {
	d, ok := ev.Data.(*engine.ToolFinished)
	if !ok || (c.Until >= 0 && ev.Step > c.Until) {
		return nil
	}
	c.Calls++
	was, found := c.Recording.Results[Call{Run: ev.Run, ID: d.ID}]
	diff := Difference{Run: ev.Run, Step: ev.Step, Call: d.ID, Tool: d.Name}
	switch {
	case !found:
		diff.What = "the recording has no such call"
	case was.Status != d.Status:
		diff.What = fmt.Sprintf("it ended %s, recorded %s", d.Status, was.Status)
		diff.Diff = LineDiff(was.Text, d.Result)
	case was.Text != d.Result:
		diff.What = "the result differs from the recording"
		diff.Diff = LineDiff(was.Text, d.Result)
	default:
		return nil
	}
	c.Diffs = append(c.Diffs, diff)
	return nil
}

// LineDiff shows how b differs from a, line by line ("-" recorded, "+"
// now), around a longest common subsequence; long texts are cut.
func LineDiff(a, b string) []string {
	const most = 400
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	x, y = x[:min(len(x), most)], y[:min(len(y), most)]
	// lcs[i][j]: the longest common subsequence of x[i:] and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			i, j = i+1, j+1
		case j < len(y) && (i == len(x) || lcs[i][j+1] > lcs[i+1][j]):
			out = append(out, "+ "+y[j])
			j++
		default:
			out = append(out, "- "+x[i])
			i++
		}
	}
	return out
}

// Answers are the answers a session's questions (ask_user) got, by
// the question's text.
func Answers(events []engine.Event) map[string]string {
	asked, out := map[string]string{}, map[string]string{}
	for _, ev := range events {
		switch d := ev.Data.(type) {
		case *engine.QuestionAsked:
			asked[ev.Run+"/"+d.ID] = d.Question.Question
		case *engine.QuestionAnswered:
			if q, ok := asked[ev.Run+"/"+d.ID]; ok && d.Refused == "" && !d.TimedOut {
				out[q] = d.Answer
			}
		}
	}
	return out
}

// Agent is the agent the session's first top-level run ran as
// ("" for none).
func Agent(events []engine.Event) string {
	for _, ev := range events {
		if _, ok := ev.Data.(*engine.RunStarted); ok && ev.ParentRun == "" {
			return ev.Agent
		}
	}
	return ""
}
