package eval

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/agentty/agentty/engine"
)

// Column is one way the suite was run, in a comparison: as recorded, or
// live with a prompt (a variant).
type Column struct {
	Name    string
	Results []*CaseResult // in the suite's order, as Runner.Run gives them
}

// WriteComparison shows the columns side by side: a matrix of the cases'
// verdicts, then, for each case whose verdict or answer differs between
// columns, each column's answer and why it failed. It returns the cases
// that changed.
func WriteComparison(out io.Writer, cols []Column) (changed int) {
	if len(cols) == 0 || len(cols[0].Results) == 0 {
		return 0
	}
	w := &trimmed{w: out}
	defer w.flush()
	width := len("case")
	for _, c := range cols[0].Results {
		width = max(width, utf8.RuneCountInString(c.Name))
	}
	colW := make([]int, len(cols))
	fmt.Fprintf(w, "%-*s", width, "case")
	for i, col := range cols {
		colW[i] = utf8.RuneCountInString(col.Name)
		for _, c := range col.Results {
			colW[i] = max(colW[i], len(verdictOf(c)))
		}
		fmt.Fprintf(w, "  %-*s", colW[i], col.Name)
	}
	fmt.Fprintln(w)
	var differ []int
	for k, c := range cols[0].Results {
		fmt.Fprintf(w, "%-*s", width, c.Name)
		for i, col := range cols {
			fmt.Fprintf(w, "  %-*s", colW[i], verdictOf(col.Results[k]))
		}
		fmt.Fprintln(w)
		if differs(cols, k) {
			differ = append(differ, k)
		}
	}
	fmt.Fprintf(w, "%-*s", width, "passed")
	for i, col := range cols {
		n := 0
		for _, c := range col.Results {
			if c.Status == Passed {
				n++
			}
		}
		fmt.Fprintf(w, "  %-*s", colW[i], fmt.Sprintf("%d/%d", n, len(col.Results)))
	}
	fmt.Fprintln(w)
	for _, k := range differ {
		fmt.Fprintf(w, "\n%s:\n", cols[0].Results[k].Name)
		for _, col := range cols {
			c := col.Results[k]
			fmt.Fprintf(w, "  %-*s  %-6s  %s\n", maxName(cols), col.Name, verdictOf(c), answerOf(c))
			for _, why := range caseReasons(c) {
				fmt.Fprintf(w, "  %*s    - %s\n", maxName(cols), "", engine.OneLine(why, 160))
			}
		}
	}
	return len(differ)
}

func maxName(cols []Column) int {
	n := 0
	for _, c := range cols {
		n = max(n, utf8.RuneCountInString(c.Name))
	}
	return n
}

// verdictOf is a case's status, flaky marked.
func verdictOf(c *CaseResult) string {
	if c.Flaky {
		return c.Status + "~"
	}
	return c.Status
}

// answerOf is the answer of the case's first run, on one line.
func answerOf(c *CaseResult) string {
	if len(c.Runs) == 0 || c.Runs[0] == nil {
		return ""
	}
	r := c.Runs[0]
	if r.Answer == "" {
		return "(no answer: " + strings.TrimSpace(r.Stop) + ")"
	}
	return engine.OneLine(r.Answer, 140)
}

// differs reports whether case k's verdict or answer is not the same in
// every column.
func differs(cols []Column, k int) bool {
	first := cols[0].Results[k]
	for _, col := range cols[1:] {
		c := col.Results[k]
		if c.Status != first.Status || answerOf(c) != answerOf(first) {
			return true
		}
	}
	return false
}

// trimmed writes lines without the spaces that pad their last column.
type trimmed struct {
	w    io.Writer
	line []byte
}

func (t *trimmed) Write(p []byte) (int, error) {
	for _, c := range p {
		if c == '\n' {
			t.flush()
			t.w.Write([]byte{'\n'})
			continue
		}
		t.line = append(t.line, c)
	}
	return len(p), nil
}

func (t *trimmed) flush() {
	t.w.Write([]byte(strings.TrimRight(string(t.line), " ")))
	t.line = t.line[:0]
}
