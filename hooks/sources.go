package hooks

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentty/agentty/config"
)

// Sources are the files hooks are read from, the person's first.
type Sources struct {
	// Person is agentty's config file's hooks key and Claude Code's
	// ~/.claude/settings.json's.
	Person []config.HookFile
	// Workspace is the folder's (ws.Hooks), run when Trusted.
	Workspace []config.HookFile
	Trusted   bool
	// Plugins are the hooks files of the plugins the person added (each
	// with its Plugin and Root): the person's own, run with
	// CLAUDE_PLUGIN_ROOT.
	Plugins []config.HookFile
}

// PersonFiles are the hooks of the person's own files: agentty's config
// (cfg, read from config.Path) and Claude Code's user settings
// ($CLAUDE_CONFIG_DIR or ~/.claude, settings.json). A file that cannot be
// read is a notice.
func PersonFiles(cfg *config.Settings, getenv func(string) string) ([]config.HookFile, []string) {
	var files []config.HookFile
	var notes []string
	if cfg != nil && len(cfg.Hooks) > 0 {
		files = append(files, config.HookFile{Path: config.Path(getenv), Raw: cfg.Hooks})
	}
	dir := getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		home := cmp.Or(getenv("HOME"), os.Getenv("HOME"))
		dir = filepath.Join(home, ".claude")
	}
	path := filepath.Join(dir, "settings.json")
	b, err := config.ReadSmall(path)
	switch {
	case os.IsNotExist(err):
	case err != nil:
		notes = append(notes, fmt.Sprintf("hooks: %s: %v; its hooks are not run", path, err))
	default:
		if f, err := config.ClaudeHooks(path, b); err != nil {
			notes = append(notes, err.Error()+"; its hooks are not run")
		} else if f != nil {
			files = append(files, *f)
		}
	}
	return files, notes
}

// Load reads the hooks of src: the workspace's marked not run when
// it is not trusted; a plugin's as the person's, scoped "plugin NAME". Files that do not parse, and entries not of Claude
// Code's shape, are notices; the rest load.
func Load(src Sources) ([]Def, []string) {
	var defs []Def
	var notes []string
	add := func(files []config.HookFile, scope, skip string) {
		for _, f := range files {
			ds, ns, err := Parse(f.Path, scope, f.Raw)
			if err != nil {
				notes = append(notes, err.Error())
				continue
			}
			for i := range ds {
				if skip != "" && ds[i].Skip == "" {
					ds[i].Skip = skip
				}
				ds[i].Root = f.Root
			}
			defs, notes = append(defs, ds...), append(notes, ns...)
		}
	}
	add(src.Person, "person", "")
	skip := ""
	if !src.Trusted {
		skip = "the folder is not trusted (agentty trust): a workspace's hooks are programs"
	}
	add(src.Workspace, "workspace", skip)
	for _, f := range src.Plugins {
		add([]config.HookFile{f}, "plugin "+f.Plugin, "")
	}
	return defs, notes
}
