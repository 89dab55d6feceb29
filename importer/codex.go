package importer

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// codexLine is a line of a Codex rollout.
type codexLine struct {
	Timestamp time.Time       `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// codexItem is a response_item's payload (and session_meta's fields).
type codexItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Summary   []struct {
		Text string `json:"text"`
	} `json:"summary"`
	ID    string `json:"id"`
	Cwd   string `json:"cwd"`
	Model string `json:"model"`
}

// ReadCodex reads a Codex rollout: session_meta (the id and folder),
// response_item messages, function calls and their outputs, reasoning. A
// line that cannot be read is a note naming it; event_msg lines repeat
// what the items say and are left.
func ReadCodex(r io.Reader, name string) (*Transcript, error) {
	t := &Transcript{Source: "codex", Results: map[string]Result{}}
	var reasoning string
	err := eachLine(r, name, &t.Notes, func(n int, b []byte) {
		var l codexLine
		var it codexItem
		if err := json.Unmarshal(b, &l); err != nil || json.Unmarshal(l.Payload, &it) != nil {
			t.Notes = append(t.Notes, fmt.Sprintf("%s:%d: not read: not a rollout line", name, n))
			return
		}
		switch l.Type {
		case "session_meta", "turn_context":
			t.ID, t.Cwd, t.Model = cmpOr(t.ID, it.ID), cmpOr(it.Cwd, t.Cwd), cmpOr(it.Model, t.Model)
			return
		case "response_item":
		default:
			return
		}
		if err := t.addCodex(it, l.Timestamp, &reasoning); err != nil {
			t.Notes = append(t.Notes, fmt.Sprintf("%s:%d: %v", name, n, err))
		}
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// addCodex adds a response item: a person's message starts a run (Codex's
// own preamble, in <…> tags, is left), the assistant's text and calls make
// decisions, outputs are the calls' results.
func (t *Transcript) addCodex(it codexItem, at time.Time, reasoning *string) error {
	switch it.Type {
	case "message":
		text := codexText(it.Content)
		if it.Role == "user" {
			if text != "" && !strings.HasPrefix(strings.TrimSpace(text), "<") {
				t.Runs = append(t.Runs, Run{Task: text, At: at})
			}
			return nil
		}
		if it.Role != "assistant" || text == "" {
			return nil
		}
		turn, err := t.codexTurn(at)
		if err != nil {
			return err
		}
		turn.Text += text
		turn.Reasoning, *reasoning = *reasoning, ""
		return nil
	case "reasoning":
		for _, s := range it.Summary {
			*reasoning += s.Text
		}
	case "function_call", "custom_tool_call", "local_shell_call":
		turn, err := t.codexTurn(at)
		if err != nil {
			return err
		}
		args := it.Arguments
		if it.Type == "custom_tool_call" {
			b, _ := json.Marshal(map[string]string{"input": it.Input})
			args = string(b)
		}
		name := cmpOr(it.Name, "shell")
		if name == "shell" {
			name = "run_shell"
		} else {
			name = ownName(name)
		}
		turn.Calls = append(turn.Calls, engine.ToolCall{ID: it.CallID, Name: name, Args: codexArgs(it.Name, args)})
	case "function_call_output", "custom_tool_call_output":
		t.Results[it.CallID] = codexOutput(it.Output, at)
	}
	return nil
}

// codexTurn is the decision a Codex item joins: the run's last (a short
// message before its calls joins them), unless a result of it came since,
// then a new one.
func (t *Transcript) codexTurn(at time.Time) (*Turn, error) {
	if len(t.Runs) == 0 {
		return nil, fmt.Errorf("the assistant's item before any message of the person; not imported")
	}
	run := &t.Runs[len(t.Runs)-1]
	if n := len(run.Turns); n == 0 || t.answered(run.Turns[n-1]) {
		run.Turns = append(run.Turns, Turn{At: at})
	}
	return &run.Turns[len(run.Turns)-1], nil
}

// answered reports whether any of a turn's calls has its result.
func (t *Transcript) answered(turn Turn) bool {
	for _, c := range turn.Calls {
		if _, ok := t.Results[c.ID]; ok {
			return true
		}
	}
	return false
}

// codexText is a message's text blocks (input_text, output_text).
func codexText(raw json.RawMessage) string {
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
			if len(cmd) == 3 && (cmd[0] == "bash" || cmd[0] == "sh") && cmd[1] == "-lc" {
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

// codexOutput is a call's output: a string, or {"content": …, "success": …}.
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
