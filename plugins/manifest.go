package plugins

// A plugin's folder read: its manifest (.claude-plugin/plugin.json,
// optional), and where its commands, agents, skills, hooks and MCP
// servers are, as Claude Code finds them: commands/, agents/, skills/,
// hooks/hooks.json and .mcp.json by default; the manifest's `commands`
// and `agents` replace the default folder, its `skills` add to it, its
// `hooks` and `mcpServers` (a path, paths, or the thing itself) merge with
// the default file. A path that leads out of the plugin's folder is
// refused, noted, and the rest loads.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentty/agentty/config"
)

// Manifest is what agentty reads of a plugin.json.
type Manifest struct {
	Name        string          `json:"name"`
	Version     string          `json:"version,omitempty"`
	Description string          `json:"description,omitempty"`
	Commands    json.RawMessage `json:"commands,omitempty"`
	Agents      json.RawMessage `json:"agents,omitempty"`
	Skills      json.RawMessage `json:"skills,omitempty"`
	Hooks       json.RawMessage `json:"hooks,omitempty"`
	MCPServers  json.RawMessage `json:"mcpServers,omitempty"`
	LSPServers  json.RawMessage `json:"lspServers,omitempty"`
}

// ManifestPath is a plugin's manifest, under its folder.
const ManifestPath = ".claude-plugin/plugin.json"

// Dir is a place of a plugin's commands, agents or skills: a folder of
// them, or (One) a single one: a command's or agent's file, a skill's
// folder.
type Dir struct {
	Plugin string `json:"plugin"`
	Root   string `json:"-"` // the plugin's folder: nothing read leads out of it
	Path   string `json:"path"`
	One    bool   `json:"one,omitempty"`
}

// Plugin is one plugin's folder, read.
type Plugin struct {
	Name    string
	Root    string
	Version string
	// Manifest is whether it has a plugin.json.
	Manifest bool
	Commands []Dir
	Agents   []Dir
	Skills   []Dir
	Hooks    []config.HookFile
	MCP      map[string]config.MCPServer
	// Notes are what of it was refused or left out, each with its file.
	Notes []string
}

// readManifest reads root's plugin.json (none: found is false). One that
// does not parse is an error naming its line.
func readManifest(root string) (m Manifest, found bool, err error) {
	path := filepath.Join(root, ManifestPath)
	b, err := config.ReadIn(root, path, config.MaxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("%s: %v", path, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, true, jsonError(path, b, err)
	}
	return m, true, nil
}

// jsonError names the line of a JSON error in b, read from path.
func jsonError(path string, b []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s:%d: %v", path, lineAt(b, se.Offset), err)
	case errors.As(err, &te):
		return fmt.Errorf("%s:%d: %s is %s, not %s", path, lineAt(b, te.Offset), cmp.Or(te.Field, "the file"), te.Value, te.Type)
	}
	return fmt.Errorf("%s: %v", path, err)
}

// lineAt is the line of byte offset off of b.
func lineAt(b []byte, off int64) int {
	return 1 + bytes.Count(b[:min(int(off), len(b))], []byte("\n"))
}

// Read reads the plugin folder root, installed as name; entry is its
// marketplace entry's component fields (supplementing the manifest's).
// A manifest that does not parse is an error: the plugin is not loaded.
func Read(root, name string, entry json.RawMessage) (*Plugin, error) {
	m, found, err := readManifest(root)
	if err != nil {
		return nil, err
	}
	if len(entry) > 0 {
		var e Manifest
		if json.Unmarshal(entry, &e) == nil {
			m.Commands, m.Agents, m.Skills = or(m.Commands, e.Commands), or(m.Agents, e.Agents), or(m.Skills, e.Skills)
			m.Hooks, m.MCPServers, m.LSPServers = or(m.Hooks, e.Hooks), or(m.MCPServers, e.MCPServers), or(m.LSPServers, e.LSPServers)
		}
	}
	p := &Plugin{Name: name, Root: root, Version: m.Version, Manifest: found}
	p.Commands = p.places("commands", m.Commands, "commands", true)
	p.Agents = p.places("agents", m.Agents, "agents", true)
	p.Skills = p.places("skills", m.Skills, "skills", false)
	p.readHooks(m.Hooks)
	p.readMCP(m.MCPServers)
	if len(m.LSPServers) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("plugin %s: lspServers: agentty runs no language servers; left out", name))
	}
	return p, nil
}

func or(a, b json.RawMessage) json.RawMessage {
	if len(a) > 0 {
		return a
	}
	return b
}

// paths reads a manifest field that is a path or a list of paths.
func paths(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("want a path or a list of paths")
	}
	return many, nil
}

// inside is the path p of the manifest in the plugin's folder: refused
// when it is absolute or leads out of it (through .. or a symbolic link).
func (p *Plugin) inside(field, rel string) (string, error) {
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "~") {
		return "", fmt.Errorf("plugin %s: %s %q: a path in a plugin is relative to its folder (./…); refused", p.Name, field, rel)
	}
	abs := filepath.Join(p.Root, filepath.FromSlash(rel))
	out := func(to string) error {
		return fmt.Errorf("plugin %s: %s %q leads to %s, out of the plugin's folder %s; refused", p.Name, field, rel, to, p.Root)
	}
	if r, err := filepath.Rel(p.Root, abs); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", out(abs)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		root, _ := filepath.EvalSymlinks(p.Root)
		if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", out(real)
		}
	}
	return abs, nil
}

// places are the plugin's places of one kind: the default folder def
// (when the manifest names none, or always when replace is false) and
// the manifest's paths, each a folder or (files: a .md; skills: a folder
// holding SKILL.md) a single one.
func (p *Plugin) places(field string, raw json.RawMessage, def string, replace bool) []Dir {
	var out []Dir
	list, err := paths(raw)
	if err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("plugin %s: %s: %v; the default folder is read", p.Name, field, err))
		list = nil
	}
	if len(list) == 0 || !replace {
		if fi, err := os.Lstat(filepath.Join(p.Root, def)); err == nil && fi.IsDir() {
			out = append(out, Dir{Plugin: p.Name, Root: p.Root, Path: filepath.Join(p.Root, def)})
		}
	}
	for _, rel := range list {
		abs, err := p.inside(field, rel)
		if err != nil {
			p.Notes = append(p.Notes, err.Error())
			continue
		}
		fi, err := os.Stat(abs)
		if err != nil {
			p.Notes = append(p.Notes, fmt.Sprintf("plugin %s: %s %q: %v", p.Name, field, rel, err))
			continue
		}
		d := Dir{Plugin: p.Name, Root: p.Root, Path: abs}
		if _, err := os.Stat(filepath.Join(abs, "SKILL.md")); field == "skills" && err == nil {
			d.One = true
		} else if !fi.IsDir() {
			d.One = true
		}
		if !containsDir(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func containsDir(ds []Dir, d Dir) bool {
	for _, x := range ds {
		if x.Path == d.Path {
			return true
		}
	}
	return false
}
