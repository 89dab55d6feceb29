package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Workspace is the folder the file tools work in. Every path is confined to
// it: "..", an absolute path elsewhere, a symlink that points out, and a
// symlinked parent folder that leads out are all refused (the last two by
// os.Root, which resolves each step inside the root).
type Workspace struct {
	dir  string
	root *os.Root
}

// OpenWorkspace opens dir as the workspace.
func OpenWorkspace(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("tools: workspace %s: %w", dir, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("tools: workspace %s: %w", dir, err)
	}
	return &Workspace{dir: abs, root: root}, nil
}

// Dir returns the workspace's absolute path.
func (w *Workspace) Dir() string { return w.dir }

// Close releases the workspace.
func (w *Workspace) Close() error { return w.root.Close() }

// ErrOutside is the refusal of a path that leaves the workspace.
var ErrOutside = errors.New("is outside the workspace")

// rel turns a path the model gave into one relative to the workspace, or
// refuses it.
func (w *Workspace) rel(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" || p == "." {
		return ".", nil
	}
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(w.dir, filepath.Clean(p))
		if err != nil || r == ".." || strings.HasPrefix(r, "../") {
			return "", fmt.Errorf("refused: %s %w (%s); use a path inside it", p, ErrOutside, w.dir)
		}
		return r, nil
	}
	r := filepath.Clean(p)
	if r == ".." || strings.HasPrefix(r, "../") {
		return "", fmt.Errorf("refused: %s %w: it climbs out of it with \"..\"", p, ErrOutside)
	}
	return r, nil
}

// explain turns an os.Root error into a short, honest tool result.
func (w *Workspace) explain(p string, err error) error {
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "path escapes from parent"):
		return fmt.Errorf("refused: %s %w: a symlink on the way leads out", p, ErrOutside)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", p, pe.Err)
	}
	return err
}
