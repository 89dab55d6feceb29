package tools

import (
	"encoding/json"
	"fmt"
	"path/filepath"
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
	switch call.Name {
	case "run_shell":
		var in struct{ Command string }
		if json.Unmarshal(call.Args, &in) != nil {
			return "", false
		}
		return fmt.Sprintf("$ %s\n(in %s)", in.Command, w.dir), true
	case "write_file", "edit_file":
		path, old, cur, why := w.change(call)
		if why != "" {
			return "(no preview: " + why + ")", true
		}
		return fileDiff(path, old, cur), path != ""
	}
	return "", false
}

// Change is what a write_file or edit_file call would do: the file's path
// (absolute), the text it holds and the text it would hold. ok is false
// for other calls, and for those whose effect cannot be told.
func (w *Workspace) Change(call *engine.ToolCall) (path, old, new string, ok bool) {
	if call.Name != "write_file" && call.Name != "edit_file" {
		return "", "", "", false
	}
	p, old, new, why := w.change(call)
	if why != "" || p == "" {
		return "", "", "", false
	}
	rel, err := w.rel(p)
	if err != nil {
		return "", "", "", false
	}
	return filepath.Join(w.dir, rel), old, new, true
}

// change is Change with the path as the call gave it, or why its effect
// cannot be told.
func (w *Workspace) change(call *engine.ToolCall) (path, old, new, why string) {
	var in struct {
		Path, Content, Old, New string
		ReplaceAll              bool `json:"replace_all"`
	}
	if json.Unmarshal(call.Args, &in) != nil {
		return "", "", "", ""
	}
	old, err := w.current(in.Path)
	if err != nil {
		return "", "", "", err.Error()
	}
	if call.Name == "write_file" {
		return in.Path, old, in.Content, ""
	}
	switch n := strings.Count(old, in.Old); {
	case in.Old == "" || n == 0:
		return "", "", "", "the old text is not in " + in.Path + "; the call will fail"
	case n > 1 && !in.ReplaceAll:
		return "", "", "", fmt.Sprintf("the old text occurs %d times in %s; the call will fail", n, in.Path)
	}
	return in.Path, old, strings.ReplaceAll(old, in.Old, in.New), ""
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

// Abs is the absolute path of the workspace path p; false when p leads
// out of the workspace.
func (w *Workspace) Abs(p string) (string, bool) {
	rel, err := w.rel(p)
	if err != nil {
		return "", false
	}
	return filepath.Join(w.dir, rel), true
}
