package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentty/agentty/engine"
)

// EditFile replaces an exact string in a file of the workspace. Its policy
// is ask.
func (w *Workspace) EditFile() engine.Tool {
	return engine.Tool{
		Name:        "edit_file",
		Description: "Edit a text file in the workspace by replacing an exact string. old must occur exactly once unless replace_all is true.",
		Schema: []byte(`{"type":"object","properties":{"path":{"type":"string","minLength":1},"old":{"type":"string","minLength":1},` +
			`"new":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["path","old","new"],"additionalProperties":false}`),
		Policy:  engine.PolicyAsk,
		Changes: true,
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct {
				Path, Old, New string
				ReplaceAll     bool `json:"replace_all"`
			}
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			rel, err := w.rel(in.Path)
			if err != nil {
				return "", err
			}
			b, st, err := w.readRegular(in.Path, rel, 20<<20)
			if err != nil {
				return "", err
			}
			if isBinary(b) {
				return "", fmt.Errorf("refused: %s is a binary file", in.Path)
			}
			text := string(b)
			n := strings.Count(text, in.Old)
			switch {
			case n == 0:
				return "", fmt.Errorf("old text not found in %s; read the file and copy the text exactly", in.Path)
			case n > 1 && !in.ReplaceAll:
				return "", fmt.Errorf("old text occurs %d times in %s; give more context or set replace_all", n, in.Path)
			}
			if err := w.writeRegular(in.Path, rel, []byte(strings.ReplaceAll(text, in.Old, in.New)), st.Mode().Perm()); err != nil {
				return "", err
			}
			return fmt.Sprintf("edited %s: %d replacement(s)", rel, n), nil
		},
	}
}
