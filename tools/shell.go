package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/agentty/agentty/engine"
)

const maxShellOutput = 32 << 10

// RunShell runs a shell command in the workspace. It is off unless enabled
// (--allow-shell) and its policy is ask. The command runs in its own process
// group, which is killed when the call times out or the run is cancelled.
// The command gets a minimal environment (ChildEnv) and the variables named
// in pass: agentty's secrets, such as the API key, are not in it.
func (w *Workspace) RunShell(timeout time.Duration, pass ...string) engine.Tool {
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	return engine.Tool{
		Name:        "run_shell",
		Description: fmt.Sprintf("Run a command with sh -c in the workspace folder and return its output (stdout and stderr, capped) and exit status. It is stopped after %s.", timeout),
		Schema:      []byte(`{"type":"object","properties":{"command":{"type":"string","minLength":1}},"required":["command"],"additionalProperties":false}`),
		Policy:      engine.PolicyAsk,
		Changes:     true,
		Timeout:     timeout + 5*time.Second,
		Func: func(ctx context.Context, c *engine.Call) (string, error) {
			var in struct{ Command string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			cmd, lifeline, err := guardedShell(in.Command)
			if err != nil {
				return "", fmt.Errorf("start: %v", err)
			}
			defer lifeline.Close()
			cmd.Dir = w.dir
			cmd.Env = osChildEnv(pass, map[string]string{"PWD": w.dir})
			cmd.SysProcAttr = childAttr()
			// out is what the model reads: both streams, as they came (each
			// through its own pipe, so a line of one written at once with a
			// line of the other may come first); stdout and stderr are each
			// kept apart too, for the call's structured result.
			var out, stdout, stderr capped
			var mu sync.Mutex
			cmd.Stdout = &tee{mu: &mu, all: &out, one: &stdout}
			cmd.Stderr = &tee{mu: &mu, all: &out, one: &stderr}
			err = cmd.Start()
			cmd.ExtraFiles[0].Close() // the guard has its own
			if err != nil {
				return "", fmt.Errorf("start: %v", err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-ctx.Done():
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the whole group
				<-done
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return out.String(), fmt.Errorf("the command was stopped after %s; its output so far:\n%s", timeout, out.String())
				}
				return "", ctx.Err()
			}
			status, code := "exit status 0", 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				status, code = ee.ProcessState.String(), ee.ProcessState.ExitCode()
			} else if err != nil {
				return "", err
			}
			c.SetStructured(ShellResult{Exit: code, Stdout: stdout.b.String(), Stderr: stderr.b.String(), StdoutCut: stdout.dropped, StderrCut: stderr.dropped})
			return fmt.Sprintf("%s\n%s", status, out.String()), nil
		},
	}
}

// ShellResult is run_shell's structured result (engine.Call.SetStructured):
// its exit code (-1 when a signal ended it) and its two streams apart, each
// kept up to 32 KiB (StdoutCut and StderrCut count the bytes cut). The
// model reads the text result; a workflow's templates read these.
type ShellResult struct {
	Exit      int    `json:"exit"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	StdoutCut int    `json:"stdout_cut,omitempty"`
	StderrCut int    `json:"stderr_cut,omitempty"`
}

// tee writes one of a command's streams to its own buffer and to the
// buffer of both; mu orders the two streams' writes to the shared one.
type tee struct {
	mu       *sync.Mutex
	all, one *capped
}

func (t *tee) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.all.Write(p)
	return t.one.Write(p)
}

// capped is a buffer that keeps the first maxShellOutput bytes.
type capped struct {
	b       bytes.Buffer
	dropped int
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p) // all of it is taken, even what is dropped
	room := maxShellOutput - c.b.Len()
	if room < len(p) {
		c.dropped += len(p) - max(room, 0)
		p = p[:max(room, 0)]
	}
	c.b.Write(p)
	return n, nil
}

func (c *capped) String() string {
	if c.dropped > 0 {
		return c.b.String() + fmt.Sprintf("\n[%d more bytes of output cut]", c.dropped)
	}
	return c.b.String()
}
