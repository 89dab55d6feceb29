package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/openai"
	"github.com/agentty/agentty/sessions"
)

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
	// agent (--agent NAME) is the agent the session's top-level runs run
	// as.
	agent string
	// trustWorkspace (--trust-workspace) lets the workspace's risky
	// config keys take effect this once.
	trustWorkspace bool
	// otlp (--otlp URL) sends traces to an OTLP collector;
	// traceContent (--trace-content) puts what was said in them.
	otlp         string
	traceContent bool
	// nats (--nats URL, default $AGENTTY_NATS_URL) publishes every event
	// of the runs on NATS; natsCreds (--nats-creds FILE) is the
	// credentials file for it.
	nats      string
	natsCreds string
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
	fs.StringVar(&o.agent, "agent", "", "run as this agent (see agentty agents)")
	fs.BoolVar(&o.trustWorkspace, "trust-workspace", false, "let the workspace's .agentty.json run programs, reach hosts and loosen approvals, this once")
	o.registerTraces(fs)
	o.registerNATS(fs)
}

// registerNATS adds --nats and --nats-creds.
func (o *options) registerNATS(fs *flag.FlagSet) {
	fs.StringVar(&o.nats, "nats", "", "publish every event on this NATS server, e.g. nats://127.0.0.1:4222 or tls://host:4222 (default $AGENTTY_NATS_URL)")
	fs.StringVar(&o.natsCreds, "nats-creds", "", "a NATS credentials file (a user JWT and its seed) for --nats")
}

// natsURL is --nats, else $AGENTTY_NATS_URL; "" when neither is set.
func (o *options) natsURL(getenv func(string) string) string {
	if o.nats != "" {
		return o.nats
	}
	return strings.TrimSpace(getenv("AGENTTY_NATS_URL"))
}

// registerTraces adds --otlp and --trace-content.
func (o *options) registerTraces(fs *flag.FlagSet) {
	fs.StringVar(&o.otlp, "otlp", "", "send traces to this OTLP collector, e.g. http://localhost:4318 (default $OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.BoolVar(&o.traceContent, "trace-content", false, "put tasks, answers, tool arguments and results in the traces (or AGENTTY_TRACE_CONTENT=1)")
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
