package workflow

// Workflow files: the folders they are read from, reading one safely,
// finding one by name.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentty/agentty/config"
)

// File is a workflow found in a workflows folder.
type File struct {
	W     *Workflow
	Scope string // workspace or user
}

// workflowPlaces are the folders workflows are read from, strongest first:
// the workspace's .agentty/workflows, then workflows beside the person's
// config.
func workflowPlaces(wsDir string, getenv func(string) string) []struct{ dir, scope string } {
	return []struct{ dir, scope string }{
		{filepath.Join(wsDir, ".agentty", "workflows"), "workspace"},
		{filepath.Join(filepath.Dir(config.Path(getenv)), "workflows"), "user"},
	}
}

// LoadFiles reads every *.yaml (and *.yml) file of the workflow
// folders; the workspace's wins a name clash. A bad file is an error in
// the list and the others still load.
func LoadFiles(wsDir string, getenv func(string) string) ([]File, []error) {
	var out []File
	var errs []error
	seen := map[string]bool{}
	for _, pl := range workflowPlaces(wsDir, getenv) {
		entries, err := os.ReadDir(pl.dir)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !(strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
				continue
			}
			w, err := readWorkflow(filepath.Join(pl.dir, e.Name()), pl.scope == "workspace", wsDir)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if seen[w.Name] {
				continue
			}
			seen[w.Name] = true
			out = append(out, File{W: w, Scope: pl.scope})
		}
	}
	return out, errs
}

// readWorkflow reads a workflow file: a regular file of at most 1 MiB
// (a FIFO cannot hang it), and, in the workspace, read through
// config.ReadIn: nothing (no symlink, the file's own included) leads out
// of it.
func readWorkflow(path string, inWorkspace bool, wsDir string) (*Workflow, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs // named absolutely in the workflow_started event, for --continue from anywhere
	}
	read := config.ReadSmall
	if inWorkspace {
		read = func(p string) ([]byte, error) { return config.ReadIn(realDir(wsDir), p, config.MaxFile) }
	}
	b, err := read(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return Parse(path, b)
}

// Find is the workflow named (or the file given).
func Find(target, wsDir string, getenv func(string) string) (*Workflow, error) {
	if strings.HasSuffix(target, ".yaml") || strings.HasSuffix(target, ".yml") || strings.ContainsRune(target, os.PathSeparator) {
		return readWorkflow(target, false, wsDir)
	}
	files, errs := LoadFiles(wsDir, getenv)
	for _, f := range files {
		if f.W.Name == target {
			return f.W, nil
		}
	}
	var names []string
	for _, f := range files {
		names = append(names, f.W.Name)
	}
	msg := fmt.Sprintf("no workflow is called %q", target)
	if len(names) > 0 {
		msg += "; the workflows are: " + strings.Join(names, ", ")
	} else {
		msg += " (put one in .agentty/workflows/NAME.yaml)"
	}
	for _, e := range errs {
		if strings.Contains(e.Error(), string(os.PathSeparator)+target+".y") {
			msg += "; its file did not load: " + e.Error()
		}
	}
	return nil, errors.New(msg)
}

// realDir is dir absolute, its symlinks resolved (as it is when they
// cannot be).
func realDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}
