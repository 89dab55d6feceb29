package tools

import (
	"maps"
	"os"
	"slices"
	"strings"
)

// baseEnv names the variables a child process (run_shell, an MCP stdio
// server) gets from agentty's own environment: what a shell and the usual
// runtimes (node, python, uvx) need to start, and nothing that is a secret.
var baseEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ",
	"TMPDIR", "TEMP", "TMP", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
	"COLORTERM", "NO_COLOR",
}

// ChildEnv is the environment of a child process: the variables of baseEnv
// and the locale's LC_* that getenv has, the variables named in pass (the
// person's own allow-list; a name that is not set is left out), and then
// set, which wins. Nothing else of agentty's environment reaches the child,
// so an API key does not, unless the person names it.
func ChildEnv(getenv func(string) string, environ []string, pass []string, set map[string]string) []string {
	var env []string
	seen := map[string]bool{}
	add := func(k string) {
		if seen[k] {
			return
		}
		seen[k] = true
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range baseEnv {
		add(k)
	}
	for _, kv := range environ {
		if k, _, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "LC_") {
			add(k)
		}
	}
	for _, k := range pass {
		add(k)
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		env = append(env, k+"="+set[k])
	}
	return env
}

// osChildEnv is ChildEnv over this process's environment.
func osChildEnv(pass []string, set map[string]string) []string {
	return ChildEnv(os.Getenv, os.Environ(), pass, set)
}
