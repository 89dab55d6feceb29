package config

import (
	"testing"
)

func TestRedactorFindsTheSecretsItHolds(t *testing.T) {
	cfg := &Settings{
		MCPServers: map[string]MCPServer{
			"web": {URL: "https://bob:url-password-1234@example.com/mcp?api_key=query-key-5678&page=2"},
			"cli": {Command: "srv", Args: []string{"--api-key=arg-key-91011", "--verbose=long-enough-value"}, Env: map[string]string{"GITHUB_TOKEN": "ghp_token_121314", "HOME_DIR": "/home/not-a-secret"}},
			"hdr": {URL: "https://example.com", Headers: map[string]string{"Authorization": "Bearer header-token-151617"}},
		},
		ShellEnv: []string{"MY_SECRET", "GOPATH"},
	}
	env := map[string]string{"OPENAI_API_KEY": "sk-openai-181920", "MY_SECRET": "shell-secret-212223", "GOPATH": "/go/path/not-secret"}
	r := NewRedactor(func(k string) string { return env[k] }, cfg)
	for _, tt := range []struct{ in, want string }{
		{"key sk-openai-181920 end", "key [redacted OPENAI_API_KEY] end"},
		{"p url-password-1234", "p [redacted mcpServers.web url]"},
		{"q query-key-5678", "q [redacted mcpServers.web url api_key]"},
		{"a arg-key-91011", "a [redacted mcpServers.cli api-key]"},
		{"e ghp_token_121314", "e [redacted GITHUB_TOKEN]"},
		{"h header-token-151617", "h [redacted mcpServers.hdr Authorization]"},
		{"s shell-secret-212223", "s [redacted MY_SECRET]"},
		{"not secrets: /home/not-a-secret /go/path/not-secret long-enough-value page=2", "not secrets: /home/not-a-secret /go/path/not-secret long-enough-value page=2"},
	} {
		if got := r.Redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRedactorFindsReferencedAndSpacedSecrets: a server's credentials as
// the server gets them: a ${VAR} in a header or env is the variable's
// value, and --token VALUE holds VALUE as --token=VALUE does.
func TestRedactorFindsReferencedAndSpacedSecrets(t *testing.T) {
	cfg := &Settings{MCPServers: map[string]MCPServer{
		"gh":  {URL: "https://example.com", Headers: map[string]string{"Authorization": "Bearer ${GH_PAT}"}},
		"cli": {Command: "srv", Args: []string{"--token", "spaced-token-4242", "--port", "8080"}, Env: map[string]string{"API_KEY": "${SRV_KEY}"}},
	}}
	env := map[string]string{"GH_PAT": "ghp_referenced_777", "SRV_KEY": "env-referenced-888"}
	r := NewRedactor(func(k string) string { return env[k] }, cfg)
	for _, tt := range []struct{ in, want string }{
		{"t ghp_referenced_777", "t [redacted mcpServers.gh Authorization]"},
		{"k env-referenced-888", "k [redacted API_KEY]"},
		{"s spaced-token-4242", "s [redacted mcpServers.cli token]"},
		{"port 8080 --port", "port 8080 --port"},
	} {
		if got := r.Redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
