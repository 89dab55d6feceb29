package config

import (
	"encoding/json"
	"fmt"
	"hash"
	"path/filepath"
)

// HookFile is the hooks key of one file, as written (Claude Code's shape:
// event → matcher groups → commands); package hooks reads it.
type HookFile struct {
	Path string
	Raw  json.RawMessage
	// Plugin names the plugin the file is of, Root its folder
	// (CLAUDE_PLUGIN_ROOT); "" for the person's and a workspace's.
	Plugin, Root string
}

// readClaudeHooks takes the hooks of a folder's .claude/settings.json (cb,
// read from claudePath: its permissions are read by ReadWorkspace) and
// .claude/settings.local.json (lb); the local file's bytes join the trust
// hash, so a hook added to it must be trusted again.
func (w *Workspace) readClaudeHooks(sum hash.Hash, claudePath string, cb []byte, localPath string, lb []byte) error {
	if lb != nil {
		fmt.Fprintf(sum, "\x00.claude/settings.local.json\x00%s", lb)
		w.Files = append(w.Files, localPath)
		if len(w.Files) == 1 {
			w.File = localPath
		}
	}
	for _, f := range []struct {
		path string
		b    []byte
	}{{claudePath, cb}, {localPath, lb}} {
		if f.b == nil {
			continue
		}
		h, err := ClaudeHooks(f.path, f.b)
		if err != nil {
			return err
		}
		if h != nil {
			w.Hooks = append(w.Hooks, *h)
		}
	}
	return nil
}

// addHooks makes the folder's hooks risky keys (they are programs: they
// run only in a trusted folder), .agentty.json's (at path) first.
func (w *Workspace) addHooks(path string) {
	delete(w.Risky, "hooks")
	if hasHooks(w.Cfg.Hooks) {
		w.Hooks = append([]HookFile{{Path: path, Raw: w.Cfg.Hooks}}, w.Hooks...)
	}
	for _, h := range w.Hooks {
		rel, err := filepath.Rel(w.Dir, h.Path)
		if err != nil {
			rel = h.Path
		}
		w.Risky["hooks ("+rel+")"] = string(compactJSON(h.Raw))
	}
}

// hasHooks reports whether raw holds any hook: not absent, null or {}.
func hasHooks(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		return len(m) > 0
	}
	return len(raw) > 0 && string(raw) != "null"
}

// compactJSON is raw without its spaces (raw itself when it is not JSON).
func compactJSON(raw json.RawMessage) []byte {
	var out []byte
	if b, err := json.Marshal(raw); err == nil {
		out = b
	} else {
		out = raw
	}
	return out
}

// ClaudeHooks is the hooks key of a Claude Code settings file (b, read
// from path): nil when it has none.
func ClaudeHooks(path string, b []byte) (*HookFile, error) {
	var s struct {
		Hooks json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("config %s: %v", path, err)
	}
	if !hasHooks(s.Hooks) {
		return nil, nil
	}
	return &HookFile{Path: path, Raw: s.Hooks}, nil
}
