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
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/engine/openai"
	"github.com/agentty/agentty/engine/script"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/tools"
	"github.com/agentty/agentty/ui"
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
	stdout, stderr = termSafe(stdout), termSafe(stderr)
	if len(args) > 0 {
		switch args[0] {
		case "run":
			return runCmd(ctx, args[1:], stdin, stdout, stderr, getenv)
		case "sessions":
			return sessionsCmd(args[1:], stdout, stderr, getenv)
		case "tools":
			return toolsCmd(ctx, args[1:], stdout, stderr, getenv)
		case "trust":
			return trustCmd(args[1:], stdout, stderr, getenv)
		case "help", "-h", "-help", "--help":
			fmt.Fprint(stdout, usage)
			return 0
		}
	}
	return consoleCmd(ctx, args, stdin, stdout, stderr, getenv)
}

const usage = `agentty: a terminal console for running LLM agents

  agentty [flags]                    the console, new session
  agentty --resume [ID]              the console, resuming a session
  agentty run [flags] TASK           headless: one run, prints the answer (TASK - reads stdin)
  agentty run --session ID TASK      continue a session with a new task
  agentty run --session ID --continue   finish an interrupted run
  agentty sessions ls [--json]       list sessions, newest first
  agentty sessions show ID [--json]  a session's timeline of steps
  agentty sessions rm ID | rename ID TITLE | export ID [--format md|json] | fork ID --at STEP
  agentty tools [--json]             every tool, with its source, policy and schema
  agentty trust [DIR]                trust a folder's .agentty.json (default: the workspace)
  agentty trust --list | --revoke DIR  the trusted folders; stop trusting one

flags:
  --model NAME        offline, script:FILE, or an OpenAI-compatible model name (default:
                      $AGENTTY_MODEL or gpt-4o-mini when OPENAI_API_KEY or OPENAI_BASE_URL
                      is set, else offline)
  --base-url URL      an OpenAI-compatible server, e.g. http://localhost:11434/v1 (Ollama)
  --temperature T     sampling temperature (default: the server's)
  --timeout D         time limit of one model request (default 10m)
  --max-steps N       decisions per run before stopping with step_limit (default 25)
  --context-budget N  tokens of history, memory and tools one request may hold (default
                      64000; lower it for small local models)
  --workspace DIR     the folder the file tools work in (default: the current folder)
  --allow-shell       offer run_shell (it asks before each command)
  --step              (console) pause before every decision and tool call
  --data-dir DIR      where sessions live (default $AGENTTY_HOME, $XDG_DATA_HOME/agentty
                      or ~/.local/share/agentty)
  --json              (run) print every event as one JSON line
  --yes               (run) approve tools that ask, and re-running interrupted tool calls
  --trust-workspace   let the workspace's .agentty.json use its risky settings this once
config: $AGENTTY_CONFIG, else $XDG_CONFIG_HOME/agentty/config.json, else
~/.config/agentty/config.json, with the workspace's .agentty.json over it; until you
trust the folder (agentty trust), its settings that can run programs, reach hosts or
loosen approvals are ignored
exit codes of run: 0 answered, 1 error, 2 bad usage, 3 step limit, 130 cancelled
`

// options are the flags both the console and run take.
type options struct {
	model       string
	baseURL     string
	temperature float64
	timeout     time.Duration
	maxSteps    int
	dataDir     string
	workspace   string
	allowShell  bool
	budget      int
	maxStepsSet bool // --max-steps was given: it wins over the config
	session     string
	json        bool
	cont        bool
	yes         bool
	// trustWorkspace (--trust-workspace) lets the workspace's risky
	// config keys take effect this once.
	trustWorkspace bool
	// askTrust, when set, asks the person about a workspace config with
	// risky keys and no trust (the console); nil never asks (run, tools).
	askTrust func(w *wsConfig, changed []string) (trustChoice, error)
}

func (o *options) register(fs *flag.FlagSet) {
	fs.StringVar(&o.model, "model", "", "model: offline, script:FILE, or an OpenAI-compatible model name")
	fs.StringVar(&o.baseURL, "base-url", "", "base URL of an OpenAI-compatible API (default $OPENAI_BASE_URL)")
	fs.Float64Var(&o.temperature, "temperature", -1, "sampling temperature (default: the server's)")
	fs.DurationVar(&o.timeout, "timeout", openai.DefaultTimeout, "time limit of one model request")
	fs.IntVar(&o.maxSteps, "max-steps", engine.DefaultMaxSteps, "decisions per run before stopping")
	fs.StringVar(&o.dataDir, "data-dir", "", "where sessions live")
	fs.StringVar(&o.workspace, "workspace", "", "the folder the file tools work in (default: the current folder)")
	fs.BoolVar(&o.allowShell, "allow-shell", false, "offer the run_shell tool (it asks before each command)")
	fs.IntVar(&o.budget, "context-budget", 0, "tokens of history, memory and tools a request may hold (default 64000)")
	fs.BoolVar(&o.trustWorkspace, "trust-workspace", false, "let the workspace's .agentty.json run programs, reach hosts and loosen approvals, this once")
}

// store opens the session store named by --data-dir or the environment.
func (o *options) store(getenv func(string) string) (*sessions.Store, error) {
	home := o.dataDir
	if home == "" {
		var err error
		if home, err = sessions.Home(getenv); err != nil {
			return nil, err
		}
	}
	return sessions.Open(home)
}

// flagSet reports whether the flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parseFailed is the exit code for a flag error: 0 for -h, else bad usage.
func parseFailed(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return exitUsage
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	return fs
}

// setup is what a run needs: the model, the tools and the engine. Close
// ends the MCP servers and releases the workspace.
type setup struct {
	modelName string
	engine    *engine.Engine
	registry  *engine.Registry
	rows      []toolRow
	mcp       *tools.MCP
	ws        *tools.Workspace
	// notices are problems to tell the person about, such as an MCP
	// server that did not start.
	notices []string
}

func (s *setup) Close() {
	if s.mcp != nil {
		s.mcp.Close()
	}
	if s.ws != nil {
		s.ws.Close()
	}
}

// model picks the model: --model, else the config's, else an
// OpenAI-compatible one when a key or base URL is set, else offline.
func pickModel(o options, cfg *config, getenv func(string) string) (engine.Model, string, error) {
	name := cmp.Or(o.model, cfg.Model)
	key := getenv("OPENAI_API_KEY")
	base := cmp.Or(o.baseURL, getenv("OPENAI_BASE_URL"), cfg.BaseURL)
	if name == "" {
		name = offline.Name
		if key != "" || base != "" {
			name = cmp.Or(getenv("AGENTTY_MODEL"), "gpt-4o-mini")
		}
	}
	switch {
	case name == offline.Name:
		return offline.Model{}, name, nil
	case strings.HasPrefix(name, "script:"):
		sm, err := script.Load(strings.TrimPrefix(name, "script:"))
		return sm, name, err
	case key == "" && base == "":
		return nil, "", fmt.Errorf("model %q needs OPENAI_API_KEY, or --base-url (or OPENAI_BASE_URL) for a local server such as Ollama; --model offline works with neither", name)
	}
	mc := openai.Config{Model: name, BaseURL: base, APIKey: key, Timeout: o.timeout, Temperature: cfg.Temperature}
	if o.temperature >= 0 {
		mc.Temperature = &o.temperature
	}
	return openai.New(mc), name, nil
}

func build(ctx context.Context, o options, gate engine.Gate, getenv func(string) string) (*setup, error) {
	if o.maxSteps <= 0 {
		return nil, errUsage{fmt.Errorf("--max-steps must be at least 1, not %d", o.maxSteps)}
	}
	if o.budget < 0 {
		return nil, errUsage{fmt.Errorf("--context-budget must be positive, not %d", o.budget)}
	}
	wsDir := cmp.Or(o.workspace, ".")
	cfg, ws, err := loadConfig(getenv, wsDir)
	if err != nil {
		return nil, err
	}
	var notices []string
	if ws != nil {
		trusted, notice, err := decideTrust(o, ws, getenv)
		if err != nil {
			return nil, err
		}
		if trusted {
			cfg.merge(ws.cfg)
		} else {
			cfg.merge(ws.safe())
			notices = append(notices, notice)
		}
	}
	maxSteps := o.maxSteps
	if !o.maxStepsSet && cfg.MaxSteps > 0 {
		maxSteps = cfg.MaxSteps
	}
	m, name, err := pickModel(o, cfg, getenv)
	if err != nil {
		return nil, err
	}
	st := &setup{modelName: name, notices: notices}
	if st.ws, err = tools.OpenWorkspace(wsDir); err != nil {
		return nil, err
	}
	var base []engine.Tool
	sources := map[string]string{}
	add := func(source string, ts ...engine.Tool) {
		for _, t := range ts {
			base = append(base, t)
			sources[t.Name] = source
		}
	}
	add("builtin", tools.Builtins()...)
	add("workspace", st.ws.ReadFile(), st.ws.ListDir(), st.ws.SearchFiles(), st.ws.WriteFile(), st.ws.EditFile())
	if o.allowShell || (cfg.AllowShell != nil && *cfg.AllowShell) {
		add("shell", st.ws.RunShell(0, cfg.ShellEnv...))
	}
	if len(cfg.HTTP.AllowHosts) > 0 {
		add("http", tools.HTTPGet(cfg.HTTP.AllowHosts, nil))
	}
	st.registry, _ = engine.NewRegistry()
	redact := newRedactor(getenv, cfg)
	// all is every tool with the config's policies and timeouts, its
	// results redacted; MCP tools are read again when a server's list
	// changes.
	all := func() []engine.Tool {
		ts := slices.Clone(base)
		if st.mcp != nil {
			ts = append(ts, st.mcp.Tools()...)
		}
		for i, t := range ts {
			if tc, ok := cfg.Tools[t.Name]; ok {
				if tc.Policy != "" {
					ts[i].Policy = tc.Policy
				}
				if tc.timeout > 0 {
					ts[i].Timeout = tc.timeout
				}
			}
			ts[i] = redact.tool(ts[i])
		}
		return ts
	}
	if len(cfg.MCPServers) > 0 {
		st.mcp = tools.StartMCP(ctx, cfg.MCPServers, 20*time.Second, func() { st.registry.Replace(all()...) })
		for _, s := range st.mcp.Status() {
			if !s.OK {
				st.notices = append(st.notices, s.Error+"; its tools are unavailable")
			}
		}
	}
	ts := all()
	if err := st.registry.Replace(ts...); err != nil {
		st.Close()
		return nil, err
	}
	for _, t := range st.registry.Tools() {
		source, ok := sources[t.Name]
		if !ok {
			server, _, _ := strings.Cut(t.Name, "__")
			source = "mcp:" + server
		}
		st.rows = append(st.rows, toolRow{Name: t.Name, Source: source, Policy: t.Policy, Description: t.Description, Schema: t.Schema})
	}
	st.engine = engine.New(engine.Config{
		Model:     m,
		ModelName: name,
		Tools:     st.registry,
		MaxSteps:  maxSteps,
		Budget:    cmp.Or(o.budget, cfg.ContextBudget),
		System:    cmp.Or(cfg.SystemPrompt, systemPrompt),
		Gate:      gate,
	})
	return st, nil
}

const systemPrompt = "You are agentty, a careful agent working in a terminal. Use the tools when they help; " +
	"the memory facts given to you are things the user asked you to remember. Answer concisely in Markdown."

type errUsage struct{ error }

func runCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("run", stderr)
	var o options
	o.register(fs)
	fs.BoolVar(&o.json, "json", false, "print every event as one JSON line")
	fs.StringVar(&o.session, "session", "", "continue this session")
	fs.BoolVar(&o.cont, "continue", false, "finish the session's interrupted run")
	fs.BoolVar(&o.yes, "yes", false, "approve tools that ask, and re-running interrupted tool calls")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty run: "+format+"\n", a...)
		return code
	}
	o.maxStepsSet = flagSet(fs, "max-steps")
	task := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if task == "-" { // the task on standard input
		b, err := io.ReadAll(stdin)
		if err != nil {
			return fail(exitError, "reading the task: %v", err)
		}
		task = strings.TrimSpace(string(b))
	}
	switch {
	case o.cont && o.session == "":
		return fail(exitUsage, "--continue needs --session ID")
	case o.cont && task != "":
		return fail(exitUsage, "--continue takes no task: it finishes the interrupted one")
	case !o.cont && task == "":
		return fail(exitUsage, "no task given (usage: agentty run [flags] TASK)")
	}
	store, err := o.store(getenv)
	if err != nil {
		return fail(exitError, "%v", err)
	}
	gate := headlessGate{yes: o.yes, stderr: stderr}
	buildFailed := func(err error) int {
		if errors.As(err, new(errUsage)) {
			return fail(exitUsage, "%v", err)
		}
		return fail(exitError, "%v", err)
	}
	var st *setup
	var journal *sessions.Journal
	var s *engine.Session
	if o.session == "" {
		if st, err = build(ctx, o, gate, getenv); err != nil {
			return buildFailed(err) // before a session is made for nothing
		}
		if journal, err = store.Create(); err != nil {
			return fail(exitError, "%v", err)
		}
		s = engine.NewSession(journal.ID)
	} else {
		var l *sessions.Loaded
		journal, l, err = store.OpenWriter(o.session)
		if err != nil {
			return fail(exitError, "%v", err)
		}
		for _, w := range l.Warnings {
			fmt.Fprintln(stderr, "agentty run: warning:", w)
		}
		s = l.Session
		if o.model == "" {
			o.model = l.Meta.Model // a session keeps its model unless told otherwise
		}
	}
	defer journal.Close()
	if st == nil {
		if st, err = build(ctx, o, gate, getenv); err != nil {
			return buildFailed(err)
		}
	}
	defer st.Close()
	for _, n := range st.notices {
		fmt.Fprintln(stderr, "agentty run: warning:", n)
	}
	fmt.Fprintln(stderr, "session:", journal.ID)
	sinks := engine.Sinks{journal}
	if o.json {
		enc := json.NewEncoder(stdout)
		for _, n := range st.notices {
			enc.Encode(engine.Event{V: engine.SchemaVersion, Session: s.ID, Step: s.Steps, Kind: engine.KindNotice, Time: time.Now(),
				Data: &engine.Notice{Level: "warning", Message: n}})
		}
		sinks = append(sinks, engine.SinkFunc(func(ev engine.Event) error { return enc.Encode(ev) }))
	}
	var res engine.Result
	if o.cont {
		if !s.Interrupted() {
			return fail(exitError, "session %s has no interrupted run to continue (its last run ended: %s)", s.ID, s.LastRun().Stop)
		}
		_, started := s.Unfinished()
		for _, c := range started {
			verb := "it will not be re-run (pass --yes to re-run it)"
			if o.yes {
				verb = "re-running it (--yes)"
			}
			fmt.Fprintf(stderr, "agentty run: tool call %s %s (%s) was interrupted before it finished; %s\n", c.Name, c.Args, c.ID, verb)
		}
		res = st.engine.Continue(ctx, s, sinks)
	} else {
		res = st.engine.Run(ctx, s, task, sinks)
	}
	switch res.StopReason {
	case engine.StopAnswered:
		if !o.json {
			fmt.Fprintln(stdout, res.Answer)
		}
		return exitAnswered
	case engine.StopStepLimit:
		return fail(exitStepLimit, "stopped: step limit of %d reached without an answer", st.engine.Config().MaxSteps)
	case engine.StopCancelled:
		return fail(exitCancelled, "cancelled (the session is saved: agentty run --session %s --continue)", s.ID)
	}
	return fail(exitError, "%v", res.Err)
}

// headlessGate never pauses on its own; it answers approvals with --yes.
type headlessGate struct {
	yes    bool
	stderr io.Writer
}

func (g headlessGate) Stop(engine.Pending) bool { return false }

func (g headlessGate) Wait(_ context.Context, p engine.Pending) (engine.Verdict, error) {
	if g.yes {
		return engine.Verdict{Action: engine.Proceed}, nil
	}
	fmt.Fprintf(g.stderr, "agentty run: tool call %s needs approval; denied (pass --yes to approve)\n", p.ToolCall.Name)
	return engine.Verdict{Action: engine.Deny}, nil
}

// toolsCmd lists every tool: `agentty tools [--json]`.
func toolsCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("tools", stderr)
	var o options
	o.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	if o.model == "" {
		o.model = offline.Name // listing tools needs no model
	}
	st, err := build(ctx, o, nil, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "agentty tools:", err)
		return exitError
	}
	defer st.Close()
	for _, n := range st.notices {
		fmt.Fprintln(stderr, "agentty tools: warning:", n)
	}
	if *asJSON {
		return printJSON(stdout, st.rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSOURCE\tPOLICY\tDESCRIPTION")
	for _, r := range st.rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Source, r.Policy, engine.OneLine(r.Description, 70))
	}
	tw.Flush()
	return 0
}

// termSafe returns w as it is, or when w is a terminal, a writer that makes
// what goes through it safe to show (ui.Sanitize: tabs expanded, escape
// sequences and control characters made visible). Answers, tool results and
// journals are someone else's text; piped, they stay raw.
func termSafe(w io.Writer) io.Writer {
	if isTerminal(w) {
		return safeWriter{w}
	}
	return w
}

type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, ui.Sanitize(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
