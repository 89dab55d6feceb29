package plugins

// A plugin's hooks (hooks/hooks.json, the manifest's hooks) and MCP
// servers (.mcp.json, the manifest's mcpServers), read as package hooks
// and the MCP adapter take them, with ${CLAUDE_PLUGIN_ROOT} expanded.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentty/agentty/config"
)

// readHooks reads hooks/hooks.json and what the manifest's hooks names
// (a file, files, or the hooks themselves).
func (p *Plugin) readHooks(raw json.RawMessage) {
	p.hookFile(filepath.Join(p.Root, "hooks", "hooks.json"), true)
	if len(raw) == 0 {
		return
	}
	if list, err := paths(raw); err == nil {
		for _, rel := range list {
			abs, err := p.inside("hooks", rel)
			if err != nil {
				p.Notes = append(p.Notes, err.Error())
				continue
			}
			if abs != filepath.Join(p.Root, "hooks", "hooks.json") {
				p.hookFile(abs, false)
			}
		}
		return
	}
	p.addHooks(filepath.Join(p.Root, ManifestPath), raw)
}

// hookFile reads the hooks file path ({"description", "hooks": {…}});
// optional: it may be missing.
func (p *Plugin) hookFile(path string, optional bool) {
	b, err := config.ReadIn(p.Root, path, config.MaxFile)
	if optional && errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("plugin %s: %s: %v; its hooks are not run", p.Name, path, err))
		return
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(b, &f); err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("plugin %s: %v; its hooks are not run", p.Name, jsonError(path, b, err)))
		return
	}
	p.addHooks(path, b)
}

// addHooks adds the hooks of raw (read from path): {"hooks": {events}}
// as hooks.json has them, or the events themselves.
func (p *Plugin) addHooks(path string, raw json.RawMessage) {
	var f struct {
		Hooks json.RawMessage `json:"hooks"`
	}
	if json.Unmarshal(raw, &f) == nil && len(f.Hooks) > 0 && f.Hooks[0] == '{' {
		raw = f.Hooks
	}
	p.Hooks = append(p.Hooks, config.HookFile{Path: path, Raw: raw, Plugin: p.Name, Root: p.Root})
}

// readMCP reads .mcp.json and what the manifest's mcpServers names (a
// file, files, or the servers themselves).
func (p *Plugin) readMCP(raw json.RawMessage) {
	p.mcpFile(filepath.Join(p.Root, ".mcp.json"), true)
	if len(raw) == 0 {
		return
	}
	if list, err := paths(raw); err == nil {
		for _, rel := range list {
			abs, err := p.inside("mcpServers", rel)
			if err != nil {
				p.Notes = append(p.Notes, err.Error())
				continue
			}
			if abs != filepath.Join(p.Root, ".mcp.json") {
				p.mcpFile(abs, false)
			}
		}
		return
	}
	p.addServers(filepath.Join(p.Root, ManifestPath), raw)
}

// mcpFile reads an MCP servers file of the plugin.
func (p *Plugin) mcpFile(path string, optional bool) {
	b, err := config.ReadIn(p.Root, path, config.MaxFile)
	if optional && errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("plugin %s: %s: %v; its MCP servers are not started", p.Name, path, err))
		return
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(b, &f); err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("plugin %s: %v; its MCP servers are not started", p.Name, jsonError(path, b, err)))
		return
	}
	p.addServers(path, b)
}

// addServers adds the servers of raw (read from path): {"mcpServers":
// {…}} as .mcp.json has them, or name → server as plugins often write.
func (p *Plugin) addServers(path string, raw json.RawMessage) {
	var all map[string]json.RawMessage
	if json.Unmarshal(raw, &all) != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("plugin %s: %s: mcpServers is not an object of servers; not started", p.Name, path))
		return
	}
	if inner, ok := all["mcpServers"]; ok {
		all = nil
		json.Unmarshal(inner, &all)
	}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		var s config.MCPServer
		if err := json.Unmarshal(all[name], &s); err != nil || (s.Command == "") == (s.URL == "") {
			p.Notes = append(p.Notes, fmt.Sprintf("plugin %s: %s: MCP server %s: want a command or a url; not started", p.Name, path, name))
			continue
		}
		if p.MCP == nil {
			p.MCP = map[string]config.MCPServer{}
		}
		if _, dup := p.MCP[name]; dup {
			p.Notes = append(p.Notes, fmt.Sprintf("plugin %s: %s: MCP server %s is defined twice; the first is used", p.Name, path, name))
			continue
		}
		p.MCP[name] = p.rooted(s)
	}
}

// RootVar is Claude Code's name for a plugin's folder in its hooks' and
// servers' commands.
const RootVar = "CLAUDE_PLUGIN_ROOT"

// rooted is s with ${CLAUDE_PLUGIN_ROOT} replaced by the plugin's folder
// in its command, args, env, cwd, url and headers, and the variable set
// in a stdio server's environment.
func (p *Plugin) rooted(s config.MCPServer) config.MCPServer {
	r := strings.NewReplacer("${"+RootVar+"}", p.Root)
	s.Command, s.URL, s.Cwd = r.Replace(s.Command), r.Replace(s.URL), r.Replace(s.Cwd)
	s.Args = slices.Clone(s.Args)
	for i := range s.Args {
		s.Args[i] = r.Replace(s.Args[i])
	}
	env := map[string]string{}
	for k, v := range s.Env {
		env[k] = r.Replace(v)
	}
	if s.Command != "" {
		env[RootVar] = p.Root
	}
	s.Env = env
	if s.Headers != nil {
		h := map[string]string{}
		for k, v := range s.Headers {
			h[k] = r.Replace(v)
		}
		s.Headers = h
	}
	return s
}

// hookEvents names the event of each hook of raw (Claude Code's shape),
// one name a hook.
func hookEvents(raw json.RawMessage) []string {
	var events map[string][]struct {
		Hooks []json.RawMessage `json:"hooks"`
	}
	json.Unmarshal(raw, &events)
	var out []string
	for _, ev := range slices.Sorted(maps.Keys(events)) {
		for _, g := range events[ev] {
			for range g.Hooks {
				out = append(out, ev)
			}
		}
	}
	return out
}
