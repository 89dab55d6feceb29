package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentty/agentty/engine"
)

// MCPServer is one server of the mcpServers configuration, in the shape
// other MCP clients use: a command to start (stdio), or a URL (streamable
// HTTP).
type MCPServer struct {
	// Type is "sse" for a server on the older HTTP+SSE transport; else a
	// URL is streamable HTTP and a command stdio.
	Type string `json:"type,omitempty"`
	// Timeout, when set, bounds this server's start (and a call, three
	// times it) instead of MCPConfig.Timeout.
	Timeout time.Duration `json:"timeout,omitempty"`
	Command string        `json:"command,omitempty"`
	Args    []string      `json:"args,omitempty"`
	// Env is set in a stdio server's environment, over a minimal one
	// (ChildEnv): a server sees an API key only when Env passes it.
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Policy, when set, is the policy of every tool of the server, over
	// what the server's annotations suggest (a tool the config's tools
	// names has that policy, over this).
	Policy engine.Policy `json:"policy,omitempty"`
	// Dir is the folder a stdio server starts in ("": agentty's).
	Dir string `json:"dir,omitempty"`
	// EnabledTools, when set, are the only tools of the server offered,
	// by the server's names; DisabledTools are never offered.
	EnabledTools  []string `json:"enabled_tools,omitempty"`
	DisabledTools []string `json:"disabled_tools,omitempty"`
	// ToolTimeout bounds one call (default: three times the start's).
	ToolTimeout time.Duration `json:"tool_timeout,omitempty"`
	// Allow are tools allowed without asking, by the server's names.
	Allow []string `json:"allow,omitempty"`
	// Headers, when set, is called before an HTTP server is dialled: the
	// headers it returns are added (a headers helper's).
	HeaderFunc func(context.Context) (map[string]string, error) `json:"-"`
}

// MCPConfig says how StartMCP runs its servers. Its zero value works.
type MCPConfig struct {
	// Timeout bounds a server's start (default 20 s); a call may take
	// three times as long.
	Timeout time.Duration
	// OnChange is called (from the SDK's goroutine) when a server's tool
	// list changed and was read again.
	OnChange func()
	// LogDir holds a log file per stdio server (NAME.log, 0600): all it
	// wrote on stderr, and the lines of stdout that were skipped. "" keeps
	// only the last lines, for errors.
	LogDir string
}

// MCPStatus says how a server is doing.
type MCPStatus struct {
	Server string `json:"server"`
	OK     bool   `json:"ok"`
	Tools  int    `json:"tools"`
	Error  string `json:"error,omitempty"`
	// Warning is a problem that cost nothing yet (lines of output that
	// were not JSON-RPC, skipped).
	Warning string `json:"warning,omitempty"`
}

// MCP connects to MCP servers and offers their tools as server__tool. It is
// safe for concurrent use. A server that fails to start is reported and
// left out; one that dies is started again on the next call of its tools.
// A call is never sent twice: one whose server dies while it runs ends
// with an error, as the engine ends every call it cannot know the end of.
type MCP struct {
	timeout  time.Duration
	onChange func()
	logDir   string

	mu      sync.Mutex // guards servers
	servers map[string]*mcpServer
}

type mcpServer struct {
	name string
	cfg  MCPServer

	mu      sync.Mutex // guards the fields below
	session *mcp.ClientSession
	closed  chan struct{} // closed when session's connection ends
	cmd     *exec.Cmd     // of a stdio server
	log     *serverLog    // of a stdio server, kept across restarts
	tools   []*mcp.Tool
	err     error
}

// StartMCP connects to every server at once, each within timeout. Failures
// are in Status; they never stop the others.
func StartMCP(ctx context.Context, servers map[string]MCPServer, cfg MCPConfig) *MCP {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 20 * time.Second
	}
	m := &MCP{timeout: cfg.Timeout, onChange: cfg.OnChange, logDir: cfg.LogDir, servers: map[string]*mcpServer{}}
	var wg sync.WaitGroup
	for name, cfg := range servers {
		s := &mcpServer{name: name, cfg: cfg}
		m.servers[name] = s
		wg.Go(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.err = m.connect(ctx, s)
		})
	}
	wg.Wait()
	return m
}

// timeoutOf is the time limit of server s's start: its own, else the
// adapter's.
func (m *MCP) timeoutOf(s *mcpServer) time.Duration {
	if s.cfg.Timeout > 0 {
		return s.cfg.Timeout
	}
	return m.timeout
}

// connect starts or dials a server and lists its tools; s.mu is held.
func (m *MCP) connect(ctx context.Context, s *mcpServer) error {
	ctx, cancel := context.WithTimeout(ctx, m.timeoutOf(s))
	defer cancel()
	var transport mcp.Transport
	switch {
	case s.cfg.Command != "":
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Dir = s.cfg.Dir
		// The server gets a minimal environment and what its entry sets:
		// never agentty's own secrets unless the person passes them.
		cmd.Env = osChildEnv(nil, s.cfg.Env)
		if s.log == nil {
			s.log = newServerLog(m.logDir, s.name)
		}
		// Some servers do not exit when stdin closes; do not wait long.
		transport = &stdioTransport{cmd: cmd, terminate: 500 * time.Millisecond, log: s.log}
		s.cmd = cmd
	case s.cfg.URL != "":
		headers, err := s.headers(ctx)
		if err != nil {
			return fmt.Errorf("MCP server %s: %w", s.name, err)
		}
		hc := &http.Client{Transport: headerTransport(headers)}
		if s.cfg.Type == "sse" {
			transport = &mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc}
		} else {
			transport = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc, MaxRetries: -1}
		}
	default:
		return fmt.Errorf("MCP server %s: neither command nor url is set", s.name)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agentty", Version: "0.1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(ctx context.Context, _ *mcp.ToolListChangedRequest) { m.refresh(s) },
	})
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return secretsOut(fmt.Errorf("MCP server %s did not start: %w", s.name, s.log.explain(explainStart(err, s.cfg))))
	}
	tools, err := listTools(ctx, session)
	if err != nil {
		session.Close()
		return fmt.Errorf("MCP server %s: list tools: %w", s.name, s.log.explain(err))
	}
	s.session, s.tools = session, tools
	closed := make(chan struct{})
	s.closed = closed
	go func() {
		session.Wait()
		close(closed)
	}()
	return nil
}

func explainStart(err error, cfg MCPServer) error {
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("command %q not found", cfg.Command)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer in time (%w)", err)
	}
	return err
}

func listTools(ctx context.Context, s *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// refresh reads a server's tool list again after it said it changed.
func (m *MCP) refresh(s *mcpServer) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), m.timeoutOf(s))
		defer cancel()
		s.mu.Lock()
		sess := s.session
		s.mu.Unlock()
		if sess == nil {
			return
		}
		tools, err := listTools(ctx, sess)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.tools = tools
		s.mu.Unlock()
		if m.onChange != nil {
			m.onChange()
		}
	}()
}

// Status reports every server, by name.
func (m *MCP) Status() []MCPStatus {
	m.mu.Lock()
	names := slices.Sorted(maps.Keys(m.servers))
	m.mu.Unlock()
	var out []MCPStatus
	for _, n := range names {
		s := m.servers[n]
		s.mu.Lock()
		st := MCPStatus{Server: n, OK: s.err == nil && s.session != nil}
		if s.err != nil {
			st.Error = s.err.Error()
		}
		var warnings []string
		if s.log != nil {
			warnings = append(warnings, s.log.warning())
		}
		for _, t := range s.tools {
			if _, err := inputSchema(t); err != nil {
				warnings = append(warnings, err.Error())
			} else {
				st.Tools++
			}
		}
		st.Warning = strings.Join(slices.DeleteFunc(warnings, func(w string) bool { return w == "" }), "; ")
		s.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// Tools returns the servers' tools as engine tools named server__tool. Of
// two tools whose names come out the same, the first is kept; a tool whose
// inputSchema is not an object is left out (Status warns of it).
func (m *MCP) Tools() []engine.Tool {
	m.mu.Lock()
	names := slices.Sorted(maps.Keys(m.servers))
	m.mu.Unlock()
	var out []engine.Tool
	seen := map[string]bool{}
	for _, n := range names {
		s := m.servers[n]
		s.mu.Lock()
		tools := s.tools
		s.mu.Unlock()
		for _, t := range tools {
			if !s.offered(t.Name) {
				continue
			}
			if et, ok := m.tool(s, t); ok && !seen[et.Name] {
				seen[et.Name] = true
				out = append(out, et)
			}
		}
	}
	return out
}

// ToolName is the registry name of an MCP server's tool: server__tool, with
// any character that function names may not hold (OpenAI's allow
// [a-zA-Z0-9_-], at most 64) replaced by _.
func ToolName(server, tool string) string {
	name := []byte(server + "__" + tool)
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			name[i] = '_'
		}
	}
	return string(name[:min(len(name), 64)])
}

// inputSchema is the schema of t's arguments, or why t cannot be offered:
// a model's function takes an object of arguments, and an
// OpenAI-compatible server refuses a whole request with a function whose
// parameters are not one. None at all is any object.
func inputSchema(t *mcp.Tool) (json.RawMessage, error) {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || string(schema) == "null" {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	var top map[string]json.RawMessage
	var typ string
	if json.Unmarshal(schema, &top) != nil || top["type"] != nil && (json.Unmarshal(top["type"], &typ) != nil || typ != "object") {
		return nil, fmt.Errorf("tool %s is not offered: its inputSchema is %s, not an object (a model's function takes an object of arguments)", t.Name, engine.OneLine(string(schema), 200))
	}
	return schema, nil
}

// tool is t as an engine tool; false when it cannot be offered.
func (m *MCP) tool(s *mcpServer, t *mcp.Tool) (engine.Tool, bool) {
	schema, err := inputSchema(t)
	if err != nil {
		return engine.Tool{}, false
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	tool := engine.Tool{
		Name:        ToolName(s.name, t.Name), // the call below uses t.Name
		Description: strings.TrimSpace(fmt.Sprintf("%s (from MCP server %s)", desc, s.name)),
		Schema:      schema,
		Policy:      mcpPolicy(s.cfg, t),
		Changes:     t.Annotations == nil || !t.Annotations.ReadOnlyHint,
		Timeout:     cmp.Or(s.cfg.ToolTimeout, m.timeoutOf(s)*3),
		Func: func(ctx context.Context, c *engine.Call) (string, error) {
			return m.call(ctx, s, t.Name, c.Args)
		},
	}
	if _, err := engine.NewRegistry(tool); err != nil {
		// A schema the validator cannot read: the server checks the
		// arguments itself.
		tool.Schema = []byte(`{"type":"object"}`)
	}
	return tool, true
}

// Close ends every server (stdio servers are stopped).
func (m *MCP) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Go(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.session != nil {
				s.session.Close()
				s.session = nil
			}
			if s.log != nil {
				s.log.Close()
			}
		})
	}
	wg.Wait()
}

type headerTransport map[string]string

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(h) > 0 {
		req = req.Clone(req.Context())
		for k, v := range h {
			req.Header.Set(k, v)
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}
