package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// acpClient is an editor, as the SDK's client side: it keeps what the
// agent streams and answers permission requests with answer.
type acpClient struct {
	mu      sync.Mutex
	text    strings.Builder
	user    []string
	tools   map[acp.ToolCallId]acp.ToolCallStatus
	asked   []string
	cmds    []string
	answer  string // the option to select: allow, reject or "" (cancelled)
	updates chan struct{}
	// What the agent said of files and options: each permission's
	// options, and the diffs and locations of requests and tool calls.
	options []string
	diffs   []acp.ToolCallContentDiff
	locs    []string
}

func (c *acpClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
		c.text.WriteString(u.AgentMessageChunk.Content.Text.Text)
	case u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil:
		c.user = append(c.user, u.UserMessageChunk.Content.Text.Text)
	case u.ToolCall != nil:
		c.tools[u.ToolCall.ToolCallId] = u.ToolCall.Status
		c.files(u.ToolCall.Locations, u.ToolCall.Content)
	case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
		c.tools[u.ToolCallUpdate.ToolCallId] = *u.ToolCallUpdate.Status
	case u.AvailableCommandsUpdate != nil:
		for _, cmd := range u.AvailableCommandsUpdate.AvailableCommands {
			c.cmds = append(c.cmds, cmd.Name)
		}
	}
	select {
	case c.updates <- struct{}{}:
	default:
	}
	return nil
}

func (c *acpClient) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, *p.ToolCall.Title)
	for _, o := range p.Options {
		c.options = append(c.options, string(o.Kind))
	}
	c.files(p.ToolCall.Locations, p.ToolCall.Content)
	if c.answer == "" {
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(acp.PermissionOptionId(c.answer))}, nil
}

// files keeps the locations and diffs of a tool call; c.mu is held.
func (c *acpClient) files(locs []acp.ToolCallLocation, content []acp.ToolCallContent) {
	for _, l := range locs {
		c.locs = append(c.locs, l.Path)
	}
	for _, tc := range content {
		if tc.Diff != nil {
			c.diffs = append(c.diffs, *tc.Diff)
		}
	}
}

func (c *acpClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, nil
}
func (c *acpClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, nil
}
func (c *acpClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, nil
}
func (c *acpClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, nil
}
func (c *acpClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, nil
}
func (c *acpClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, nil
}
func (c *acpClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, nil
}

// startACP runs `agentty acp args…` with its own data folder (home) and
// returns the client's connection to it.
func startACP(t *testing.T, home string, c *acpClient, args ...string) *acp.ClientSideConnection {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"acp"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "AGENTTY_HOME=" + filepath.Join(home, "data"), "AGENTTY_CONFIG=" + filepath.Join(home, "config.json")}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("agentty acp did not exit when its stdin closed; stderr:\n%s", stderr.String())
		}
	})
	if c.tools == nil {
		c.tools, c.updates = map[acp.ToolCallId]acp.ToolCallStatus{}, make(chan struct{}, 1)
	}
	conn := acp.NewClientSideConnection(c, stdin, stdout)
	init, err := conn.Initialize(context.Background(), acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
	if err != nil || !init.AgentCapabilities.LoadSession {
		t.Fatalf("initialize: %+v, %v", init, err)
	}
	return conn
}

// agentty acp answers a prompt with the offline model: the answer streams
// as agent_message_chunk updates, the calculator call as a tool call that
// completes, and the stop reason is end_turn. The session is journaled,
// and session/load in a new process replays it.
func TestACPPrompt(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	c := &acpClient{}
	conn := startACP(t, home, c, "--model", "offline")
	ctx := context.Background()
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("what is 17*23?")}})
	if err != nil || resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", resp, err)
	}
	c.mu.Lock()
	text, tools, cmds := c.text.String(), c.tools, strings.Join(c.cmds, ",")
	c.mu.Unlock()
	if !strings.Contains(text, "391") {
		t.Errorf("the answer streamed: %q", text)
	}
	completed := 0
	for id, st := range tools {
		if strings.HasPrefix(string(id), "run-1/") && st == acp.ToolCallStatusCompleted {
			completed++
		}
	}
	if completed != 1 || !strings.Contains(cmds, "compact") {
		t.Errorf("tool calls %v, commands %s", tools, cmds)
	}
	resp, err = conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("/memory")}})
	if err != nil || resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("/memory: %+v, %v", resp, err)
	}
	if _, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: "0nosuch", Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}); err == nil {
		t.Error("a prompt to no session was answered")
	}

	code, out, errs := runCLI(t, ctx, map[string]string{"AGENTTY_HOME": filepath.Join(home, "data"), "HOME": home}, "sessions", "ls")
	if code != 0 || !strings.Contains(out, string(sess.SessionId)) {
		t.Errorf("sessions ls: exit %d, %q, %q", code, out, errs)
	}

	c2 := &acpClient{}
	conn2 := startACP(t, t.TempDir(), c2) // another data folder: the session is not there
	if _, err := conn2.LoadSession(ctx, acp.LoadSessionRequest{SessionId: sess.SessionId, Cwd: ws, McpServers: []acp.McpServer{}}); err == nil {
		t.Error("a session of another data folder loaded")
	}

	// Closed here, it loads in another process, its conversation replayed.
	if _, err := conn.CloseSession(ctx, acp.CloseSessionRequest{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	c3 := &acpClient{}
	conn3 := startACP(t, home, c3, "--model", "offline")
	if _, err := conn3.LoadSession(ctx, acp.LoadSessionRequest{SessionId: sess.SessionId, Cwd: ws, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	c3.mu.Lock()
	user, text := strings.Join(c3.user, "|"), c3.text.String()
	c3.mu.Unlock()
	if !strings.Contains(user, "what is 17*23?") || !strings.Contains(text, "391") {
		t.Errorf("session/load replayed user %q, agent %q", user, text)
	}
	resp, err = conn3.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("what is 2+2?")}})
	if err != nil || resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("a prompt in the loaded session: %+v, %v", resp, err)
	}
}

// A tool that asks is a permission request: rejected, the call is denied
// and the run goes on; a cancelled prompt stops with cancelled.
func TestACPPermissionAndCancel(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"x.txt","content":"hi"}}]},{"answer":"done"}]}`)
	c := &acpClient{answer: "reject"}
	conn := startACP(t, home, c, "--model", "script:"+sc)
	ctx := context.Background()
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("write x.txt")}})
	if err != nil || resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", resp, err)
	}
	c.mu.Lock()
	asked, tools := c.asked, c.tools
	c.mu.Unlock()
	if len(asked) != 1 || !strings.HasPrefix(asked[0], "write_file") {
		t.Errorf("permission asked for %v", asked)
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); err == nil {
		t.Error("the rejected write was done")
	}
	for id, st := range tools {
		if st != acp.ToolCallStatusFailed {
			t.Errorf("tool call %s: %s, want failed (denied)", id, st)
		}
	}

	slow := writeScript(t, `{"turns":[{"answer":"slow","delay_ms":60000}]}`)
	conn = startACP(t, home, &acpClient{}, "--model", "script:"+slow)
	if sess, err = conn.NewSession(ctx, acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan acp.PromptResponse, 1)
	go func() {
		r, _ := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("take your time")}})
		done <- r
	}()
	time.Sleep(500 * time.Millisecond)
	if err := conn.Cancel(ctx, acp.CancelNotification{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.StopReason != acp.StopReasonCancelled {
			t.Errorf("after cancel: %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled prompt did not end")
	}
}

// The MCP servers an editor passes in session/new start for that session;
// a cwd that is not absolute, or a session that is not here, is an error
// of the request's parameters.
func TestACPEditorServersAndBadParams(t *testing.T) {
	server := everythingServer(t)
	home, ws := t.TempDir(), t.TempDir()
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"everything__get-sum","arguments":{"a":2,"b":40}}]},{"answer":"done"}]}`)
	c := &acpClient{answer: "allow"}
	conn := startACP(t, home, c, "--model", "script:"+sc)
	ctx := context.Background()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{{Stdio: &acp.McpServerStdio{Name: "everything", Command: node, Args: []string{server, "stdio"}, Env: []acp.EnvVariable{}}}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("add")}})
	if err != nil || resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", resp, err)
	}
	c.mu.Lock()
	tools := c.tools
	c.mu.Unlock()
	if len(tools) != 1 {
		t.Errorf("tool calls %v", tools)
	}
	for id, st := range tools {
		if st != acp.ToolCallStatusCompleted {
			t.Errorf("%s: %s", id, st)
		}
	}
	for _, bad := range []func() error{
		func() error {
			_, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: "relative/dir", McpServers: []acp.McpServer{}})
			return err
		},
		func() error {
			_, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: "0nosuch", Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
			return err
		},
	} {
		var re *acp.RequestError
		if err := bad(); !errors.As(err, &re) || re.Code != -32602 {
			t.Errorf("want an invalid-params error, got %v", err)
		}
	}
	// The next good request on the same connection still works.
	if _, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{}}); err != nil {
		t.Errorf("a good session/new after the refusals: %v", err)
	}
}

// TestACPFilesAlwaysAndLoad: with the SDK's client side, a write's
// permission request carries the file's diff and location and offers
// "allow always"; chosen, the next write of the session does not ask; the
// tool call itself carries them too; session/load in a new process replays
// both calls, completed.
func TestACPFilesAlwaysAndLoad(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("old\n"), 0o644)
	sc := writeScript(t, `{"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"a.txt","content":"new\n"}}]},`+
		`{"tool_calls":[{"name":"write_file","arguments":{"path":"b.txt","content":"two\n"}}]},{"answer":"done"}]}`)
	c := &acpClient{answer: "always"}
	conn := startACP(t, home, c, "--model", "script:"+sc)
	ctx := context.Background()
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("write them")}}); err != nil || resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", resp, err)
	}
	c.mu.Lock()
	asked, options, diffs, locs := c.asked, c.options, c.diffs, c.locs
	c.mu.Unlock()
	if len(asked) != 1 || !strings.Contains(strings.Join(options, ","), string(acp.PermissionOptionKindAllowAlways)) {
		t.Errorf("asked %v with options %v; want one question, allow_always offered", asked, options)
	}
	a := filepath.Join(ws, "a.txt")
	if len(diffs) == 0 || diffs[0].Path != a || diffs[0].NewText != "new\n" || diffs[0].OldText == nil || *diffs[0].OldText != "old\n" {
		t.Errorf("diffs %+v", diffs)
	}
	if !strings.Contains(strings.Join(locs, ","), a) || !strings.Contains(strings.Join(locs, ","), filepath.Join(ws, "b.txt")) {
		t.Errorf("locations %v", locs)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "b.txt")); string(b) != "two\n" {
		t.Errorf("b.txt %q: the second write was not allowed always", b)
	}
	if _, err := conn.CloseSession(ctx, acp.CloseSessionRequest{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	loaded := &acpClient{}
	conn = startACP(t, home, loaded, "--model", "script:"+sc)
	if _, err := conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: sess.SessionId, Cwd: ws, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	loaded.mu.Lock()
	defer loaded.mu.Unlock()
	done := 0
	for _, st := range loaded.tools {
		if st == acp.ToolCallStatusCompleted {
			done++
		}
	}
	if done != 2 || len(loaded.user) != 1 || !strings.Contains(loaded.text.String(), "done") {
		t.Errorf("session/load replayed %v, user %v, text %q", loaded.tools, loaded.user, loaded.text.String())
	}
}
