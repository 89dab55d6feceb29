package tools

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/agentty/agentty/engine"
)

// WriteFile writes a file of the workspace, making its folders. Its policy
// is ask: it changes the world.
func (w *Workspace) WriteFile() engine.Tool {
	return engine.Tool{
		Name:        "write_file",
		Description: "Write a whole text file in the workspace, creating it (and its folders) or replacing it.",
		Schema: []byte(`{"type":"object","properties":{"path":{"type":"string","minLength":1},"content":{"type":"string"}},` +
			`"required":["path","content"],"additionalProperties":false}`),
		Policy:  engine.PolicyAsk,
		Changes: true,
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Path, Content string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			rel, err := w.rel(in.Path)
			if err != nil {
				return "", err
			}
			if rel == "." {
				return "", fmt.Errorf("a file path is needed")
			}
			if dir := filepath.Dir(rel); dir != "." {
				if err := w.root.MkdirAll(dir, 0o755); err != nil {
					return "", w.explain(in.Path, err)
				}
			}
			existed := true
			if _, err := w.root.Lstat(rel); err != nil {
				existed = false
			}
			if err := w.writeRegular(in.Path, rel, []byte(in.Content), 0o644); err != nil {
				return "", err
			}
			verb := "created"
			if existed {
				verb = "replaced"
			}
			return fmt.Sprintf("%s %s (%d bytes)", verb, rel, len(in.Content)), nil
		},
	}
}
