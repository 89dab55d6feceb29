package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/tools"
)

// ValidateArgs checks a tool call's arguments against its tool's schema.
func (s *Setup) ValidateArgs(name string, args json.RawMessage) error {
	return s.registry.Validate(name, args)
}

// EnableShell offers run_shell from now on, as --allow-shell would have
// (a session that was worked on with it, opened again); once only.
func (s *Setup) EnableShell() error {
	s.shellOnce.Do(func() {
		if s.enableShell != nil {
			s.shellErr = s.enableShell()
		}
	})
	return s.shellErr
}

// shellState makes EnableShell happen once.
type shellState struct {
	shellOnce sync.Once
	shellErr  error
}

// addTools fills the setup's registry: the built-in tools, the
// workspace's, search, shell and http as the flags and settings allow, and
// the MCP servers' (read again when a server's list changes), each with
// the settings' policy and time limit and its results redacted.
func (st *Setup) addTools(ctx context.Context, o Options, cfg *config.Settings, wsDir string, redact *config.Redactor, getenv func(string) string) error {
	var base []engine.Tool
	sources := map[string]string{}
	add := func(source string, ts ...engine.Tool) {
		for _, t := range ts {
			base = append(base, t)
			sources[t.Name] = source
		}
	}
	add("builtin", tools.Builtins()...)
	add("workspace", st.ws.ReadFile(), st.ws.ListDir(), st.ws.SearchFiles(), st.ws.WriteFile(), st.ws.EditFile())
	st.knowledge = newKnowledge(func() (*sessions.Store, error) { return o.LocalStore(getenv) }, wsDir, embedding(o, cfg, getenv))
	add("search", tools.SearchKnowledge(st.knowledge))
	add("skill", st.Skills.Tools()...)
	add("builtin", engine.AskUser()) // every gate answers its questions, or says why it cannot
	shellOn := o.AllowShell || (cfg.AllowShell != nil && *cfg.AllowShell)
	st.shellEnv = cfg.ShellEnv
	if shellOn {
		add("shell", st.ws.RunShell(0, cfg.ShellEnv...))
	}
	if len(cfg.HTTP.AllowHosts) > 0 {
		add("http", tools.HTTPGet(cfg.HTTP.AllowHosts, nil))
	}
	st.registry, _ = engine.NewRegistry()
	var mu sync.Mutex // base grows when enableShell adds the shell
	all := func() []engine.Tool {
		mu.Lock()
		ts := slices.Clone(base)
		mu.Unlock()
		if st.mcp != nil {
			ts = append(ts, st.mcp.Tools()...)
		}
		for i, t := range ts {
			if tc, ok := cfg.Tool(t.Name); ok {
				if tc.Policy != "" {
					ts[i].Policy = tc.Policy
				}
				if d := tc.TimeLimit(); d > 0 {
					ts[i].Timeout = d
				}
			}
			ts[i] = redact.Tool(ts[i])
		}
		return ts
	}
	if !shellOn { // a resumed session that was worked on with the shell offers it
		st.enableShell = func() error {
			mu.Lock()
			add("shell", st.ws.RunShell(0, cfg.ShellEnv...))
			mu.Unlock()
			return st.registry.Replace(all()...)
		}
	}
	st.startMCP(ctx, o, cfg, redact, all, getenv)
	if err := st.registry.Replace(all()...); err != nil {
		return err
	}
	for _, t := range st.registry.Tools() {
		source, ok := sources[t.Name]
		if !ok {
			server, _, _ := strings.Cut(t.Name, "__")
			source = "mcp:" + server
		}
		st.Rows = append(st.Rows, ToolRow{Name: t.Name, Source: source, Policy: t.Policy, Description: t.Description, Schema: t.Schema})
	}
	return nil
}

// mcpServer is a config's MCP server as the adapter takes it: its folder
// relative to the workspace, its headers helper a program run as the
// server would be.
func mcpServer(srv config.MCPServer, wsDir string) tools.MCPServer {
	out := tools.MCPServer{Type: srv.Type, Timeout: time.Duration(srv.Timeout), Command: srv.Command, Args: srv.Args,
		Env: srv.Env, URL: srv.URL, Headers: srv.Headers, Policy: srv.Policy, EnabledTools: srv.EnabledTools,
		DisabledTools: srv.DisabledTools, ToolTimeout: time.Duration(srv.ToolTimeout), Allow: srv.AlwaysAllow}
	if srv.Cwd != "" {
		out.Dir = srv.Cwd
		if !filepath.IsAbs(out.Dir) {
			out.Dir = filepath.Join(wsDir, out.Dir)
		}
	}
	if srv.HeadersHelper != "" {
		out.HeaderFunc = tools.HeadersHelper(srv.HeadersHelper, wsDir, srv.Env)
	}
	return out
}
