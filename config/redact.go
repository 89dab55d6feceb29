package config

import (
	"cmp"
	"context"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/agentty/agentty/engine"
)

// Redactor takes the secrets agentty holds (the API key, credentials in the
// config) out of tool results before the engine sees them, so they reach
// neither the journal nor the next model request. It is the second line: the
// first is that child processes do not get the secrets (tools.ChildEnv).
type Redactor struct {
	r       *strings.Replacer
	longest int // the longest secret's length in bytes
}

// minSecret is the shortest value treated as a secret: shorter ones would
// redact ordinary words.
const minSecret = 8

// secretName reports whether a variable or header name holds a credential.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, s := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL", "COOKIE"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// NewRedactor finds the secrets agentty holds: the API key, and the
// credentials of cfg's MCP servers and shell environment.
func NewRedactor(getenv func(string) string, cfg *Settings) *Redactor {
	secrets := map[string]string{} // value → what it is
	add := func(what, v string) {
		if len(v) >= minSecret {
			secrets[v] = cmp.Or(secrets[v], what)
		}
		// "Bearer sk-…": the token alone is the secret too.
		if _, tok, ok := strings.Cut(v, " "); ok && len(tok) >= minSecret {
			secrets[tok] = cmp.Or(secrets[tok], what)
		}
	}
	add("OPENAI_API_KEY", getenv("OPENAI_API_KEY"))
	for name, s := range cfg.MCPServers {
		// As the server gets them: "Bearer ${GITHUB_TOKEN}" holds the
		// token, not the reference.
		s, _ = s.Expanded(getenv)
		for k, v := range s.Env {
			if secretName(k) {
				add(k, v)
			}
		}
		for k, v := range s.Headers {
			if secretName(k) {
				add("mcpServers."+name+" "+k, v)
			}
		}
		// A token in the server's URL (user:password@, ?api_key=…) or in an
		// argument (--api-key=…, --token …).
		urlSecrets(s.URL, func(k, v string) { add("mcpServers."+name+" "+k, v) })
		argSecrets(s.Args, func(_ int, k, _, v string) { add("mcpServers."+name+" "+k, v) })
	}
	for _, k := range cfg.ShellEnv {
		if secretName(k) {
			add(k, getenv(k))
		}
	}
	if len(secrets) == 0 {
		return &Redactor{}
	}
	// Longest first, so a secret that contains another is replaced whole.
	vals := slices.SortedFunc(maps.Keys(secrets), func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	var pairs []string
	for _, v := range vals {
		pairs = append(pairs, v, "[redacted "+secrets[v]+"]")
	}
	return &Redactor{r: strings.NewReplacer(pairs...), longest: len(vals[0])}
}

// urlSecrets calls found with each credential in the URL raw: its
// password ("url") and the values of query parameters with a credential's
// name ("url api_key").
func urlSecrets(raw string, found func(name, value string)) {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return
	}
	if p, ok := u.User.Password(); ok {
		found("url", p)
	}
	for _, k := range slices.Sorted(maps.Keys(u.Query())) {
		for _, v := range u.Query()[k] {
			if secretName(k) {
				found("url "+k, v)
			}
		}
	}
}

// argSecrets calls found with each argument of args that holds a
// credential, by its index i, the credential's name, the part before the
// value and the value: API_KEY=VALUE and --api-key=VALUE (prefix
// "--api-key="), or the argument after --token or --api-key (prefix "").
func argSecrets(args []string, found func(i int, name, prefix, value string)) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag := strings.TrimLeft(a, "-")
		if k, v, ok := strings.Cut(flag, "="); ok {
			if secretName(k) {
				found(i, k, a[:len(a)-len(v)], v)
			}
			continue
		}
		if strings.HasPrefix(a, "-") && secretName(flag) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			found(i+1, flag, "", args[i+1])
			i++
		}
	}
}

// EngineConfig sets cfg to redact what the model says, when there is a
// secret to take out.
func (r *Redactor) EngineConfig(cfg *engine.Config) {
	if r.r != nil {
		cfg.Redact, cfg.RedactHold = r.Redact, r.longest-1
	}
}

// Redact returns s without the secrets.
func (r *Redactor) Redact(s string) string {
	if r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// Tool wraps t so that its result and its error carry no secret.
func (r *Redactor) Tool(t engine.Tool) engine.Tool {
	if r.r == nil || t.Func == nil {
		return t
	}
	f := t.Func
	t.Func = func(ctx context.Context, c *engine.Call) (string, error) {
		out, err := f(ctx, c)
		out = r.Redact(out)
		if err != nil {
			if msg := err.Error(); r.Redact(msg) != msg {
				err = redactedError{msg: r.Redact(msg), err: err}
			}
		}
		return out, err
	}
	return t
}

// redactedError is an error whose text had a secret in it; errors.Is and As
// still see the original (IsRetryable, for one).
type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }
