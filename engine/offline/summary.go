package offline

import (
	"strconv"
	"strings"

	"github.com/agentty/agentty/engine"
)

// summaryLimit bounds an extractive summary, in bytes.
const summaryLimit = 1500

// Extract is the offline model's summary of a summary call's transcript:
// extractive and deterministic. It keeps the lines that say what was asked
// and what came of it ("Person: …", "Result of …: …", the agent's answers),
// newest last, each clipped to one line, and the summary that came before
// (clipped), within summaryLimit bytes: when they do not fit, the oldest
// lines go first.
func Extract(req *engine.Request) string {
	if len(req.Messages) == 0 {
		return ""
	}
	text := req.Messages[len(req.Messages)-1].Content
	before, rest, found := strings.Cut(text, "\nThe conversation:\n")
	if !found {
		rest, before = text, ""
	}
	before = strings.TrimPrefix(before, "Summary of what came before:\n")
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		if strings.HasPrefix(l, " ") {
			continue // a message's later line (the transcript indents them): data, not a label
		}
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "Person: "):
			lines = append(lines, "- asked: "+engine.OneLine(strings.TrimPrefix(l, "Person: "), 160))
		case strings.HasPrefix(l, "Agent: "):
			lines = append(lines, "- answered: "+engine.OneLine(strings.TrimPrefix(l, "Agent: "), 160))
		case strings.HasPrefix(l, "Result of "):
			lines = append(lines, "- "+engine.OneLine(l, 160))
		}
	}
	// Newest first within the limit, then back in order.
	size, keep := 0, len(lines)
	for keep > 0 && size+len(lines[keep-1])+1 <= summaryLimit*2/3 {
		keep--
		size += len(lines[keep]) + 1
	}
	var b strings.Builder
	if before = strings.TrimSpace(before); before != "" {
		b.WriteString("Earlier: ")
		b.WriteString(engine.OneLine(before, summaryLimit-size-10))
		b.WriteString("\n")
	}
	if keep > 0 {
		b.WriteString("- (" + strconv.Itoa(keep) + " older lines left out)\n")
	}
	for _, l := range lines[keep:] {
		b.WriteString(l)
		b.WriteString("\n")
	}
	return strings.TrimSpace(b.String())
}
