package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentty/agentty/engine"
)

// What a server's entry says of its tools: which are offered, their
// policy, and the headers an HTTP server is dialled with.

// mcpPolicy is a server's tool's policy: allow for a tool the entry
// allows, the server's entry's, else allow for a tool the server marks
// read-only, else ask (as for the built-in tools that write).
func mcpPolicy(cfg MCPServer, t *mcp.Tool) engine.Policy {
	switch {
	case slices.Contains(cfg.Allow, t.Name):
		return engine.PolicyAllow
	case cfg.Policy != "":
		return cfg.Policy
	case t.Annotations != nil && t.Annotations.ReadOnlyHint:
		return engine.PolicyAllow
	}
	return engine.PolicyAsk
}

// offered reports whether the server's tool name is offered: in its
// entry's enabled tools (when it lists them), not in its disabled ones.
func (s *mcpServer) offered(name string) bool {
	return (len(s.cfg.EnabledTools) == 0 || slices.Contains(s.cfg.EnabledTools, name)) && !slices.Contains(s.cfg.DisabledTools, name)
}

// headers are the HTTP headers of the server: its entry's, and what its
// headers helper adds.
func (s *mcpServer) headers(ctx context.Context) (map[string]string, error) {
	if s.cfg.HeaderFunc == nil {
		return s.cfg.Headers, nil
	}
	more, err := s.cfg.HeaderFunc(ctx)
	if err != nil {
		return nil, fmt.Errorf("headers helper: %w", err)
	}
	out := maps.Clone(s.cfg.Headers)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, more)
	return out, nil
}

// headersHelperTimeout and headersHelperMax bound a headers helper's run
// and output.
const (
	headersHelperTimeout = 10 * time.Second
	headersHelperMax     = 64 << 10
)

// HeadersHelper returns what runs a headers helper: the shell command,
// in dir, with a minimal environment and env, whose output is a JSON
// object of header names and values (Claude Code's headersHelper).
func HeadersHelper(command, dir string, env map[string]string) func(context.Context) (map[string]string, error) {
	return func(ctx context.Context) (map[string]string, error) {
		ctx, cancel := context.WithTimeout(ctx, headersHelperTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", command)
		cmd.Dir, cmd.Env = dir, osChildEnv(nil, env)
		// What it starts dies with it at the deadline, and nothing that
		// holds its output keeps the wait going.
		cmd.SysProcAttr = childAttr()
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = time.Second
		var out, errb limitedBuffer
		out.max, errb.max, errb.drain = headersHelperMax, 4<<10, true
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if out.over {
			return nil, fmt.Errorf("%q printed more than %d bytes", command, headersHelperMax)
		}
		if err != nil {
			return nil, fmt.Errorf("%q: %v %s", command, err, strings.TrimSpace(errb.String()))
		}
		var h map[string]string
		if err := json.Unmarshal(out.Bytes(), &h); err != nil {
			return nil, fmt.Errorf("%q did not print a JSON object of strings: %v", command, err)
		}
		return h, nil
	}
}

// limitedBuffer keeps at most max bytes of what is written, and says when
// more came: then, unless drain is set, it refuses the rest, so the copy
// from the child's pipe stops and the child gets a broken pipe (with drain,
// the rest is read and dropped: a chatty stderr does not kill). It holds
// its buffer in a field, not embedded: an embedded bytes.Buffer lends it ReadFrom, which os/exec
// and io.Copy call in place of Write, and the cap would never be asked.
type limitedBuffer struct {
	b     bytes.Buffer
	max   int
	over  bool
	drain bool
}

var errOverCap = errors.New("over its cap")

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.b.Len(); len(p) > room {
		b.over = true
		b.b.Write(p[:max(room, 0)])
		if b.drain {
			return len(p), nil
		}
		return max(room, 0), errOverCap
	}
	return b.b.Write(p)
}

func (b *limitedBuffer) Bytes() []byte  { return b.b.Bytes() }
func (b *limitedBuffer) String() string { return b.b.String() }

// urlSecret is a credential in a URL's query (api_key=…, token=…): Go's
// errors show a URL whole but for its password.
var urlSecret = regexp.MustCompile(`(?i)([?&][a-z_-]*(?:key|token|secret|password|auth)[a-z_-]*=)[^&\s"']+`)

// secretsOut is err with the credentials of URLs in its text replaced; it
// still unwraps to err.
func secretsOut(err error) error {
	if msg := urlSecret.ReplaceAllString(err.Error(), "${1}[redacted]"); msg != err.Error() {
		return &redactedError{msg: msg, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
