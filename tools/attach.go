package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agentty/agentty/engine"
)

// What the console's "@" offers and attaches: the workspace's files, and
// one file's text (or a folder's listing), read as read_file and list_dir
// read them: through the workspace's root (no "..", no link leads out),
// regular files only, bounded.

// MaxAttach bounds one attached file's text.
const MaxAttach = 64 << 10

// Files returns up to limit of the workspace's files and folders (these
// with a trailing /), as paths relative to it, in walk order, skipping .git
// and what .gitignore ignores; ctx bounds the walk.
func (w *Workspace) Files(ctx context.Context, limit int) []string {
	fsys := w.root.FS()
	ign := newIgnorer(fsys)
	var out []string
	fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case ctx.Err() != nil || len(out) >= limit:
			return fs.SkipAll
		case d.IsDir():
			if d.Name() == ".git" || (p != "." && ign.ignored(p, true)) {
				return fs.SkipDir
			}
			ign.load(p)
			if p != "." {
				out = append(out, p+"/") // a folder attaches its listing
			}
		case d.Type().IsRegular() && !ign.ignored(p, false):
			out = append(out, p)
		}
		return nil
	})
	return out
}

// Attach returns what "@path" attaches: the file's text, cut at MaxAttach,
// or a folder's listing; an error says why not (outside the workspace, not
// a regular file, not there).
func (w *Workspace) Attach(ctx context.Context, path string) (string, error) {
	args, _ := json.Marshal(map[string]string{"path": path})
	call := &engine.Call{Args: args, Memory: &engine.MemoryView{}}
	out, err := w.ReadFile().Func(ctx, call)
	if err != nil && strings.Contains(err.Error(), "is a folder") {
		return w.ListDir().Func(ctx, call)
	}
	if err != nil {
		return "", err
	}
	if len(out) > MaxAttach {
		out = engine.Clip(out, MaxAttach) + fmt.Sprintf("\n[cut at %d KiB]", MaxAttach>>10)
	}
	return out, nil
}
