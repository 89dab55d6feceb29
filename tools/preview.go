package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/agentty/agentty/engine"
)

// previewMax is the largest file a preview reads.
const previewMax = 4 << 20

// Preview says what a call of a workspace tool would do, for the person
// asked to approve it: a unified diff of the file write_file or edit_file
// would change, run_shell's whole command and the folder it runs in. ok is
// false for other tools, and for calls whose effect cannot be shown (the
// error says why, to show in its place).
func (w *Workspace) Preview(call *engine.ToolCall) (text string, ok bool) {
	var in struct {
		Path, Content, Old, New, Command string
		ReplaceAll                       bool `json:"replace_all"`
	}
	if json.Unmarshal(call.Args, &in) != nil {
		return "", false
	}
	switch call.Name {
	case "run_shell":
		return fmt.Sprintf("$ %s\n(in %s)", in.Command, w.dir), true
	case "write_file":
		old, err := w.current(in.Path)
		if err != nil {
			return "(no preview: " + err.Error() + ")", true
		}
		return fileDiff(in.Path, old, in.Content), true
	case "edit_file":
		old, err := w.current(in.Path)
		if err != nil {
			return "(no preview: " + err.Error() + ")", true
		}
		n := strings.Count(old, in.Old)
		switch {
		case in.Old == "" || n == 0:
			return "(no preview: the old text is not in " + in.Path + "; the call will fail)", true
		case n > 1 && !in.ReplaceAll:
			return fmt.Sprintf("(no preview: the old text occurs %d times in %s; the call will fail)", n, in.Path), true
		}
		return fileDiff(in.Path, old, strings.ReplaceAll(old, in.Old, in.New)), true
	}
	return "", false
}

// current is the text of the workspace's file p ("" when there is none).
func (w *Workspace) current(p string) (string, error) {
	rel, err := w.rel(p)
	if err != nil {
		return "", err
	}
	if _, err := w.root.Lstat(rel); err != nil {
		return "", nil // a new file
	}
	b, _, err := w.readRegular(p, rel, previewMax)
	if err != nil {
		return "", err
	}
	if isBinary(b) {
		return "", fmt.Errorf("%s is a binary file", p)
	}
	return string(b), nil
}

// fileDiff is the unified diff of path from old to new.
func fileDiff(path, old, new string) string {
	if old == new {
		return "(" + path + " would not change)"
	}
	from := "a/" + path
	if old == "" {
		from = "/dev/null"
	}
	return strings.TrimRight(udiff.Unified(from, "b/"+path, old, new), "\n")
}
