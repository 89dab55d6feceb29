package hooks

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/agentty/agentty/engine"
)

// Runner runs the hooks of a setup; it is the engine's engine.Hooks.
type Runner struct {
	defs []Def
	env  Env
}

// Env is what the hooks run in.
type Env struct {
	// Workspace is the folder they run in (absolute): cwd and
	// CLAUDE_PROJECT_DIR.
	Workspace string
	// Environ is the environment every hook gets (tools.ChildEnv: no
	// secret the person did not name).
	Environ []string
	// Transcript is a session's journal file, given as transcript_path
	// (nil: none).
	Transcript func(session string) string
	// Redact, when set, takes secrets out of what a hook said and of its
	// command before they are kept.
	Redact func(string) string
	// MaxOutput bounds what is kept of each of a hook's stdout and stderr
	// (default 64 KiB): the rest is read and dropped.
	MaxOutput int
}

// New is a Runner of defs; those with Skip set are kept for listing only.
func New(defs []Def, env Env) *Runner {
	env.MaxOutput = cmp.Or(env.MaxOutput, 64<<10)
	return &Runner{defs: defs, env: env}
}

// Defs are the hooks, in the order they run, with those that do not.
func (r *Runner) Defs() []Def { return r.defs }

// Runs reports whether any hook runs: a Runner with none is left out of
// the engine.
func (r *Runner) Runs() bool {
	for i := range r.defs {
		if r.defs[i].Skip == "" {
			return true
		}
	}
	return false
}

// RunHooks runs, at once, the hooks of in's point that match it (each
// command once), and returns what each did, in the order configured.
func (r *Runner) RunHooks(ctx context.Context, in *engine.HookInput) []engine.HookRun {
	names := r.subjects(in)
	var todo []*Def
	seen := map[string]bool{}
	for i := range r.defs {
		d := &r.defs[i]
		if d.Matches(in.Event, names...) && !seen[d.Command+"\x00"+d.Root] {
			seen[d.Command+"\x00"+d.Root] = true
			todo = append(todo, d)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	stdin := r.input(in)
	out := make([]engine.HookRun, len(todo))
	var wg sync.WaitGroup
	for i, d := range todo {
		wg.Go(func() { out[i] = r.run(ctx, d, in, stdin) })
	}
	wg.Wait()
	return out
}

// subjects are what in's matchers are matched against.
func (r *Runner) subjects(in *engine.HookInput) []string {
	switch {
	case in.Call != nil:
		return []string{ClaudeName(in.Call.Name), in.Call.Name}
	case in.Event == engine.HookSessionStart || in.Event == engine.HookPreCompact || in.Event == engine.HookNotification:
		return []string{in.Source}
	}
	return nil
}

// input is the JSON a hook reads on stdin, as Claude Code writes it.
func (r *Runner) input(in *engine.HookInput) []byte {
	m := map[string]any{
		"session_id": in.Session, "cwd": r.env.Workspace, "permission_mode": "default",
		"hook_event_name": in.Event,
	}
	if r.env.Transcript != nil {
		m["transcript_path"] = r.env.Transcript(in.Session)
	}
	if c := in.Call; c != nil {
		ti := claudeInput(c.Name, c.Args, r.env.Workspace)
		m["tool_name"], m["tool_input"], m["tool_use_id"] = ClaudeName(c.Name), ti, c.ID
		if in.Event != engine.HookPreToolUse {
			m["tool_response"] = toolResponse(c.Name, ti, in.Result, in.Failed, in.Structured)
		}
		if in.Failed {
			m["error"] = in.Result
		}
	}
	switch in.Event {
	case engine.HookUserPromptSubmit:
		m["prompt"] = in.Prompt
	case engine.HookStop, engine.HookSubagentStop:
		m["stop_hook_active"], m["last_assistant_message"] = in.StopHookActive, in.Message
	case engine.HookSessionStart:
		m["source"] = in.Source
	case engine.HookSessionEnd:
		m["reason"] = in.Source
	case engine.HookPreCompact:
		m["trigger"], m["custom_instructions"] = in.Source, ""
	case engine.HookNotification:
		m["message"], m["notification_type"] = in.Message, in.Source
	}
	b, _ := json.Marshal(m)
	return b
}

// run runs one hook and reads what it said.
func (r *Runner) run(ctx context.Context, d *Def, in *engine.HookInput, stdin []byte) engine.HookRun {
	hr := engine.HookRun{Event: in.Event, Command: d.Command, Source: d.Where(r.env.Workspace), Matcher: d.Matcher}
	if in.Call != nil {
		hr.Call, hr.Tool = in.Call.ID, in.Call.Name
	}
	res := r.exec(ctx, d, in, stdin)
	hr.DurationMS, hr.Exit, hr.TimedOut = res.took.Milliseconds(), res.exit, res.timedOut
	stdout, stderr := strings.TrimSpace(res.stdout.String()), strings.TrimSpace(res.stderr.String())
	switch {
	case res.err != nil:
		hr.Error, hr.Output = res.err.Error(), stderr
	case res.exit == 0:
		read(&hr, in, stdout, r.env.Workspace)
	case res.exit == 2:
		blocked(&hr, stderr)
	default:
		hr.Error, hr.Output = fmt.Sprintf("exited with %d (not 0 or 2): a warning, the run goes on", res.exit), stderr
	}
	if red := r.env.Redact; red != nil {
		hr.Command, hr.Output, hr.Reason, hr.Context = red(hr.Command), red(hr.Output), red(hr.Reason), red(hr.Context)
		hr.Error, hr.Stop = red(hr.Error), red(hr.Stop)
	}
	return hr
}

// blocked is what exit 2 says: the event's action is stopped, stderr says
// why (to the model where the event has one to tell).
func blocked(hr *engine.HookRun, stderr string) {
	switch hr.Event {
	case engine.HookPreToolUse:
		hr.Decision, hr.Reason = engine.HookDeny, stderr
	case engine.HookPostToolUse, engine.HookPostToolUseFailure, engine.HookUserPromptSubmit, engine.HookStop, engine.HookSubagentStop:
		hr.Decision, hr.Reason = engine.HookBlock, stderr
	default: // nothing to block: shown to the person
		hr.Output = stderr
	}
}

// output is a hook's JSON on stdout (Claude Code's fields).
type output struct {
	Continue      *bool  `json:"continue"`
	StopReason    string `json:"stopReason"`
	SystemMessage string `json:"systemMessage"`
	Decision      string `json:"decision"`
	Reason        string `json:"reason"`
	Specific      struct {
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// read is what a hook that exited 0 said: JSON when its output is an
// object, else text (context where the event adds it, else shown).
func read(hr *engine.HookRun, in *engine.HookInput, stdout, ws string) {
	var o output
	if !strings.HasPrefix(stdout, "{") || json.Unmarshal([]byte(stdout), &o) != nil {
		if strings.HasPrefix(stdout, "{") {
			hr.Error = "its output begins with { but is not JSON: taken as text"
		}
		if in.Event == engine.HookUserPromptSubmit || in.Event == engine.HookSessionStart {
			hr.Context = stdout
		} else {
			hr.Output = stdout
		}
		return
	}
	if o.Continue != nil && !*o.Continue {
		hr.Stop = cmp.Or(o.StopReason, "a hook said not to go on")
	}
	hr.Output, hr.Context = o.SystemMessage, o.Specific.AdditionalContext
	switch d := o.Specific.PermissionDecision; {
	case in.Event == engine.HookPreToolUse && (d == engine.HookAllow || d == engine.HookDeny || d == engine.HookAsk):
		hr.Decision, hr.Reason = d, o.Specific.PermissionDecisionReason
	case o.Decision == "block":
		hr.Decision, hr.Reason = engine.HookBlock, o.Reason
		if in.Event == engine.HookPreToolUse {
			hr.Decision = engine.HookDeny
		}
	case o.Decision == "approve" && in.Event == engine.HookPreToolUse:
		hr.Decision, hr.Reason = engine.HookAllow, o.Reason
	}
	if in.Event == engine.HookPreToolUse && len(o.Specific.UpdatedInput) > 0 && string(o.Specific.UpdatedInput) != "null" && in.Call != nil {
		hr.Input = agenttyInput(in.Call.Name, o.Specific.UpdatedInput, ws)
	}
}

// result is how a hook's process ended.
type result struct {
	stdout, stderr capped
	exit           int
	took           time.Duration
	timedOut       bool
	err            error
}

// exec runs d's command with bash (sh where there is none) in the
// workspace, stdin given, its output bounded, in a process group of its
// own that its timeout kills whole.
func (r *Runner) exec(ctx context.Context, d *Def, in *engine.HookInput, stdin []byte) *result {
	res := &result{}
	res.stdout.max, res.stderr.max = r.env.MaxOutput, r.env.MaxOutput
	timeout := cmp.Or(d.Timeout, DefaultTimeout)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, shell(), "-c", d.Command)
	cmd.Dir, cmd.Env = r.env.Workspace, r.environ(d, in)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stdin), &res.stdout, &res.stderr
	groupOf(cmd)
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	res.took = time.Since(start)
	var ee *exec.ExitError
	switch {
	case cctx.Err() != nil && ctx.Err() == nil:
		res.timedOut, res.exit = true, -1
		res.err = fmt.Errorf("timed out after %s and was killed, with what it started (timeout in its settings sets it)", timeout)
	case ctx.Err() != nil:
		res.exit, res.err = -1, fmt.Errorf("stopped: %v", ctx.Err())
	case errors.As(err, &ee):
		res.exit = ee.ExitCode()
	case err != nil:
		res.exit, res.err = -1, fmt.Errorf("could not run: %v", err)
	}
	return res
}

// environ is a hook's environment: the setup's, and Claude Code's
// variables.
func (r *Runner) environ(d *Def, in *engine.HookInput) []string {
	env := append([]string(nil), r.env.Environ...)
	env = append(env, "CLAUDE_PROJECT_DIR="+r.env.Workspace, "AGENTTY_HOOK_EVENT="+string(in.Event))
	if d.Root != "" {
		env = append(env, "CLAUDE_PLUGIN_ROOT="+d.Root)
	}
	if in.Call != nil { // older hooks read these
		env = append(env, "CLAUDE_TOOL_NAME="+ClaudeName(in.Call.Name))
		var a struct {
			FilePath string `json:"file_path"`
		}
		if json.Unmarshal(claudeInput(in.Call.Name, in.Call.Args, r.env.Workspace), &a) == nil && a.FilePath != "" {
			env = append(env, "CLAUDE_TOOL_FILE_PATH="+a.FilePath)
		}
	}
	return env
}

// shell is bash, as Claude Code runs hooks with, or sh.
func shell() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
}

// capped keeps the first max bytes written to it and drops the rest,
// never blocking the writer. (Not an embedded bytes.Buffer: io.Copy would
// use its ReadFrom, which reads all.)
type capped struct {
	buf bytes.Buffer
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room < len(p) {
		c.cut = true
	}
	if room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// String is what was kept, marked when cut.
func (c *capped) String() string {
	if c.cut {
		return c.buf.String() + fmt.Sprintf("\n[cut at %d bytes]", c.max)
	}
	return c.buf.String()
}
