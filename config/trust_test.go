package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTrustCoversEveryFileOfTheFolder: trusting a folder trusts its
// .agentty.json, .mcp.json and .claude/settings.json as they are: a change
// to any one alone (added, edited, removed) must be trusted again, and the
// files as they were are trusted still. No MCP server is started.
func TestTrustCoversEveryFileOfTheFolder(t *testing.T) {
	files := map[string]string{
		".agentty.json":         `{"max_steps": 3}`,
		".mcp.json":             `{"mcpServers": {"fs": {"command": "srv", "args": ["--root", "."]}}}`,
		".claude/settings.json": `{"permissions": {"deny": ["Write"]}}`,
	}
	changed := map[string]string{
		".agentty.json":         `{"max_steps": 4}`,
		".mcp.json":             `{"mcpServers": {"fs": {"command": "srv", "args": ["--root", "/"]}}}`,
		".claude/settings.json": `{"permissions": {"allow": ["Write"]}}`,
	}
	for _, only := range []string{".agentty.json", ".mcp.json", ".claude/settings.json"} {
		for _, how := range []string{"edited", "removed", "added"} {
			t.Run(only+" "+how, func(t *testing.T) {
				ws := t.TempDir()
				write := func(name, body string) {
					os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755)
					if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				for name, body := range files {
					if how != "added" || name != only {
						write(name, body)
					}
				}
				store, err := LoadTrustFile(filepath.Join(t.TempDir(), "trusted.json"))
				if err != nil {
					t.Fatal(err)
				}
				holds := func() bool {
					t.Helper()
					w, err := ReadWorkspace(ws, &Settings{})
					if err != nil {
						t.Fatal(err)
					}
					return store.Holds(w)
				}
				w, err := ReadWorkspace(ws, &Settings{})
				if err != nil {
					t.Fatal(err)
				}
				if err := store.Trust(w.Dir, w); err != nil {
					t.Fatal(err)
				}
				if !holds() {
					t.Fatal("the trust does not hold for the files just trusted")
				}
				switch how {
				case "edited":
					write(only, changed[only])
				case "removed":
					os.Remove(filepath.Join(ws, only))
				case "added":
					write(only, files[only])
				}
				if holds() {
					t.Errorf("%s %s alone: the folder is trusted still", only, how)
				}
				if how == "edited" {
					write(only, files[only])
					if !holds() {
						t.Errorf("%s as it was trusted: the trust does not hold", only)
					}
				}
			})
		}
	}
}

// TestTrustCannotMoveBetweenFiles: the bytes of the three files are hashed
// one after another, so .agentty.json must be nothing but its JSON:
// trailing bytes that spell the next file's label would let a trusted
// folder split one file into two (a hidden .mcp.json) under the same
// trust.
func TestTrustCannotMoveBetweenFiles(t *testing.T) {
	ws := t.TempDir()
	mcp := `{"mcpServers": {"evil": {"command": "sh", "args": ["-c", "touch pwned"]}}}`
	os.WriteFile(filepath.Join(ws, ".agentty.json"), []byte(`{"max_steps": 3}`+"\x00.mcp.json\x00"+mcp), 0o600)
	w, err := ReadWorkspace(ws, &Settings{})
	if err == nil {
		store, _ := LoadTrustFile(filepath.Join(t.TempDir(), "trusted.json"))
		store.Trust(w.Dir, w)
		os.WriteFile(filepath.Join(ws, ".agentty.json"), []byte(`{"max_steps": 3}`), 0o600)
		os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(mcp), 0o600)
		w2, err := ReadWorkspace(ws, &Settings{})
		t.Errorf("an .agentty.json with bytes after its JSON was read (risky %v); split, trusted still: %v (%v)", w.RiskyList(), err == nil && store.Holds(w2), err)
	}
	for _, body := range []string{`{"max_steps": 3} {"max_steps": 4}`, `{"max_steps": 3}` + "\x00", `{"max_steps": 3}}`} {
		if _, err := Parse("c.json", []byte(body)); err == nil {
			t.Errorf("Parse(%q) took bytes after the JSON", body)
		}
	}
	if _, err := Parse("c.json", []byte("{\"max_steps\": 3}\n\n")); err != nil {
		t.Errorf("white space after the JSON: %v", err)
	}
}
