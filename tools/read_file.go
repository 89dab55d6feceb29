package tools

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentty/agentty/engine"
)

// maxReadLines caps one read_file result.
const maxReadLines = 2000

// ReadFile reads a text file of the workspace, or a range of its lines.
func (w *Workspace) ReadFile() engine.Tool {
	return engine.Tool{
		Name:        "read_file",
		Description: "Read a text file in the workspace. Lines are numbered from 1; start_line and end_line (inclusive) select a range.",
		Schema: []byte(`{"type":"object","properties":{"path":{"type":"string","minLength":1},` +
			`"start_line":{"type":"integer","minimum":1},"end_line":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`),
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct {
				Path      string
				StartLine int `json:"start_line"`
				EndLine   int `json:"end_line"`
			}
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			rel, err := w.rel(in.Path)
			if err != nil {
				return "", err
			}
			b, _, err := w.readRegular(in.Path, rel, 20<<20)
			if err != nil {
				return "", err
			}
			if isBinary(b) {
				return "", fmt.Errorf("refused: %s is a binary file", in.Path)
			}
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			from, to := max(in.StartLine, 1), len(lines)
			if in.EndLine > 0 {
				to = min(in.EndLine, len(lines))
			}
			if from > len(lines) {
				return "", fmt.Errorf("%s has %d lines; start_line %d is past the end", in.Path, len(lines), from)
			}
			if to < from {
				return "", fmt.Errorf("end_line %d is before start_line %d", to, from)
			}
			cut := ""
			if to-from+1 > maxReadLines {
				to = from + maxReadLines - 1
				cut = fmt.Sprintf("\n[%d more lines: read on with start_line %d]", len(lines)-to, to+1)
			}
			var out strings.Builder
			fmt.Fprintf(&out, "%s (lines %d-%d of %d)\n", rel, from, to, len(lines))
			for i := from; i <= to; i++ {
				fmt.Fprintf(&out, "%6d\t%s\n", i, lines[i-1])
			}
			return strings.TrimSuffix(out.String(), "\n") + cut, nil
		},
	}
}

// isBinary looks at the start of a file: a NUL byte, or bytes that are not
// UTF-8 (beyond a rune cut at the sample's end), mean binary.
func isBinary(b []byte) bool {
	head := b[:min(len(b), 8000)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
		if len(head) < len(b) {
			head = head[:len(head)-1]
		} else {
			break
		}
	}
	return !utf8.Valid(head)
}
