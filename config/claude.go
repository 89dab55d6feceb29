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
	"Skill":     "skill",
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

// claudeAlso are the other tools of agentty's a tightening rule on a
// Claude Code tool reaches: Claude Code applies Read rules to every tool
// that reads files (search_files returns their lines), Edit rules to every
// tool that edits them.
var claudeAlso = map[string][]string{"Read": {"search_files"}, "Edit": {"write_file"}}

// mergeClaudePermissions makes the rules of a .claude/settings.json (b,
// read from path) tool policies of c, where c does not set that tool's
// policy itself: a rule that is a whole tool (Edit, mcp__github) maps to
// agentty's policy of that tool; deny wins over ask, ask over allow, as in
// Claude Code. Agentty's policies are per tool, so a rule with a specifier
// cannot be expressed exactly, and falls to the stricter side: a deny or
// ask rule (Read(.env), Bash(rm:*)) makes its tools ask (a whole-tool deny
// stays deny), said in a note; an allow rule (Bash(npm test:*)) loosens
// nothing. Those, and the rules of tools agentty lacks, are returned as
// notes.
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
	raise := func(name string, p engine.Policy) {
		if cur, ok := set[name]; !ok || policyRank(p) > policyRank(cur) {
			set[name] = p
		}
	}
	var unmapped []string
	var partial []claudeRule
	for _, rules := range []struct {
		policy engine.Policy
		list   []string
	}{{engine.PolicyAllow, f.Permissions.Allow}, {engine.PolicyAsk, f.Permissions.Ask}, {engine.PolicyDeny, f.Permissions.Deny}} {
		for _, r := range rules.list {
			word := r
			if i := strings.IndexAny(r, "( "); i >= 0 {
				word = r[:i]
			}
			glob := ClaudeToolGlob(word)
			if glob == word || word != r && rules.policy == engine.PolicyAllow {
				unmapped = append(unmapped, string(rules.policy)+" "+r)
				continue
			}
			tools := []string{glob}
			if rules.policy != engine.PolicyAllow {
				tools = append(tools, claudeAlso[word]...)
			}
			p := rules.policy
			if word != r {
				partial, p = append(partial, claudeRule{rules.policy, r, tools}), engine.PolicyAsk
			}
			for _, t := range tools {
				raise(t, p)
			}
		}
	}
	own := maps.Clone(c.Tools)
	for _, name := range slices.Sorted(maps.Keys(set)) {
		if _, ok := own[name]; ok {
			continue
		}
		if c.Tools == nil {
			c.Tools = map[string]ToolConfig{}
		}
		c.Tools[name] = ToolConfig{Policy: set[name]}
	}
	var notes []string
	for _, r := range partial {
		notes = append(notes, path+": "+r.note(c, own))
	}
	if len(unmapped) > 0 {
		notes = append(notes, fmt.Sprintf("%s: permissions %s have no counterpart in agentty (its policies are per tool: agentty tools lists them); not used",
			path, strings.Join(unmapped, ", ")))
	}
	return notes, nil
}

// claudeRule is a deny or ask rule with a specifier, and the tools of
// agentty's it reaches.
type claudeRule struct {
	policy engine.Policy
	rule   string
	tools  []string
}

// note says what became of the rule: the tools that ask instead, those
// denied whole, those whose policy the workspace's .agentty.json sets.
func (r claudeRule) note(c *Settings, own map[string]ToolConfig) string {
	var ask, denied, set []string
	for _, t := range r.tools {
		switch _, mine := own[t]; {
		case mine:
			set = append(set, t)
		case c.Tools[t].Policy == engine.PolicyDeny:
			denied = append(denied, t)
		default:
			ask = append(ask, t)
		}
	}
	verb := map[engine.Policy]string{engine.PolicyDeny: "deny", engine.PolicyAsk: "ask for"}[r.policy]
	var what []string
	switch {
	case len(ask) > 1 && len(ask) == len(r.tools):
		what = append(what, "they ask instead")
	case len(ask) == 1:
		what = append(what, ask[0]+" asks instead")
	case len(ask) > 1:
		what = append(what, and(ask)+" ask instead")
	}
	switch {
	case len(denied) == 1:
		what = append(what, denied[0]+" is denied whole")
	case len(denied) > 1:
		what = append(what, and(denied)+" are denied whole")
	}
	if len(set) > 0 {
		what = append(what, ".agentty.json sets the policy of "+and(set))
	}
	return fmt.Sprintf("%s %s: agentty cannot %s only part of %s; %s", r.policy, r.rule, verb, and(r.tools), strings.Join(what, "; "))
}

// and joins names as a person lists them: "a", "a and b", "a, b and c".
func and(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
