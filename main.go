// Command agentty is a terminal console for running LLM agents, and the
// headless runner of the same engine:
//
//	agentty                   console, new session
//	agentty run [flags] TASK  one run, prints the answer; --json prints events
//
// main only wires: flags → model → tools → engine → output. Only main calls
// os.Exit.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/engine/script"
	"github.com/agentty/agentty/tools"
)

// Exit codes of agentty run.
const (
	exitAnswered  = 0
	exitError     = 1
	exitUsage     = 2
	exitStepLimit = 3
	exitCancelled = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// cli runs agentty with args and returns the exit code.
func cli(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 {
		switch args[0] {
		case "run":
			return runCmd(ctx, args[1:], stdout, stderr, getenv)
		case "help", "-h", "-help", "--help":
			fmt.Fprint(stdout, usage)
			return 0
		}
	}
	return consoleCmd(ctx, args, stdin, stdout, stderr, getenv)
}

const usage = `agentty: a terminal console for running LLM agents

  agentty [flags]              the console, new session
  agentty run [flags] TASK     headless: one run, prints the answer (--json: every event)

flags:
  --model NAME        offline, script:FILE, or an OpenAI-compatible model name
  --max-steps N       decisions per run before stopping with step_limit (default 25)
  --json              (run) print every event as one JSON line
exit codes of run: 0 answered, 1 error, 2 bad usage, 3 step limit, 130 cancelled
`

// options are the flags both the console and run take.
type options struct {
	model    string
	maxSteps int
	json     bool
}

func (o *options) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&o.model, "model", "", "model: offline, script:FILE, or an OpenAI-compatible model name")
	fs.IntVar(&o.maxSteps, "max-steps", engine.DefaultMaxSteps, "decisions per run before stopping")
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	return fs
}

// setup is what a run needs: a model and its name, and the engine.
type setup struct {
	modelName string
	engine    *engine.Engine
}

func build(o options, getenv func(string) string) (*setup, error) {
	name := o.model
	if name == "" {
		name = offline.Name
	}
	var m engine.Model
	switch {
	case name == offline.Name:
		m = offline.Model{}
	case strings.HasPrefix(name, "script:"):
		sm, err := script.Load(strings.TrimPrefix(name, "script:"))
		if err != nil {
			return nil, err
		}
		m = sm
	default:
		return nil, fmt.Errorf("model %q: only the offline and script: models are available in this build", name)
	}
	reg, err := engine.NewRegistry(tools.Builtins()...)
	if err != nil {
		return nil, err
	}
	if o.maxSteps <= 0 {
		return nil, errUsage{fmt.Errorf("--max-steps must be at least 1, not %d", o.maxSteps)}
	}
	e := engine.New(engine.Config{
		Model:     m,
		ModelName: name,
		Tools:     reg,
		MaxSteps:  o.maxSteps,
		System:    systemPrompt,
	})
	return &setup{modelName: name, engine: e}, nil
}

const systemPrompt = "You are agentty, a careful agent working in a terminal. Use the tools when they help; " +
	"the memory facts given to you are things the user asked you to remember. Answer concisely in Markdown."

type errUsage struct{ error }

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("run", stderr)
	var o options
	o.register(fs, getenv)
	fs.BoolVar(&o.json, "json", false, "print every event as one JSON line")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	task := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if task == "" {
		fmt.Fprintln(stderr, "agentty run: no task given (usage: agentty run [flags] TASK)")
		return exitUsage
	}
	st, err := build(o, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "agentty run:", err)
		if errors.As(err, new(errUsage)) {
			return exitUsage
		}
		return exitError
	}
	s := engine.NewSession(newID())
	var sink engine.Sink
	if o.json {
		enc := json.NewEncoder(stdout)
		sink = engine.SinkFunc(func(ev engine.Event) error { return enc.Encode(ev) })
	}
	res := st.engine.Run(ctx, s, task, sink)
	switch res.StopReason {
	case engine.StopAnswered:
		if !o.json {
			fmt.Fprintln(stdout, res.Answer)
		}
		return exitAnswered
	case engine.StopStepLimit:
		fmt.Fprintf(stderr, "agentty run: stopped: step limit of %d reached without an answer\n", o.maxSteps)
		return exitStepLimit
	case engine.StopCancelled:
		fmt.Fprintln(stderr, "agentty run: cancelled")
		return exitCancelled
	}
	fmt.Fprintln(stderr, "agentty run:", res.Err)
	return exitError
}

// newID returns a short id that sorts by creation time: milliseconds since
// the epoch in base 36, then random letters.
func newID() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	ms := uint64(time.Now().UnixMilli())
	var b [13]byte
	for i := 8; i >= 0; i-- {
		b[i] = digits[ms%36]
		ms /= 36
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	for i := range r {
		b[9+i] = digits[int(r[i])%36]
	}
	return string(b[:])
}
