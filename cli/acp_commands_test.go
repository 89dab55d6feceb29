package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// TestACPCustomCommand: the workspace's custom command is in the
// available commands agentty acp advertises, and a prompt "/sum 17 23"
// runs its expanded prompt (the offline model computes what it asks).
func TestACPCustomCommand(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	dir := filepath.Join(ws, ".claude", "commands")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "sum.md"), []byte("---\ndescription: multiply two numbers\nargument-hint: A B\n---\nwhat is $1*$2?\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &acpClient{}
	conn := startACP(t, home, c, "--model", "offline")
	ctx := context.Background()
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("/sum 17 23")}})
	if err != nil || resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", resp, err)
	}
	c.mu.Lock()
	text, cmds := c.text.String(), slices.Clone(c.cmds)
	c.mu.Unlock()
	if !slices.Contains(cmds, "sum") || !slices.Contains(cmds, "compact") {
		t.Errorf("available commands = %v, want sum among them", cmds)
	}
	if !strings.Contains(text, "391") {
		t.Errorf("the expanded prompt was not what ran: %q", text)
	}
}

// TestEvalCustomCommand: a case whose task is "/sum 17 23" runs the
// workspace's command's prompt (the offline model computes what it asks).
func TestEvalCustomCommand(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".agentty", "commands")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "sum.md"), []byte("what is $1*$2?\n"), 0o644)
	suite := writeSuite(t, `
model: offline
cases:
  - name: command
    task: /sum 17 23
    assert:
      - answer_contains: "391"
`)
	code, out, errs := runCLI(t, context.Background(), agentEnv(t), "eval", "--workspace", ws, suite)
	if code != 0 || !strings.Contains(out, "PASS   command") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
}
