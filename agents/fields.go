package agents

import (
	"strings"

	"github.com/agentty/agentty/config"
)

// riskyAgentFields are fields that could name MCP servers or loosen
// approvals: an untrusted workspace's files may not set them, and agentty
// does not take them from agent files at all (MCP servers and policies are
// the config's).
var riskyAgentFields = map[string]string{
	"mcpServers":     "MCP servers",
	"mcp_servers":    "MCP servers",
	"permissionMode": "approvals",
	"allow_shell":    "approvals",
	"policies":       "approvals",
}

// unknownField notes a field agentty does not take from agent files (a
// risky one: tools beyond the session's, permissions; a Claude Code one),
// and is the problem of one that is no field at all in agentty's own
// format.
func unknownField(line int, field string, pl Place, note func(int, string, string, ...any)) *Problem {
	if what, risky := riskyAgentFields[field]; risky {
		if pl.untrusted {
			note(line, field, "refused: the workspace is not trusted (agentty trust %s), and agent files never set %s anyway: the config does; an agent's tools can only be narrowed", config.ShellQuote(pl.root), what)
		} else {
			note(line, field, "ignored: agent files do not set %s (the config does); an agent's tools can only be narrowed", what)
		}
		return nil
	}
	if pl.claude || claudeFields[field] {
		note(line, field, "ignored: a Claude Code field agentty does not use")
		return nil
	}
	// agentty's own format: a field it does not know is a mistake (a typo
	// would drop the schema or the guardrails it meant).
	msg := "not a field of an agent (" + strings.Join(agentFields, ", ") + ")"
	if near := nearest(field, agentFields); near != "" {
		msg = "not a field of an agent: did you mean " + near + "? (the fields: " + strings.Join(agentFields, ", ") + ")"
	}
	return &Problem{Line: line, Field: field, Message: msg}
}

// agentFields are the fields of agentty's agent files.
var agentFields = []string{"name", "description", "tools", "disallowed_tools", "model", "mode", "max_steps", "max_tokens", "max_cost", "output_schema", "guardrails"}

// claudeFields are Claude Code's fields that agentty does not use: noted,
// wherever the file is.
var claudeFields = map[string]bool{"color": true, "hooks": true, "skills": true, "memory": true, "isolation": true, "background": true, "effort": true}

// nearest is the name of names within two edits of s ("" for none).
func nearest(s string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := config.EditDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}
