package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentty/agentty/config"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/openai"
	"github.com/agentty/agentty/sessions"
	"github.com/nats-io/nats.go"
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
	askTrust func(w *config.Workspace, changed []string) (trustChoice, error)
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
	fs.StringVar(&o.nats, "nats", "", "keep the sessions in this NATS server's JetStream and publish every event there, e.g. nats://127.0.0.1:4222 or tls://host:4222 (default $AGENTTY_NATS_URL)")
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

// store opens the session store: with --nats (or AGENTTY_NATS_URL) the
// server's JetStream, else the data folder (--data-dir or the
// environment). Close it when done: it may hold a connection.
func (o *options) store(getenv func(string) string) (*sessions.Store, error) {
	home := o.dataDir
	if home == "" {
		var err error
		if home, err = sessions.Home(getenv); err != nil {
			return nil, err
		}
	}
	url := o.natsURL(getenv)
	if url == "" {
		return sessions.Open(home)
	}
	return natsStore(home, url, o.natsCreds)
}

// mcpLogDir is the folder of the stdio MCP servers' logs: mcp/ in the data
// folder ("" when there is none: the servers' last lines are still kept).
func (o *options) mcpLogDir(getenv func(string) string) string {
	home := o.dataDir
	if home == "" {
		var err error
		if home, err = sessions.Home(getenv); err != nil {
			return ""
		}
	}
	return filepath.Join(home, "mcp")
}

// localStore opens the data folder's sessions, whatever --nats says: the
// search index covers the sessions on this machine.
func (o *options) localStore(getenv func(string) string) (*sessions.Store, error) {
	l := *o
	l.nats = ""
	l.natsCreds = ""
	return l.store(func(k string) string {
		if k == "AGENTTY_NATS_URL" {
			return ""
		}
		return getenv(k)
	})
}

// natsStore opens the sessions kept in the JetStream of the server at url.
func natsStore(home, url, creds string) (*sessions.Store, error) {
	nc, err := bus.Connect(bus.Config{URL: url, Creds: creds, Name: "agentty sessions"})
	if errors.As(err, new(bus.UsageError)) {
		return nil, errUsage{err}
	}
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := bus.OpenJournals(ctx, nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return sessions.OpenWith(home, natsJournals{js, nc}), nil
}

// natsJournals are the sessions in JetStream, with the connection they
// own: the Store closes it.
type natsJournals struct {
	*bus.Journals
	nc *nats.Conn
}

func (n natsJournals) Close() error {
	n.nc.Close()
	return nil
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
