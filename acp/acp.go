package acp

// agentty as an editor's agent over the Agent Client Protocol (JSON-RPC on
// stdio; Zed, JetBrains IDEs, Neovim and Emacs speak it): a session/new is
// an agentty session in the editor's folder, journaled like any other;
// session/prompt is a run whose text, thoughts and tool calls stream as
// session/update notifications; a tool that asks becomes
// session/request_permission. The folder's trust is judged as everywhere
// else: the editor names the folder, it does not vouch for it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// Serve answers an ACP client on in and out until it hangs up or ctx
// ends. o is the setup of every session (its workspace is each session's
// cwd); what goes wrong outside a request is said on errw.
func Serve(ctx context.Context, o app.Options, in io.Reader, out io.Writer, errw io.Writer, getenv func(string) string) error {
	store, err := o.Store(getenv)
	if err != nil {
		return err
	}
	defer store.Close()
	a := &acpAgent{o: o, getenv: getenv, errw: errw, store: store, sessions: map[acp.SessionId]*acpSession{}}
	a.conn = acp.NewAgentSideConnection(a, out, in)
	select {
	case <-a.conn.Done():
	case <-ctx.Done():
	}
	a.closeAll()
	return nil
}

// acpAgent is the ACP agent: the sessions the client opened.
type acpAgent struct {
	conn   *acp.AgentSideConnection
	o      app.Options
	getenv func(string) string
	errw   io.Writer
	store  *sessions.Store

	mu       sync.Mutex
	sessions map[acp.SessionId]*acpSession
}

// acpSession is a session the client opened: its setup (for its cwd),
// journal and state, and the prompt going on.
type acpSession struct {
	st      *app.Setup
	journal *sessions.Journal
	sess    *engine.Session
	mu      sync.Mutex
	cancel  context.CancelFunc // the prompt going on; nil when none
	allowed map[string]bool    // what the editor's person allowed always (acp_files.go)
}

var (
	_ acp.Agent       = (*acpAgent)(nil)
	_ acp.AgentLoader = (*acpAgent)(nil)
)

// Initialize says what agentty can do: load sessions; prompts of text
// (and resource links, read as text).
func (a *acpAgent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{
		ProtocolVersion:   acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{LoadSession: true, McpCapabilities: acp.McpCapabilities{Http: true, Sse: true}},
		AgentInfo:         &acp.Implementation{Name: "agentty", Version: "dev"},
	}, nil
}

// Authenticate has nothing to do: the model's key is agentty's
// environment's.
func (a *acpAgent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

// NewSession makes an agentty session working in the client's cwd.
func (a *acpAgent) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	st, err := a.setup(ctx, p.Cwd, p.McpServers)
	if err != nil {
		return acp.NewSessionResponse{}, err
	}
	j, err := a.store.Create()
	if err != nil {
		st.Close()
		return acp.NewSessionResponse{}, err
	}
	id := acp.SessionId(j.ID)
	a.add(id, &acpSession{st: st, journal: j, sess: engine.NewSession(j.ID)})
	a.advertise(ctx, id, st)
	return acp.NewSessionResponse{SessionId: id}, nil
}

// LoadSession opens an agentty session again and replays its conversation
// to the client, as the protocol asks.
func (a *acpAgent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	a.mu.Lock()
	if open := a.sessions[p.SessionId]; open != nil { // open here already: this client loads it again
		delete(a.sessions, p.SessionId)
		open.close()
	}
	a.mu.Unlock()
	j, l, err := a.store.OpenWriter(string(p.SessionId))
	if err != nil {
		return acp.LoadSessionResponse{}, acp.NewInvalidParams(err.Error())
	}
	st, err := a.setup(ctx, p.Cwd, p.McpServers)
	if err != nil {
		j.Close()
		return acp.LoadSessionResponse{}, err
	}
	a.add(p.SessionId, &acpSession{st: st, journal: j, sess: l.Session})
	a.replay(ctx, p.SessionId, l.Events)
	a.advertise(ctx, p.SessionId, st)
	return acp.LoadSessionResponse{}, nil
}

// setup builds what a session in cwd (absolute, as the protocol says)
// runs on, with the MCP servers the editor passes: the client's approvals
// are its gate.
func (a *acpAgent) setup(ctx context.Context, cwd string, servers []acp.McpServer) (*app.Setup, error) {
	if !filepath.IsAbs(cwd) {
		return nil, acp.NewInvalidParams(fmt.Sprintf("cwd %q is not an absolute path", cwd))
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, acp.NewInvalidParams(fmt.Sprintf("cwd %s is not a folder", cwd))
	}
	o := a.o
	o.Workspace = cwd
	o.MCP = editorServers(servers)
	st, err := app.Build(ctx, o, acpGate{a}, a.getenv)
	if err != nil {
		return nil, err
	}
	for _, n := range st.Notices {
		fmt.Fprintln(a.errw, "agentty acp: warning:", n)
	}
	return st, nil
}

func (a *acpAgent) add(id acp.SessionId, s *acpSession) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if old := a.sessions[id]; old != nil {
		old.close()
	}
	a.sessions[id] = s
}

func (a *acpAgent) session(id acp.SessionId) (*acpSession, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	if s == nil {
		return nil, acp.NewInvalidParams(fmt.Sprintf("no session %s here (session/new or session/load first)", id))
	}
	return s, nil
}

// advertise tells the client the slash commands.
func (a *acpAgent) advertise(ctx context.Context, id acp.SessionId, st *app.Setup) {
	cmds := []acp.AvailableCommand{
		{Name: "compact", Description: "summarise the oldest history now (optional: what to keep)"},
		{Name: "memory", Description: "the session's memory facts"},
	}
	if len(st.Skills.Skills) > 0 {
		cmds = append(cmds, acp.AvailableCommand{Name: "skills", Description: "the Agent Skills the model may read"})
	}
	for _, c := range st.Commands() { // the custom commands: their prompts expanded when one is sent
		ac := acp.AvailableCommand{Name: c.Name, Description: c.Description}
		if c.ArgumentHint != "" {
			ac.Input = &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: c.ArgumentHint}}
		}
		cmds = append(cmds, ac)
	}
	a.update(ctx, id, acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{AvailableCommands: cmds}})
}

// update sends one session/update; a client that went away ends the
// connection, which Serve sees.
func (a *acpAgent) update(ctx context.Context, id acp.SessionId, u acp.SessionUpdate) {
	if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: id, Update: u}); err != nil {
		fmt.Fprintln(a.errw, "agentty acp: session/update:", err)
	}
}

// Cancel stops the session's prompt going on, at once.
func (a *acpAgent) Cancel(_ context.Context, p acp.CancelNotification) error {
	s, err := a.session(p.SessionId)
	if err != nil {
		return nil // nothing to cancel
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
	return nil
}

// CloseSession ends a session here; its journal stays.
func (a *acpAgent) CloseSession(_ context.Context, p acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	a.mu.Lock()
	s := a.sessions[p.SessionId]
	delete(a.sessions, p.SessionId)
	a.mu.Unlock()
	if s != nil {
		s.close()
	}
	return acp.CloseSessionResponse{}, nil
}

func (s *acpSession) close() {
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
	s.journal.Close()
	s.st.Close()
}

func (a *acpAgent) closeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, s := range a.sessions {
		s.close()
		delete(a.sessions, id)
	}
}

// ListSessions lists the sessions of the store, newest first.
func (a *acpAgent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	list, err := a.store.List()
	if err != nil {
		return acp.ListSessionsResponse{}, err
	}
	out := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	for _, l := range list {
		updated := l.Updated.UTC().Format("2006-01-02T15:04:05Z")
		out.Sessions = append(out.Sessions, acp.SessionInfo{SessionId: acp.SessionId(l.ID), Title: acp.Ptr(l.Title), UpdatedAt: &updated})
	}
	return out, nil
}

// ResumeSession is not offered (session/load is).
func (a *acpAgent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, errors.New("agentty loads sessions with session/load")
}

// SetSessionMode: agentty has no modes.
func (a *acpAgent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, nil
}

// SetSessionConfigOption: agentty offers none.
func (a *acpAgent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, errors.New("agentty offers no session options")
}

// promptText is the text of a prompt's blocks: text as it is, a resource
// link or an embedded text resource as a line naming it (and its text).
func promptText(blocks []acp.ContentBlock) string {
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.ResourceLink != nil:
			parts = append(parts, "[file: "+b.ResourceLink.Uri+"]")
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, "[file: "+r.Uri+"]\n"+r.Text)
		}
	}
	return strings.TrimSpace(strings.Join(parts, "\n\n"))
}

// editorServers are the MCP servers an editor passes in session/new, as
// agentty's.
func editorServers(servers []acp.McpServer) map[string]config.MCPServer {
	out := map[string]config.MCPServer{}
	pairs := func(kv []acp.HttpHeader) map[string]string {
		m := map[string]string{}
		for _, h := range kv {
			m[h.Name] = h.Value
		}
		return m
	}
	for _, s := range servers {
		switch {
		case s.Stdio != nil:
			env := map[string]string{}
			for _, e := range s.Stdio.Env {
				env[e.Name] = e.Value
			}
			out[s.Stdio.Name] = config.MCPServer{Command: s.Stdio.Command, Args: s.Stdio.Args, Env: env}
		case s.Http != nil:
			out[s.Http.Name] = config.MCPServer{Type: "http", URL: s.Http.Url, Headers: pairs(s.Http.Headers)}
		case s.Sse != nil:
			out[s.Sse.Name] = config.MCPServer{Type: "sse", URL: s.Sse.Url, Headers: pairs(s.Sse.Headers)}
		}
	}
	return out
}
