package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/agentty/agentty/engine"
)

// MCP servers people already have: Codex's ~/.codex/config.toml
// ([mcp_servers.NAME]) and Claude Code's ~/.claude.json (mcpServers, the
// user's, and those of the project folder). Importing reads them and
// starts nothing.

// Imported is what an import found: the servers in agentty's shape, where
// each came from, and what could not be carried over.
type Imported struct {
	Servers map[string]MCPServer
	From    map[string]string // server → the file it came from
	Notes   []string
}

// CodexConfigPath is Codex's config file: $CODEX_HOME/config.toml, else
// ~/.codex/config.toml ("" with neither).
func CodexConfigPath(getenv func(string) string) string {
	if d := getenv("CODEX_HOME"); d != "" {
		return filepath.Join(d, "config.toml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".codex", "config.toml")
	}
	return ""
}

// ClaudeConfigPath is Claude Code's user file, ~/.claude.json ("" without
// HOME).
func ClaudeConfigPath(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".claude.json")
	}
	return ""
}

// codexServer is an [mcp_servers.NAME] table of Codex's config.
type codexServer struct {
	Command           string            `toml:"command"`
	Args              []string          `toml:"args"`
	Env               map[string]string `toml:"env"`
	URL               string            `toml:"url"`
	BearerTokenEnvVar string            `toml:"bearer_token_env_var"`
	HTTPHeaders       map[string]string `toml:"http_headers"`
	EnvHTTPHeaders    map[string]string `toml:"env_http_headers"`
	Enabled           *bool             `toml:"enabled"`
	StartupTimeoutSec float64           `toml:"startup_timeout_sec"`
	StartupTimeoutMS  float64           `toml:"startup_timeout_ms"`
	Cwd               string            `toml:"cwd"`
	EnabledTools      []string          `toml:"enabled_tools"`
	DisabledTools     []string          `toml:"disabled_tools"`
	ToolTimeoutSec    float64           `toml:"tool_timeout_sec"`
	ApprovalMode      string            `toml:"default_tools_approval_mode"`
}

// codexApproval maps Codex's default_tools_approval_mode to a policy of
// every tool of the server ("" is agentty's default: a tool the server
// marks read-only runs, any other asks), and what to say of it.
var codexApproval = map[string]struct {
	policy engine.Policy
	note   string
}{
	"":        {"", ""},
	"auto":    {"", "auto: agentty's default (tools the server marks read-only run, the others ask)"},
	"writes":  {"", "writes: agentty's default (tools the server marks read-only run, the others ask)"},
	"prompt":  {engine.PolicyAsk, ""},
	"approve": {engine.PolicyAllow, "approve: every tool of the server runs without asking, as in Codex"},
}

// ImportCodex adds the servers of Codex's config file at path to im; a
// missing file adds nothing.
func (im *Imported) ImportCodex(path string) error {
	b, err := ReadSmall(path)
	if errors.Is(err, fs.ErrNotExist) || path == "" {
		return nil
	}
	if err != nil {
		return err
	}
	var f struct {
		MCPServers map[string]codexServer `toml:"mcp_servers"`
	}
	md, err := toml.Decode(string(b), &f)
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	unused := map[string][]string{} // server → its keys agentty does not read
	for _, k := range md.Undecoded() {
		if len(k) >= 3 && k[0] == "mcp_servers" {
			unused[k[1]] = append(unused[k[1]], strings.Join(k[2:], "."))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(f.MCPServers)) {
		c := f.MCPServers[name]
		s := MCPServer{Command: c.Command, Args: c.Args, Env: c.Env, URL: c.URL, Headers: maps.Clone(c.HTTPHeaders),
			Cwd: c.Cwd, EnabledTools: c.EnabledTools, DisabledTools: c.DisabledTools}
		approval, known := codexApproval[c.ApprovalMode]
		if !known {
			im.Notes = append(im.Notes, fmt.Sprintf("%s: server %s: default_tools_approval_mode = %q is not auto, prompt, approve or writes; not imported", path, name, c.ApprovalMode))
			continue
		}
		if s.Policy = approval.policy; approval.note != "" {
			im.Notes = append(im.Notes, fmt.Sprintf("%s: server %s: default_tools_approval_mode = %s", path, name, approval.note))
		}
		if c.ToolTimeoutSec != 0 {
			if d := c.ToolTimeoutSec * float64(time.Second); !(d > 0 && d <= float64(MaxTimeLimit)) {
				im.Notes = append(im.Notes, fmt.Sprintf("%s: server %s: tool_timeout_sec = %v is not a time limit above 0 and at most %s; not imported",
					path, name, c.ToolTimeoutSec, shortDuration(MaxTimeLimit)))
				continue
			}
			s.ToolTimeout = Seconds(c.ToolTimeoutSec * float64(time.Second))
		}
		for _, k := range slices.Sorted(slices.Values(unused[name])) {
			im.Notes = append(im.Notes, fmt.Sprintf("%s: server %s: %s is not used by agentty", path, name, k))
		}
		if c.Enabled != nil && !*c.Enabled {
			s.Disabled = true
		}
		if key, v, unit := codexTimeout(c); v != 0 {
			// inf, NaN, 1e30 ms: no time limit agentty can hold; the
			// server is left out rather than given another limit.
			d := v * float64(unit)
			if !(d > 0 && d <= float64(MaxTimeLimit)) {
				im.Notes = append(im.Notes, fmt.Sprintf("%s: server %s: %s = %v is not a time limit above 0 and at most %s; not imported",
					path, name, key, v, shortDuration(MaxTimeLimit)))
				continue
			}
			s.Timeout = Seconds(d)
		}
		if c.BearerTokenEnvVar != "" {
			s.Headers = setHeader(s.Headers, "Authorization", "Bearer ${"+c.BearerTokenEnvVar+"}")
		}
		for h, env := range c.EnvHTTPHeaders {
			s.Headers = setHeader(s.Headers, h, "${"+env+"}")
		}
		im.add(name, s, path)
	}
	return nil
}

// codexTimeout is the server's startup timeout as Codex's config gives
// it: the key, the value and its unit (0 when neither is set).
func codexTimeout(c codexServer) (string, float64, time.Duration) {
	if c.StartupTimeoutSec != 0 {
		return "startup_timeout_sec", c.StartupTimeoutSec, time.Second
	}
	return "startup_timeout_ms", c.StartupTimeoutMS, time.Millisecond
}

func setHeader(h map[string]string, k, v string) map[string]string {
	if h == nil {
		h = map[string]string{}
	}
	h[k] = v
	return h
}

// ImportClaude adds the servers of Claude Code's user file at path to im:
// its mcpServers, and those it keeps for the project folder project (its
// "local" scope); a missing file adds nothing.
func (im *Imported) ImportClaude(path, project string) error {
	b, err := ReadSmall(path)
	if errors.Is(err, fs.ErrNotExist) || path == "" {
		return nil
	}
	if err != nil {
		return err
	}
	var f struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	add := func(servers map[string]json.RawMessage, where string) {
		for _, name := range slices.Sorted(maps.Keys(servers)) {
			var s MCPServer
			if err := json.Unmarshal(servers[name], &s); err != nil {
				im.Notes = append(im.Notes, fmt.Sprintf("%s: server %s: %v; not imported", where, name, err))
				continue
			}
			im.add(name, s, where)
		}
	}
	add(f.MCPServers, path)
	if p, ok := f.Projects[project]; ok && len(p.MCPServers) > 0 {
		// Claude Code's "local" servers are this folder's only: they belong
		// in its .mcp.json, not in a config every folder uses.
		im.Notes = append(im.Notes, fmt.Sprintf("%s: %s are this folder's own servers (Claude Code's local scope); not imported: put them in %s",
			path, strings.Join(slices.Sorted(maps.Keys(p.MCPServers)), ", "), filepath.Join(project, ".mcp.json")))
	}
	return nil
}

// Shown is the servers as a preview shows them: the credentials in them
// replaced (the values of credential variables and headers, credential
// arguments such as --api-key=… and --token …, a URL's password and
// api_key), for --write writes them as they are. A value made of ${VAR}
// references alone (perhaps after "Bearer") is shown as it is; a default
// (${VAR:-…}) or text beside a reference may be the secret itself.
func (im *Imported) Shown() map[string]MCPServer {
	hidden := func(k string) string { return "[redacted " + k + ": --write writes it as it is]" }
	hide := func(kv map[string]string) map[string]string {
		out := maps.Clone(kv)
		for k, v := range out {
			if secretName(k) && !onlyRefs(v) {
				out[k] = hidden(k)
			}
		}
		return out
	}
	out := map[string]MCPServer{}
	for name, s := range im.Servers {
		s.Env, s.Headers, s.Args = hide(s.Env), hide(s.Headers), slices.Clone(s.Args)
		argSecrets(s.Args, func(i int, k, prefix, v string) {
			if !onlyRefs(v) {
				s.Args[i] = prefix + hidden(k)
			}
		})
		urlSecrets(s.URL, func(k, v string) {
			if v != "" && !onlyRefs(v) {
				s.URL = strings.ReplaceAll(strings.ReplaceAll(s.URL, v, "REDACTED"), url.QueryEscape(v), "REDACTED")
			}
		})
		out[name] = s
	}
	return out
}

// onlyRefs reports whether v is ${VAR} references and nothing else, but
// for an authorization scheme ("Bearer ${TOKEN}"): what it holds comes
// from the environment when the server starts.
func onlyRefs(v string) bool {
	rest := envRef.ReplaceAllStringFunc(v, func(ref string) string {
		if strings.Contains(ref, ":-") {
			return ref // a default is a value written here
		}
		return " "
	})
	switch strings.ToLower(strings.TrimSpace(rest)) {
	case "", "bearer", "basic", "token":
		return true
	}
	return false
}

// add keeps s as name unless a server of that name came first.
func (im *Imported) add(name string, s MCPServer, from string) {
	if im.Servers == nil {
		im.Servers, im.From = map[string]MCPServer{}, map[string]string{}
	}
	if first, dup := im.From[name]; dup {
		im.Notes = append(im.Notes, fmt.Sprintf("%s: server %s is also in %s, which is kept", from, name, first))
		return
	}
	if s.Command == "" && s.URL == "" {
		im.Notes = append(im.Notes, fmt.Sprintf("%s: server %s has neither command nor url; not imported", from, name))
		return
	}
	if field, problem := s.check(); problem != "" {
		im.Notes = append(im.Notes, fmt.Sprintf("%s: server %s: %s: %s; not imported", from, name, field, problem))
		return
	}
	im.Servers[name], im.From[name] = s, from
}

// MergeMCPServers writes servers into the config file at path (made when
// there is none), keeping every other key of it and the servers it has
// already; it returns the names it added. Nothing is started, and
// nothing is written that Parse would refuse: the old file is kept.
func MergeMCPServers(path string, servers map[string]MCPServer) ([]string, error) {
	doc := map[string]json.RawMessage{}
	b, err := ReadSmall(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if _, err := Parse(path, b); err != nil {
			return nil, err // never write over a file agentty cannot read
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("config %s: %v", path, err)
		}
	}
	have := map[string]json.RawMessage{}
	if raw, ok := doc["mcpServers"]; ok {
		if err := json.Unmarshal(raw, &have); err != nil {
			return nil, fmt.Errorf("config %s: mcpServers: %v", path, err)
		}
	}
	var added []string
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		if _, ok := have[name]; ok {
			continue
		}
		raw, err := json.Marshal(servers[name])
		if err != nil {
			return nil, err
		}
		have[name] = raw
		added = append(added, name)
	}
	if len(added) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(have)
	if err != nil {
		return nil, err
	}
	doc["mcpServers"] = raw
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	// What is written is read back first, by the loader's own Parse: a
	// file every command then fails to read is never written.
	if _, err := Parse(path, out); err != nil {
		return nil, fmt.Errorf("%s was not written: with the servers added it would not load (%v)", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	return added, WriteFileAtomic(path, append(out, '\n'))
}

// WriteFileAtomic replaces path with b through a temporary file beside
// it: a crash leaves the old file or the new, never half of one.
func WriteFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".config-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
