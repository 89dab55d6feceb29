package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/openai"
)

func register(o *app.Options, fs *flag.FlagSet) {
	fs.StringVar(&o.Model, "model", "", "model: offline, script:FILE, or an OpenAI-compatible model name")
	fs.StringVar(&o.BaseURL, "base-url", "", "base URL of an OpenAI-compatible API (default $OPENAI_BASE_URL)")
	fs.Float64Var(&o.Temperature, "temperature", -1, "sampling temperature (default: the server's)")
	fs.DurationVar(&o.Timeout, "timeout", openai.DefaultTimeout, "time limit of one model request")
	fs.IntVar(&o.MaxSteps, "max-steps", engine.DefaultMaxSteps, "decisions per run before stopping")
	fs.StringVar(&o.DataDir, "data-dir", "", "where sessions live")
	fs.StringVar(&o.Workspace, "workspace", "", "the folder the file tools work in (default: the current folder)")
	fs.BoolVar(&o.AllowShell, "allow-shell", false, "offer the run_shell tool (it asks before each command)")
	fs.IntVar(&o.Budget, "context-budget", 0, "tokens of history, memory and tools a request may hold (default 64000)")
	fs.StringVar(&o.Agent, "agent", "", "run as this agent (see agentty agents)")
	fs.BoolVar(&o.TrustWorkspace, "trust-workspace", false, "let the workspace's .agentty.json run programs, reach hosts and loosen approvals, this once")
	registerTraces(o, fs)
	registerNATS(o, fs)
}

// registerNATS adds --nats and --nats-creds.
func registerNATS(o *app.Options, fs *flag.FlagSet) {
	fs.StringVar(&o.NATS, "nats", "", "keep the sessions in this NATS server's JetStream and publish every event there, e.g. nats://127.0.0.1:4222 or tls://host:4222 (default $AGENTTY_NATS_URL)")
	fs.StringVar(&o.NATSCreds, "nats-creds", "", "a NATS credentials file (a user JWT and its seed) for --nats")
}

// registerTraces adds --otlp and --trace-content.
func registerTraces(o *app.Options, fs *flag.FlagSet) {
	fs.StringVar(&o.OTLP, "otlp", "", "send traces to this OTLP collector, e.g. http://localhost:4318 (default $OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.BoolVar(&o.TraceContent, "trace-content", false, "put tasks, answers, tool arguments and results in the traces (or AGENTTY_TRACE_CONTENT=1)")
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
	return app.ExitUsage
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	return fs
}
