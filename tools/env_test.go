package tools

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestChildEnv(t *testing.T) {
	vars := map[string]string{
		"PATH": "/usr/bin", "HOME": "/home/ada", "LC_ALL": "C.UTF-8",
		"OPENAI_API_KEY": "sk-secret", "AWS_SECRET_ACCESS_KEY": "aws-secret", "GITHUB_TOKEN": "gh-secret",
	}
	var environ []string
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	getenv := func(k string) string { return vars[k] }
	tests := []struct {
		name string
		pass []string
		set  map[string]string
		want []string
	}{
		{"minimal", nil, nil, []string{"HOME=/home/ada", "LC_ALL=C.UTF-8", "PATH=/usr/bin"}},
		{"passed by name", []string{"GITHUB_TOKEN", "NOT_SET"}, nil, []string{"GITHUB_TOKEN=gh-secret", "HOME=/home/ada", "LC_ALL=C.UTF-8", "PATH=/usr/bin"}},
		{"set wins", nil, map[string]string{"PATH": "/opt/bin", "OPENAI_API_KEY": "sk-for-this-server"},
			[]string{"HOME=/home/ada", "LC_ALL=C.UTF-8", "OPENAI_API_KEY=sk-for-this-server", "PATH=/opt/bin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := ChildEnv(getenv, environ, tt.pass, tt.set)
			// Later entries win in exec; reduce to the effective set.
			eff := map[string]string{}
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				eff[k] = v
			}
			var got []string
			for k, v := range eff {
				got = append(got, k+"="+v)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ChildEnv(pass %v, set %v) = %v, want %v", tt.pass, tt.set, got, tt.want)
			}
		})
	}
}

// The key agentty holds does not reach a shell command, unless the person
// passes it by name.
func TestRunShellGetsNoSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-agentty-test-key-do-not-leak")
	t.Setenv("AGENTTY_TEST_PASSED", "passed-through")
	w, _ := tree(t)
	out, err := call(t, w.RunShell(10*time.Second), `{"command":"env"}`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "sk-agentty-test-key") || strings.Contains(out, "passed-through") {
		t.Errorf("env through run_shell shows agentty's environment:\n%s", out)
	}
	if !strings.Contains(out, "PATH=") || !strings.Contains(out, "PWD="+w.Dir()) {
		t.Errorf("env through run_shell lacks PATH or PWD:\n%s", out)
	}
	out, err = call(t, w.RunShell(10*time.Second, "AGENTTY_TEST_PASSED"), `{"command":"env"}`)
	if err != nil || !strings.Contains(out, "AGENTTY_TEST_PASSED=passed-through") || strings.Contains(out, "sk-agentty-test-key") {
		t.Errorf("a variable passed by name: %q, %v", out, err)
	}
}

// An MCP stdio server sees the key only when its entry passes it.
func TestMCPServerEnv(t *testing.T) {
	server := everything(t)
	t.Setenv("OPENAI_API_KEY", "sk-agentty-test-key-do-not-leak")
	m := StartMCP(context.Background(), map[string]MCPServer{
		"plain":  {Command: "node", Args: []string{server, "stdio"}},
		"passed": {Command: "node", Args: []string{server, "stdio"}, Env: map[string]string{"OPENAI_API_KEY": "sk-given-to-this-server"}},
	}, MCPConfig{Timeout: 20 * time.Second})
	defer m.Close()
	for _, tt := range []struct{ server, want, notWant string }{
		{"plain", `"PATH"`, "sk-"},
		{"passed", "sk-given-to-this-server", "sk-agentty-test-key"},
	} {
		tool, ok := toolNamed(m.Tools(), tt.server+"__get-env")
		if !ok {
			t.Fatalf("no %s__get-env among the tools (status %+v)", tt.server, m.Status())
		}
		out, err := call(t, tool, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, tt.want) || strings.Contains(out, tt.notWant) {
			t.Errorf("%s: get-env = %s\nwant %q in it and not %q", tt.server, out, tt.want, tt.notWant)
		}
	}
}
