package tools

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agentty/agentty/engine"
)

const maxListEntries = 500

// ListDir lists a folder of the workspace.
func (w *Workspace) ListDir() engine.Tool {
	return engine.Tool{
		Name:        "list_dir",
		Description: "List a folder in the workspace (default: its top). Folders end with /, symlinks show their target.",
		Schema:      []byte(`{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`),
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Path string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			rel, err := w.rel(in.Path)
			if err != nil {
				return "", err
			}
			entries, err := fs.ReadDir(w.root.FS(), rel)
			if err != nil {
				return "", w.explain(orDot(in.Path), err)
			}
			entries, left := w.notIgnored(rel, entries)
			var b strings.Builder
			fmt.Fprintf(&b, "%s: %d entries\n", rel, len(entries))
			if left > 0 {
				fmt.Fprintf(&b, "[%d more that .gitignore ignores, not shown]\n", left)
			}
			for i, e := range entries {
				if i == maxListEntries {
					fmt.Fprintf(&b, "[%d more entries not shown]\n", len(entries)-i)
					break
				}
				name := e.Name()
				switch {
				case e.Type()&fs.ModeSymlink != 0:
					target, _ := w.root.Readlink(joinRel(rel, name))
					fmt.Fprintf(&b, "%s -> %s\n", name, target)
				case e.IsDir():
					fmt.Fprintf(&b, "%s/\n", name)
				default:
					size := int64(0)
					if info, err := e.Info(); err == nil {
						size = info.Size()
					}
					fmt.Fprintf(&b, "%s (%d bytes)\n", name, size)
				}
			}
			return strings.TrimSuffix(b.String(), "\n"), nil
		},
	}
}

// notIgnored are the entries of folder rel that no .gitignore from the
// workspace's top down to rel ignores, and how many were left out. A
// folder asked for by name is listed even when it is ignored itself.
func (w *Workspace) notIgnored(rel string, entries []fs.DirEntry) ([]fs.DirEntry, int) {
	ign := newIgnorer(w.root.FS())
	ign.load(".")
	if rel != "." {
		parts := strings.Split(rel, "/")
		for i := range parts {
			ign.load(strings.Join(parts[:i+1], "/"))
		}
	}
	kept := entries[:0:0]
	for _, e := range entries {
		if !ign.ignored(joinRel(rel, e.Name()), e.IsDir()) {
			kept = append(kept, e)
		}
	}
	return kept, len(entries) - len(kept)
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}
