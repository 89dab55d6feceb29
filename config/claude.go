package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentty/agentty/engine"
)

// What agentty takes from Claude Code's files: its tool names, and the
// permission rules of a project's .claude/settings.json.

// claudeTools maps Claude Code's tool names to agentty's.
var claudeTools = map[string]string{
	"Read":      "read_file",
	"Write":     "write_file",
	"Edit":      "edit_file",
	"MultiEdit": "edit_file",
	"Grep":      "search_files",
	"Glob":      "search_files",
	"LS":        "list_dir",
	"Bash":      "run_shell",
	"WebFetch":  "http_get",
}

// ClaudeToolGlob is the pattern of agentty's tool names a tool word of
// Claude Code's stands for: Read → read_file; mcp__server__tool →
// server__tool; mcp__server, a whole server → server__*. Other words are
// as written (agentty's own names are lower case).
func ClaudeToolGlob(word string) string {
	if to, ok := claudeTools[word]; ok {
		return to
	}
	if rest, ok := strings.CutPrefix(word, "mcp__"); ok {
		if strings.Contains(rest, "__") {
			return rest
		}
		return rest + "__*"
	}
	return word
}

// mergeClaudePermissions makes the rules of a .claude/settings.json (b,
// read from path) tool policies of c, where c does not set that tool's
// policy itself: a rule that is a whole tool (Edit, mcp__github) maps to
// agentty's policy of that tool; deny wins over ask, ask over allow, as in
// Claude Code. A rule with a specifier (Bash(npm test:*)) or for a tool
// agentty lacks has no counterpart: it is returned as a note.
func mergeClaudePermissions(c *Settings, path string, b []byte) ([]string, error) {
	var f struct {
		Permissions struct {
			Allow []string `json:"allow"`
			Ask   []string `json:"ask"`
			Deny  []string `json:"deny"`
		} `json:"permissions"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("config %s: %v", path, err)
	}
	set := map[string]engine.Policy{}
	var unmapped []string
	for _, rules := range []struct {
		policy engine.Policy
		list   []string
	}{{engine.PolicyAllow, f.Permissions.Allow}, {engine.PolicyAsk, f.Permissions.Ask}, {engine.PolicyDeny, f.Permissions.Deny}} {
		for _, r := range rules.list {
			glob := ClaudeToolGlob(r)
			if strings.ContainsAny(r, "( ") || glob == r {
				unmapped = append(unmapped, string(rules.policy)+" "+r)
				continue
			}
			set[glob] = rules.policy
		}
	}
	for _, name := range slices.Sorted(maps.Keys(set)) {
		if _, own := c.Tools[name]; own {
			continue
		}
		if c.Tools == nil {
			c.Tools = map[string]ToolConfig{}
		}
		c.Tools[name] = ToolConfig{Policy: set[name]}
	}
	if len(unmapped) == 0 {
		return nil, nil
	}
	return []string{fmt.Sprintf("%s: permissions %s have no counterpart in agentty (its policies are per tool: agentty tools lists them); not used",
		path, strings.Join(unmapped, ", "))}, nil
}
