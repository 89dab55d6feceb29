package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
)

// A workspace's .agentty.json is someone else's file until the person trusts
// the folder. Untrusted, only the keys that cannot run code, send data
// elsewhere or loosen an approval take effect; the others are risky and are
// ignored. The safe keys are listed here, so a key added to config later is
// risky until someone decides otherwise.

// safeKeys are the top-level keys an untrusted workspace may set. "model",
// "allow_shell", "tools", "max_depth", "models" and "compact" are judged by
// their values (riskyKeys).
var safeKeys = map[string]bool{
	"system_prompt":  true,
	"max_steps":      true,
	"context_budget": true,
	// a share of the budget can only cut what the model is given
	"instructions_share": true,
	"ask_timeout":        true, // how long a question waits for the person: nothing to gain
	"temperature":        true,
}

// Workspace is a workspace's .agentty.json as read, and what trusting it
// would enable.
type Workspace struct {
	Dir  string // the workspace, absolute, symlinks resolved
	File string // Dir/.agentty.json, or Dir/.mcp.json when that is all
	// Files are the files read: .agentty.json, .mcp.json and
	// .claude/settings.json (its permissions), those there.
	Files []string
	// Notes say what of them agentty does not use as written (Claude
	// Code's permission rules that have no counterpart, and the deny and
	// ask rules with a specifier that make their tools ask).
	Notes []string
	Sum   string // hex SHA-256 of the files' bytes
	Cfg   *Settings
	// Hooks are the hooks of the folder's files, each with its file
	// (.agentty.json, .claude/settings.json, .claude/settings.local.json):
	// they run only once the folder is trusted.
	Hooks []HookFile
	// Risky maps each risky key ("mcpServers.web", "base_url",
	// "tools.write_file.policy") to its value as compact JSON.
	Risky map[string]string
}

// ReadWorkspace reads dir/.agentty.json and dir/.mcp.json (Claude Code's
// project file: its mcpServers, under .agentty.json's of the same name):
// nil when there is neither. A symlink that leads out of the folder, an
// unreadable file and an invalid one are errors that name the file. user
// is the person's own config, against which "tightening" a tool policy is
// judged.
func ReadWorkspace(dir string, user *Settings) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	path, mcpPath := filepath.Join(abs, ".agentty.json"), filepath.Join(abs, ".mcp.json")
	b, err := readInside(abs, path)
	if err != nil {
		return nil, err
	}
	mb, err := readInside(abs, mcpPath)
	if err != nil {
		return nil, err
	}
	claudePath, localPath := filepath.Join(abs, ".claude", "settings.json"), filepath.Join(abs, ".claude", "settings.local.json")
	cb, err := readInside(abs, claudePath)
	if err != nil {
		return nil, err
	}
	lb, err := readInside(abs, localPath)
	if err != nil || (b == nil && mb == nil && cb == nil && lb == nil) {
		return nil, err
	}
	w := &Workspace{Dir: abs, File: path, Cfg: &Settings{}}
	sum := sha256.New()
	if b != nil {
		if w.Cfg, err = Parse(path, b); err != nil {
			return nil, err
		}
		w.Notes = append(w.Notes, w.Cfg.Notes...)
		sum.Write(b)
	} else {
		w.File = mcpPath
	}
	if mb != nil {
		notes, err := mergeMCPJSON(w.Cfg, mcpPath, mb)
		if err != nil {
			return nil, err
		}
		w.Notes = append(w.Notes, notes...)
		// Trusting the folder trusts both files as they are: a change to
		// either must be trusted again.
		fmt.Fprintf(sum, "\x00.mcp.json\x00%s", mb)
		w.Files = append(w.Files, mcpPath)
	}
	if cb != nil {
		notes, err := mergeClaudePermissions(w.Cfg, claudePath, cb)
		if err != nil {
			return nil, err
		}
		w.Notes = append(w.Notes, notes...)
		fmt.Fprintf(sum, "\x00.claude/settings.json\x00%s", cb)
		w.Files = append(w.Files, claudePath)
		if b == nil && mb == nil {
			w.File = claudePath
		}
	}
	if err := w.readClaudeHooks(sum, claudePath, cb, localPath, lb); err != nil {
		return nil, err
	}
	if b != nil {
		w.Files = append([]string{path}, w.Files...)
	}
	w.Sum, w.Risky = hex.EncodeToString(sum.Sum(nil)), riskyKeys(w.Cfg, user)
	w.addHooks(path)
	return w, nil
}

// Names are the names of the workspace's files read, as a person says
// them: ".agentty.json", ".mcp.json" or ".agentty.json and .mcp.json".
func (w *Workspace) Names() string {
	var names []string
	for _, f := range w.Files {
		rel, err := filepath.Rel(w.Dir, f)
		if err != nil {
			rel = filepath.Base(f)
		}
		names = append(names, rel)
	}
	return strings.Join(names, " and ")
}

// readInside reads the file path of the folder dir: nil when there is
// none; an error when it is a symlink out of dir, unreadable or too big.
func readInside(dir, path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 || filepath.Dir(path) != dir { // the file, or a folder on its way, may be a link
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, fmt.Errorf("config %s: a symlink that cannot be followed: %w", path, err)
		}
		if rel, err := filepath.Rel(dir, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("config %s: a symlink to %s, outside the workspace; refusing to read it", path, target)
		}
	}
	b, err := ReadSmall(path)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return b, nil
}

// mergeMCPJSON adds the servers of a .mcp.json (b, read from path) to c,
// under c's own of the same name. The file is Claude Code's: its fields
// other than mcpServers, and fields of an entry agentty does not use, are
// ignored.
func mergeMCPJSON(c *Settings, path string, b []byte) ([]string, error) {
	var f struct {
		MCPServers map[string]MCPServer `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("config %s:%d: %v", path, lineAt(b, se.Offset), se)
		}
		return nil, fmt.Errorf("config %s: %v", path, err)
	}
	if err := checkMCP(path, b, f.MCPServers); err != nil {
		return nil, err
	}
	notes := mcpJSONNotes(path, b)
	for name, srv := range f.MCPServers {
		if _, ok := c.MCPServers[name]; ok {
			continue
		}
		if c.MCPServers == nil {
			c.MCPServers = map[string]MCPServer{}
		}
		c.MCPServers[name] = srv
	}
	return notes, nil
}

// mcpJSONNotes says what of a .mcp.json agentty does not use: a file with
// no mcpServers, and each key of an entry it does not read.
func mcpJSONNotes(path string, b []byte) []string {
	var raw struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	json.Unmarshal(b, &raw)
	if raw.MCPServers == nil {
		return []string{fmt.Sprintf("%s has no mcpServers: agentty uses nothing of it", path)}
	}
	return mcpEntryNotes(path, b)
}

// mcpEntryNotes names each key of an mcpServers entry of the file path
// (its bytes b) that agentty does not read, with its line.
func mcpEntryNotes(path string, b []byte) []string {
	var raw struct {
		MCPServers map[string]map[string]json.RawMessage `json:"mcpServers"`
	}
	json.Unmarshal(b, &raw)
	var notes []string
	for _, name := range slices.Sorted(maps.Keys(raw.MCPServers)) {
		for _, k := range slices.Sorted(maps.Keys(raw.MCPServers[name])) {
			if !slices.ContainsFunc(mcpServerKeys, func(known string) bool { return strings.EqualFold(known, k) }) { // JSON's names match in any case
				notes = append(notes, fmt.Sprintf("%s:%d: mcpServers.%s.%s: not used by agentty (the keys it reads: %s)", path, lineAfter(b, `"`+name+`"`, `"`+k+`"`), name, k, strings.Join(mcpServerKeys, ", ")))
			}
		}
	}
	return notes
}

// riskyKeys lists what an untrusted workspace config c may not set, each
// with its value as JSON, judged on the decoded config (what would take
// effect), so that a repeated key or a key in another case (encoding/json
// matches field names case-insensitively) cannot slip past. Every field that
// is not judged here and not in safeKeys is risky when set: a key added to
// config later is risky until someone decides otherwise.
func riskyKeys(c, user *Settings) map[string]string {
	risky := map[string]string{}
	add := func(k string, v any) {
		b, _ := json.Marshal(v)
		risky[k] = string(b)
	}
	if c.Model != "" && c.Model != offline.Name {
		add("model", c.Model) // script: too: a file of decisions someone else wrote
	}
	if c.AllowShell != nil && *c.AllowShell {
		add("allow_shell", true)
	}
	if c.MaxDepth > max(user.MaxDepth, engine.DefaultMaxDepth) {
		// Deeper delegation multiplies the runs (and their cost) that
		// prompts someone else wrote can start; shallower only bounds.
		add("max_depth", c.MaxDepth)
	}
	for name, tc := range c.Tools {
		if tc.Policy != "" && !stricter(tc.Policy, user.PolicyOf(name)) {
			add("tools."+name+".policy", tc.Policy)
		}
	}
	for name, srv := range c.MCPServers {
		add("mcpServers."+name, srv)
	}
	if c.HTTP.AllowHosts != nil {
		add("http.allow_hosts", c.HTTP.AllowHosts)
	}
	if c.Compact.Model != "" && c.Compact.Model != offline.Name {
		add("compact.model", c.Compact.Model) // another model may reach another host
	}
	// Models' numbers and compaction's auto, trigger and keep_turns only
	// size requests (as context_budget does); their fields added later
	// are risky.
	riskyFields("compact.", &c.Compact, safeCompactKeys, add)
	for name, mc := range c.Models {
		riskyFields("models."+name+".", &mc, safeModelKeys, add)
	}
	judged := map[string]bool{"model": true, "allow_shell": true, "tools": true, "mcpServers": true, "http": true, "max_depth": true,
		"models": true, "compact": true}
	riskyFields("", c, judged, add)
	return risky
}

// safeCompactKeys and safeModelKeys are the fields of compact and of a
// models entry that are not risky ("model" of compact is judged by value).
var (
	safeCompactKeys = map[string]bool{"auto": true, "trigger": true, "keep_turns": true, "model": true}
	safeModelKeys   = map[string]bool{"context_window": true, "max_output": true}
)

// riskyFields adds every field of the struct *ptr that is set and is
// neither in skip nor in safeKeys (for the top level), named prefix+tag.
func riskyFields(prefix string, ptr any, skip map[string]bool, add func(string, any)) {
	v := reflect.ValueOf(ptr).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || tag == "" || tag == "-" || skip[tag] || prefix == "" && safeKeys[tag] {
			continue
		}
		if !v.Field(i).IsZero() {
			add(prefix+tag, v.Field(i).Interface())
		}
	}
}

// policyRank orders policies from the loosest to the strictest.
func policyRank(p engine.Policy) int {
	switch p {
	case engine.PolicyDeny:
		return 2
	case engine.PolicyAsk:
		return 1
	}
	return 0
}

// PolicyOf is the policy the person's own config gives the tool called
// name (its entry, a pattern's, or its MCP server's; "" for none), as far
// as a workspace entry for name could override it. A name that is itself
// a pattern ("fs__*") could override any entry it matches: only deny is
// stricter than all of them.
func (c *Settings) PolicyOf(name string) engine.Policy {
	if strings.ContainsAny(name, "*?[\\") {
		return engine.PolicyDeny
	}
	if tc, ok := c.Tool(name); ok && tc.Policy != "" {
		return tc.Policy
	}
	if server, _, ok := strings.Cut(name, "__"); ok {
		return c.MCPServers[server].Policy
	}
	return ""
}

// stricter reports whether an untrusted workspace may set p over base (the
// user's setting, empty when none): ask and deny never loosen a tool's own
// default (the built-in tools default to allow or ask), but ask over the
// user's deny would.
func stricter(p, base engine.Policy) bool {
	return p != engine.PolicyAllow && policyRank(p) >= policyRank(base)
}

// Safe is the part of the workspace config an untrusted folder may set.
func (w *Workspace) Safe() *Settings {
	c := w.Cfg
	s := &Settings{SystemPrompt: c.SystemPrompt, MaxSteps: c.MaxSteps, ContextBudget: c.ContextBudget, Temperature: c.Temperature}
	s.Compact = CompactConfig{Auto: c.Compact.Auto, Trigger: c.Compact.Trigger, KeepTurns: c.Compact.KeepTurns,
		trigger: c.Compact.trigger, triggerPct: c.Compact.triggerPct}
	if c.Compact.Model == offline.Name {
		s.Compact.Model = c.Compact.Model
	}
	for name, mc := range c.Models {
		if s.Models == nil {
			s.Models = map[string]ModelConfig{}
		}
		s.Models[name] = ModelConfig{ContextWindow: mc.ContextWindow, MaxOutput: mc.MaxOutput}
	}
	if _, risky := w.Risky["max_depth"]; !risky {
		s.MaxDepth = c.MaxDepth
	}
	if c.Model == offline.Name {
		s.Model = c.Model
	}
	if c.AllowShell != nil && !*c.AllowShell {
		s.AllowShell = c.AllowShell
	}
	for name, tc := range c.Tools {
		if _, risky := w.Risky["tools."+name+".policy"]; risky || tc.Policy == engine.PolicyAllow {
			tc.Policy = ""
		}
		if s.Tools == nil {
			s.Tools = map[string]ToolConfig{}
		}
		s.Tools[name] = tc
	}
	return s
}

// RiskyList is the risky keys, sorted.
func (w *Workspace) RiskyList() []string { return slices.Sorted(maps.Keys(w.Risky)) }

// DescribeRisky lists risky keys and their values, one per line, for the
// person deciding whether to trust a folder, on a terminal cols wide.
func DescribeRisky(w *Workspace, cols int) string {
	var b strings.Builder
	width := 0
	for k := range w.Risky {
		width = max(width, len(k))
	}
	for _, k := range w.RiskyList() {
		// Whole, wrapped: a value padded past a cut must not hide its end
		// (an mcpServers entry's env after a long list of arguments).
		lines := engine.Wrap(engine.ShowSpaces(w.Risky[k]), max(20, cols-width-5))
		fmt.Fprintf(&b, "  %-*s  %s\n", width, k, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, "", l)
		}
	}
	return b.String()
}

// IgnoredNotice is the one line that says which keys of an untrusted
// workspace config were ignored, and how to trust the folder.
func IgnoredNotice(w *Workspace, changed []string) string {
	what := "untrusted"
	if changed != nil {
		what = "changed since you trusted it (" + strings.Join(changed, ", ") + ")"
	}
	return fmt.Sprintf("%s: %s %s: ignoring %s, which can run programs, reach hosts or loosen approvals (to use them: agentty trust %s)",
		w.Dir, w.Names(), what, strings.Join(w.RiskyList(), ", "), ShellQuote(w.Dir))
}
