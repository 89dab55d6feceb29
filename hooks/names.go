package hooks

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// Hooks are written for Claude Code: they match its tool names and read
// its arguments (.tool_input.file_path, .tool_input.command). A call is
// given to them as Claude Code would have made it, and what they change
// is taken back into agentty's names.

// claudeName maps agentty's tools to Claude Code's; an MCP tool
// (server__tool) is mcp__server__tool.
var claudeName = map[string]string{
	"read_file":    "Read",
	"write_file":   "Write",
	"edit_file":    "Edit",
	"run_shell":    "Bash",
	"search_files": "Grep",
	"list_dir":     "LS",
	"http_get":     "WebFetch",
	"agent":        "Task",
	"skill":        "Skill",
}

// ClaudeName is the name Claude Code gives the tool agentty calls name.
func ClaudeName(name string) string {
	if c, ok := claudeName[name]; ok {
		return c
	}
	if strings.Contains(name, "__") {
		return "mcp__" + name
	}
	return name
}

// renames are the arguments whose names differ, agentty's → Claude Code's.
var renames = map[string]map[string]string{
	"read_file":  {"path": "file_path"},
	"write_file": {"path": "file_path"},
	"edit_file":  {"path": "file_path", "old": "old_string", "new": "new_string"},
}

// claudeInput is the arguments args of a call to name as Claude Code's
// tool takes them: renamed, with file paths absolute (Claude Code's are).
func claudeInput(name string, args json.RawMessage, ws string) json.RawMessage {
	ren := renames[name]
	var m map[string]any
	if ren == nil || json.Unmarshal(args, &m) != nil {
		if len(args) == 0 {
			return json.RawMessage("{}")
		}
		return args
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if to, ok := ren[k]; ok {
			k = to
		}
		if s, ok := v.(string); ok && k == "file_path" && !filepath.IsAbs(s) {
			v = filepath.Join(ws, s)
		}
		out[k] = v
	}
	b, _ := json.Marshal(out)
	return b
}

// agenttyInput takes a hook's updatedInput (Claude Code's names) back to
// the arguments of agentty's tool name: paths inside the workspace made
// relative again. Keys agentty's tool lacks are left for its schema to
// refuse.
func agenttyInput(name string, in json.RawMessage, ws string) json.RawMessage {
	ren := renames[name]
	var m map[string]any
	if ren == nil || json.Unmarshal(in, &m) != nil {
		return in
	}
	back := map[string]string{}
	for k, v := range ren {
		back[v] = k
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok && k == "file_path" && filepath.IsAbs(s) {
			if rel, err := filepath.Rel(ws, s); err == nil && !strings.HasPrefix(rel, "..") {
				v = rel
			}
		}
		if to, ok := back[k]; ok {
			k = to
		}
		out[k] = v
	}
	b, _ := json.Marshal(out)
	return b
}

// toolResponse is a finished call's result in the shape hooks read most:
// the output, whether it worked, a file tool's filePath, and a shell
// command's stdout and stderr (apart, from its structured result).
func toolResponse(name string, input json.RawMessage, result string, failed bool, structured json.RawMessage) map[string]any {
	r := map[string]any{"output": result, "success": !failed}
	if name == "run_shell" {
		var sh struct {
			Stdout, Stderr string
			Exit           *int
		}
		r["stdout"], r["stderr"], r["interrupted"] = result, "", false
		if json.Unmarshal(structured, &sh) == nil && sh.Exit != nil {
			r["stdout"], r["stderr"], r["exit_code"] = sh.Stdout, sh.Stderr, *sh.Exit
		}
	}
	var in struct {
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal(input, &in) == nil && in.FilePath != "" {
		r["filePath"] = in.FilePath
	}
	return r
}
