package plugins

// What the installed plugins bring, as a setup loads it: the places of
// their commands, agents and skills, their hooks files, their MCP
// servers; and what each brings, counted by name, for agentty plugin ls.

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentty/agentty/config"
)

// Set is the installed plugins, read.
type Set struct {
	Plugins []*Plugin
	// Notes are what did not load (a manifest that does not parse, a path
	// leading out of its plugin), each naming its file.
	Notes []string
}

// Load reads the plugins installed in the data folder home ("" or none
// installed: an empty set). A plugin whose manifest does not parse is a
// note naming its line; the others load.
func Load(home string) *Set {
	if home == "" {
		return &Set{}
	}
	return Open(home).Load()
}

// Load reads the plugins installed in the store, as the function Load.
func (st Store) Load() *Set {
	s := &Set{}
	ix, err := st.read()
	if err != nil {
		s.Notes = append(s.Notes, fmt.Sprintf("plugins: %v; no plugin is loaded", err))
		return s
	}
	for _, r := range ix.Plugins {
		if checkName("plugin", r.Name) != nil {
			continue
		}
		root := st.PluginDir(r.Name)
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real // what reads through it compares resolved paths
		}
		if _, err := os.Stat(root); err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("plugin %s: %v; not loaded (agentty plugin rm %s, then add it again)", r.Name, err, r.Name))
			continue
		}
		p, err := Read(root, r.Name, r.Entry)
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("plugin %s: %v; not loaded", r.Name, err))
			continue
		}
		s.Plugins = append(s.Plugins, p)
		s.Notes = append(s.Notes, p.Notes...)
	}
	return s
}

// dirs gathers one kind of place of every plugin.
func (s *Set) dirs(of func(*Plugin) []Dir) []Dir {
	var out []Dir
	if s == nil {
		return nil
	}
	for _, p := range s.Plugins {
		out = append(out, of(p)...)
	}
	return out
}

// Commands are the places of the plugins' commands (each named
// PLUGIN:name, as Claude Code names them).
func (s *Set) Commands() []Dir { return s.dirs(func(p *Plugin) []Dir { return p.Commands }) }

// Agents are the places of the plugins' agent files.
func (s *Set) Agents() []Dir { return s.dirs(func(p *Plugin) []Dir { return p.Agents }) }

// Skills are the places of the plugins' skills.
func (s *Set) Skills() []Dir { return s.dirs(func(p *Plugin) []Dir { return p.Skills }) }

// Hooks are the plugins' hooks files (Plugin and Root set: package hooks
// runs them with CLAUDE_PLUGIN_ROOT).
func (s *Set) Hooks() []config.HookFile {
	var out []config.HookFile
	if s == nil {
		return nil
	}
	for _, p := range s.Plugins {
		out = append(out, p.Hooks...)
	}
	return out
}

// MergeMCP adds the plugins' MCP servers to cfg's, as the person's own.
// A name cfg has already (the person's, or an earlier plugin's) keeps its
// server; the plugin's is noted and not started.
func (s *Set) MergeMCP(cfg *config.Settings) []string {
	var notes []string
	if s == nil || cfg == nil {
		return nil
	}
	for _, p := range s.Plugins {
		for _, name := range slices.Sorted(maps.Keys(p.MCP)) {
			if _, dup := cfg.MCPServers[name]; dup {
				notes = append(notes, fmt.Sprintf("plugin %s: MCP server %s: a server of that name is configured already, which is used; the plugin's is not started", p.Name, name))
				continue
			}
			if cfg.MCPServers == nil {
				cfg.MCPServers = map[string]config.MCPServer{}
			}
			cfg.MCPServers[name] = p.MCP[name]
		}
	}
	return notes
}

// Brings is what a plugin brings, counted by name.
type Brings struct {
	Commands   []string `json:"commands"`
	Agents     []string `json:"agents"`
	Skills     []string `json:"skills"`
	Hooks      []string `json:"hooks"` // event names, one per hook
	MCPServers []string `json:"mcp_servers"`
}

// Brings says what p brings: commands (PLUGIN:name), agent files and
// skills by name, hooks by event, MCP servers by name.
func (p *Plugin) Brings() Brings {
	b := Brings{Commands: []string{}, Agents: []string{}, Skills: []string{}, Hooks: []string{}, MCPServers: slices.Sorted(maps.Keys(p.MCP))}
	if b.MCPServers == nil {
		b.MCPServers = []string{}
	}
	for _, d := range p.Commands {
		b.Commands = append(b.Commands, mdNames(d, p.Name+":", true)...)
	}
	for _, d := range p.Agents {
		b.Agents = append(b.Agents, mdNames(d, "", false)...)
	}
	for _, d := range p.Skills {
		b.Skills = append(b.Skills, skillNames(d)...)
	}
	for _, f := range p.Hooks {
		b.Hooks = append(b.Hooks, hookEvents(f.Raw)...)
	}
	return b
}

// mdNames are the names of the .md files of d (deep: subfolders as
// dir:name, as commands are named), after prefix.
func mdNames(d Dir, prefix string, deep bool) []string {
	if d.One {
		return []string{prefix + strings.TrimSuffix(filepath.Base(d.Path), ".md")}
	}
	var out []string
	filepath.WalkDir(d.Path, func(p string, e os.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case e.IsDir() && p != d.Path && (!deep || strings.HasPrefix(e.Name(), ".")):
			return filepath.SkipDir
		case e.IsDir() || !strings.HasSuffix(e.Name(), ".md") || len(out) >= MaxFiles:
			return nil
		}
		rel, _ := filepath.Rel(d.Path, p)
		out = append(out, prefix+strings.ReplaceAll(strings.TrimSuffix(filepath.ToSlash(rel), ".md"), "/", ":"))
		return nil
	})
	return out
}

// skillNames are the folders of d holding SKILL.md (d itself when One).
func skillNames(d Dir) []string {
	if d.One {
		return []string{filepath.Base(d.Path)}
	}
	var out []string
	entries, _ := os.ReadDir(d.Path)
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(d.Path, e.Name(), "SKILL.md")); err == nil {
			out = append(out, e.Name())
		}
	}
	return out
}
