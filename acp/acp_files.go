package acp

import (
	"context"
	"encoding/json"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentty/agentty/engine"
)

// What an editor sees of the files a tool call touches (the file and its
// line, so that it can follow along; the diff of a write), what its person
// allowed always, and a loaded session's calls replayed.

// files are the locations a call touches and, for a write, its diff, as
// ACP shows them: nil for a call that touches no file of the workspace.
func (s *acpSession) files(c *engine.ToolCall) ([]acp.ToolCallLocation, []acp.ToolCallContent) {
	if s == nil || s.st == nil || s.st.Workspace() == nil {
		return nil, nil
	}
	if path, old, cur, ok := s.st.Workspace().Change(c); ok {
		return []acp.ToolCallLocation{{Path: path}}, []acp.ToolCallContent{acp.ToolDiffContent(path, cur, old)}
	}
	var in struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
	}
	switch c.Name {
	case "read_file", "list_dir":
		if json.Unmarshal(c.Args, &in) != nil {
			return nil, nil
		}
		path, ok := s.st.Workspace().Abs(in.Path)
		if !ok {
			return nil, nil
		}
		loc := acp.ToolCallLocation{Path: path}
		if in.Offset > 0 {
			loc.Line = acp.Ptr(in.Offset)
		}
		return []acp.ToolCallLocation{loc}, nil
	}
	return nil, nil
}

// allowKey is what "always allow" covers: the tool, or for run_shell the
// exact command (as the console's a does).
func acpAllowKey(c *engine.ToolCall) string {
	if c.Name == "run_shell" {
		var a struct {
			Command string `json:"command"`
		}
		json.Unmarshal(c.Args, &a)
		return c.Name + "\x00" + a.Command
	}
	return c.Name
}

// allows reports whether the editor's person allowed c always.
func (s *acpSession) allows(c *engine.ToolCall) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allowed[acpAllowKey(c)]
}

// allow remembers that c is allowed always, for the session.
func (s *acpSession) allow(c *engine.ToolCall) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.allowed == nil {
		s.allowed = map[string]bool{}
	}
	s.allowed[acpAllowKey(c)] = true
}

// replay sends a loaded session's conversation to the client: each run's
// task, its answers, and its tool calls with their status and results, as
// the protocol's session/load describes.
func (a *acpAgent) replay(ctx context.Context, id acp.SessionId, events []engine.Event) {
	k := &acpSink{a: a, ctx: ctx, id: id, started: map[string]bool{}, replaying: true}
	for _, ev := range events {
		switch d := ev.Data.(type) {
		case *engine.RunStarted:
			if ev.ParentRun == "" {
				a.update(ctx, id, acp.UpdateUserMessageText(d.Task))
			}
		case *engine.TextDelta:
			// the decision says its text once
		default:
			k.Emit(ev)
		}
	}
}
