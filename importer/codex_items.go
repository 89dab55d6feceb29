package importer

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// codexCall is a call item as agentty journals it: Codex's shell (a
// function call, or a local_shell_call's exec) as run_shell, others under
// their own names (apply_patch, web_search, an MCP server's tools).
func codexCall(it *codexItem) engine.ToolCall {
	id := cmpOr(it.CallID, it.ID)
	switch it.Type {
	case "local_shell_call":
		var a struct {
			Command []string `json:"command"`
		}
		json.Unmarshal(it.Action, &a)
		b, _ := json.Marshal(a)
		return engine.ToolCall{ID: id, Name: "run_shell", Args: codexArgs("shell", string(b))}
	case "web_search_call":
		var a struct {
			Query string `json:"query"`
		}
		json.Unmarshal(it.Action, &a)
		return engine.ToolCall{ID: id, Name: "web_search", Args: marshal(map[string]string{"query": a.Query})}
	case "custom_tool_call":
		return engine.ToolCall{ID: id, Name: ownName(cmpOr(it.Name, "custom_tool")), Args: marshal(map[string]string{"input": it.Input})}
	}
	args := string(it.Arguments)
	var s string
	if json.Unmarshal(it.Arguments, &s) == nil {
		args = s // arguments as a JSON string, as the Responses API writes them
	}
	name := cmpOr(it.Name, "shell")
	if name == "shell" || name == "container.exec" {
		return engine.ToolCall{ID: id, Name: "run_shell", Args: codexArgs("shell", args)}
	}
	return engine.ToolCall{ID: id, Name: ownName(name), Args: codexArgs(name, args)}
}

// summaryText is a reasoning item's summary: a list of {text} (a string
// in some versions).
func summaryText(raw json.RawMessage) string {
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var out []string
		for _, p := range parts {
			out = append(out, p.Text)
		}
		return strings.Join(out, "")
	}
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// codexText is a message's text blocks (input_text, output_text), or its
// content when it is a string.
func codexText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type, Text string
	}
	json.Unmarshal(raw, &blocks)
	var out []string
	for _, b := range blocks {
		if b.Text != "" {
			out = append(out, b.Text)
		}
	}
	return strings.Join(out, "\n")
}

// codexArgs are a call's arguments as an object: Codex's shell takes
// {"command": ["bash", "-lc", "ls"]}, which run_shell reads as one string.
func codexArgs(name, args string) json.RawMessage {
	if name == "shell" {
		var a struct {
			Command []string `json:"command"`
		}
		if json.Unmarshal([]byte(args), &a) == nil && len(a.Command) > 0 {
			cmd := a.Command
			if len(cmd) == 3 && (cmd[0] == "bash" || cmd[0] == "sh") && (cmd[1] == "-lc" || cmd[1] == "-c") {
				cmd = cmd[2:]
			}
			b, _ := json.Marshal(map[string]string{"command": strings.Join(cmd, " ")})
			return b
		}
	}
	if !json.Valid([]byte(args)) || !strings.HasPrefix(strings.TrimSpace(args), "{") {
		b, _ := json.Marshal(map[string]string{"input": args})
		return b
	}
	return json.RawMessage(args)
}

// codexOutput is a call's output: a string (itself JSON {output, metadata}
// in some versions), or {"content": …, "success": …}.
func codexOutput(raw json.RawMessage, at time.Time) Result {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		var inner struct {
			Output   string `json:"output"`
			Metadata struct {
				ExitCode int `json:"exit_code"`
			} `json:"metadata"`
		}
		if json.Unmarshal([]byte(s), &inner) == nil && inner.Output != "" {
			return Result{Text: inner.Output, IsError: inner.Metadata.ExitCode != 0, At: at}
		}
		return Result{Text: s, At: at}
	}
	var o struct {
		Content string `json:"content"`
		Success *bool  `json:"success"`
	}
	json.Unmarshal(raw, &o)
	return Result{Text: o.Content, IsError: o.Success != nil && !*o.Success, At: at}
}
