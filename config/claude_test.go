package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
)

// TestClaudeRulesWithSpecifiersFallToAsk: a deny or ask rule agentty
// cannot express exactly (Read(.env), Bash(rm:*)) makes its tools ask, with
// a note that says so; a whole-tool deny stays deny; the workspace's own
// policy of a tool is kept; an allow rule with a specifier loosens
// nothing. The asks take effect in an untrusted folder too: they tighten.
func TestClaudeRulesWithSpecifiersFallToAsk(t *testing.T) {
	tests := []struct {
		name, agentty, claude string
		want                  map[string]engine.Policy // "" : no entry
		notes                 []string
	}{
		{"deny Read(.env)", "", `{"permissions": {"deny": ["Read(.env)"]}}`,
			map[string]engine.Policy{"read_file": "ask", "search_files": "ask"},
			[]string{"deny Read(.env): agentty cannot deny only part of read_file and search_files; they ask instead"}},
		{"ask Bash(rm:*)", "", `{"permissions": {"ask": ["Bash(rm:*)"]}}`,
			map[string]engine.Policy{"run_shell": "ask"},
			[]string{"ask Bash(rm:*): agentty cannot ask for only part of run_shell; run_shell asks instead"}},
		{"deny Edit(src/**)", "", `{"permissions": {"deny": ["Edit(src/**)"]}}`,
			map[string]engine.Policy{"edit_file": "ask", "write_file": "ask"},
			[]string{"they ask instead"}},
		{"a whole deny stays deny", "", `{"permissions": {"deny": ["Read", "Read(.env)"]}}`,
			map[string]engine.Policy{"read_file": "deny", "search_files": "deny"},
			[]string{"deny Read(.env): agentty cannot deny only part of read_file and search_files; read_file and search_files are denied whole"}},
		{"over a whole allow", "", `{"permissions": {"allow": ["Read"], "deny": ["Read(.env)"]}}`,
			map[string]engine.Policy{"read_file": "ask", "search_files": "ask"}, []string{"they ask instead"}},
		{"the workspace's own policy", `{"tools": {"read_file": {"policy": "deny"}}}`, `{"permissions": {"deny": ["Read(.env)"]}}`,
			map[string]engine.Policy{"read_file": "deny", "search_files": "ask"},
			[]string{"deny Read(.env): agentty cannot deny only part of read_file and search_files; search_files asks instead; .agentty.json sets the policy of read_file"}},
		{"allow with a specifier loosens nothing", "", `{"permissions": {"allow": ["Bash(npm test:*)", "Read(src/**)"]}}`,
			map[string]engine.Policy{"run_shell": "", "read_file": ""},
			[]string{"permissions allow Bash(npm test:*), allow Read(src/**) have no counterpart in agentty"}},
		{"an unknown tool's rule is a note", "", `{"permissions": {"deny": ["WebSearch(x)", "WebSearch"]}}`,
			map[string]engine.Policy{"WebSearch": ""},
			[]string{"permissions deny WebSearch(x), deny WebSearch have no counterpart in agentty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			if tt.agentty != "" {
				os.WriteFile(filepath.Join(ws, ".agentty.json"), []byte(tt.agentty), 0o600)
			}
			os.MkdirAll(filepath.Join(ws, ".claude"), 0o755)
			os.WriteFile(filepath.Join(ws, ".claude", "settings.json"), []byte(tt.claude), 0o600)
			w, err := ReadWorkspace(ws, &Settings{})
			if err != nil {
				t.Fatal(err)
			}
			safe := w.Safe()
			for tool, want := range tt.want {
				if got := w.Cfg.Tools[tool].Policy; got != want {
					t.Errorf("trusted: %s = %q, want %q (tools %v)", tool, got, want, w.Cfg.Tools)
				}
				if want == engine.PolicyAllow {
					want = ""
				}
				if got := safe.Tools[tool].Policy; got != want {
					t.Errorf("untrusted: %s = %q, want %q", tool, got, want)
				}
			}
			notes := strings.Join(w.Notes, "\n")
			for _, n := range tt.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes %q lack %q", notes, n)
				}
			}
		})
	}
}
