package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentty/agentty/config"

	"github.com/agentty/agentty/bus"
	"github.com/agentty/agentty/sessions"
	"github.com/nats-io/nats.go"
)

// Options are the flags both the console and run take.
type Options struct {
	// OutputSchema (--output-schema FILE) is the JSON Schema the runs'
	// final answers must meet.
	OutputSchema json.RawMessage
	// MCP are MCP servers the person's own tool passes (an editor's, over
	// ACP): they start as the config's do, in any folder.
	MCP         map[string]config.MCPServer
	Model       string
	BaseURL     string
	Temperature float64
	Timeout     time.Duration
	MaxSteps    int
	DataDir     string
	Workspace   string
	AllowShell  bool
	Budget      int
	MaxStepsSet bool // --max-steps was given: it wins over the config
	Session     string
	JSON        bool
	Continue    bool
	Yes         bool
	// MaxCost (--max-cost USD) and MaxTokens (--max-tokens N) bound what
	// a run spends (0: the config's, else none).
	MaxCost   float64
	MaxTokens int
	// Breaks (--break COND, repeatable) are breakpoints' conditions.
	Breaks []string
	// Agent (--Agent NAME) is the Agent the session's top-level runs run
	// as.
	Agent string
	// TrustWorkspace (--trust-workspace) lets the workspace's risky
	// config keys take effect this once.
	TrustWorkspace bool
	// OTLP (--OTLP URL) sends traces to an OTLP collector;
	// traceContent (--trace-content) puts what was said in them.
	OTLP         string
	TraceContent bool
	// TraceFile (--trace-file FILE) writes the traces to FILE as OTLP
	// JSON lines instead (traces.Config.File).
	TraceFile string
	// NATS (--NATS URL, default $AGENTTY_NATS_URL) publishes every event
	// of the runs on NATS; natsCreds (--NATS-creds FILE) is the
	// credentials file for it.
	NATS      string
	NATSCreds string
	// AskTrust, when set, asks the person about a workspace config with
	// risky keys and no trust (the console); nil never asks (run, tools).
	AskTrust func(w *config.Workspace, changed []string) (trustChoice, error)
}

// NATSURL is --nats, else $AGENTTY_NATS_URL; "" when neither is set.
func (o *Options) NATSURL(getenv func(string) string) string {
	if o.NATS != "" {
		return o.NATS
	}
	return strings.TrimSpace(getenv("AGENTTY_NATS_URL"))
}

// NATSConfig is how to connect to the NATS server of --nats or
// AGENTTY_NATS_URL, as name: with --nats-creds, or the users agentty serve
// keeps in the data folder (its nats/users.json) when that serve is the
// server.
func (o *Options) NATSConfig(name string, getenv func(string) string) bus.Config {
	cfg := bus.Config{URL: o.NATSURL(getenv), Creds: o.NATSCreds, Name: name}
	home := o.DataDir
	if home == "" {
		home, _ = sessions.Home(getenv)
	}
	if home != "" {
		cfg.UsersFile = filepath.Join(home, "nats", bus.UsersFile)
	}
	return cfg
}

// Store opens the session Store: with --nats (or AGENTTY_NATS_URL) the
// server's JetStream, else the data folder (--data-dir or the
// environment). Close it when done: it may hold a connection.
func (o *Options) Store(getenv func(string) string) (*sessions.Store, error) {
	home := o.DataDir
	if home == "" {
		var err error
		if home, err = sessions.Home(getenv); err != nil {
			return nil, err
		}
	}
	if o.NATSURL(getenv) == "" {
		return sessions.Open(home)
	}
	return NATSStore(home, o.NATSConfig("agentty sessions", getenv))
}

// mcpLogDir is the folder of the stdio MCP servers' logs: mcp/ in the data
// folder ("" when there is none: the servers' last lines are still kept).
func (o *Options) mcpLogDir(getenv func(string) string) string {
	if home := o.DataHome(getenv); home != "" {
		return filepath.Join(home, "mcp")
	}
	return ""
}

// DataHome is the data folder: --data-dir, else sessions.Home ("" when
// there is none).
func (o *Options) DataHome(getenv func(string) string) string {
	if o.DataDir != "" {
		return o.DataDir
	}
	home, err := sessions.Home(getenv)
	if err != nil {
		return ""
	}
	return home
}

// Signer is the data folder's steering key, which signs what its
// consoles answer for runs on workers (bus/steer.go): made when create is
// set and there is none; nil and no error when there is none.
func (o *Options) Signer(getenv func(string) string, create bool) (*bus.Signer, error) {
	home := o.DataHome(getenv)
	if home == "" {
		return nil, nil
	}
	if create {
		return bus.LoadOrMakeSigner(home)
	}
	s, err := bus.LoadSigner(home)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return s, err
}

// LocalStore opens the data folder's sessions, whatever --nats says: the
// search index covers the sessions on this machine.
func (o *Options) LocalStore(getenv func(string) string) (*sessions.Store, error) {
	l := *o
	l.NATS = ""
	l.NATSCreds = ""
	return l.Store(func(k string) string {
		if k == "AGENTTY_NATS_URL" {
			return ""
		}
		return getenv(k)
	})
}

// NATSStore opens the sessions kept in the JetStream of the server at url.
func NATSStore(home string, cfg bus.Config) (*sessions.Store, error) {
	nc, err := bus.Connect(cfg)
	if errors.As(err, new(bus.UsageError)) {
		return nil, UsageError{err}
	}
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // through a leader election
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
