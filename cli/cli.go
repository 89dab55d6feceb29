// Package cli is agentty's command line: one file per command.
package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/agentty/agentty/app"
)

// isCommand reports whether s is one of cli's sub-commands, for the
// message of flags given before one (agentty --nats URL sessions ls).
func isCommand(s string) bool {
	switch s {
	case "run", "sessions", "tools", "trust", "agents", "replay", "workflow", "workflows", "eval", "search", "index", "serve", "watch", "submit", "worker":
		return true
	}
	return false
}

// Execute runs agentty with args and returns the exit code.
func Execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	stdout, stderr = app.TermSafe(stdout), app.TermSafe(stderr)
	defer app.FlushSafe(stdout)
	defer app.FlushSafe(stderr)
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
		case "agents":
			return agentsCmd(ctx, args[1:], stdout, stderr, getenv)
		case "replay":
			return replayCmd(ctx, args[1:], stdout, stderr, getenv)
		case "workflow":
			return workflowCmd(ctx, args[1:], stdout, stderr, getenv)
		case "workflows":
			return workflowsCmd(args[1:], stdout, stderr, getenv)
		case "eval":
			return evalCmd(ctx, args[1:], stdout, stderr, getenv)
		case "search":
			return searchCmd(ctx, args[1:], stdout, stderr, getenv)
		case "index":
			return indexCmd(ctx, args[1:], stdout, stderr, getenv)
		case "serve":
			return serveCmd(ctx, args[1:], stdout, stderr, getenv)
		case "watch":
			return watchCmd(ctx, args[1:], stdout, stderr, getenv)
		case "submit":
			return submitCmd(ctx, args[1:], stdin, stdout, stderr, getenv)
		case "worker":
			return workerCmd(ctx, args[1:], stdout, stderr, getenv)
		case "help", "-h", "-help", "--help":
			fmt.Fprint(stdout, usage)
			return 0
		case "version", "-version", "--version":
			fmt.Fprintln(stdout, version())
			return 0
		}
	}
	return consoleCmd(ctx, args, stdin, stdout, stderr, getenv)
}

// version says which agentty this is: the module's version and the commit
// it was built from, as the build recorded them ("(devel)" and no commit
// for go run of a working tree without version control).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "agentty (unknown build)"
	}
	v := "agentty " + bi.Main.Version
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		v += " commit " + rev[:min(12, len(rev))]
		if settings["vcs.modified"] == "true" {
			v += " (modified)"
		}
	}
	return v + " " + bi.GoVersion
}

const usage = `agentty: a terminal console for running LLM agents

  agentty [flags]                    the console, new session
  agentty --resume [ID]              the console, resuming a session
  agentty --version                  the version (and the commit, when the build recorded it)
  agentty run [flags] TASK           headless: one run, prints the answer (TASK - reads stdin)
  agentty run --session ID TASK      continue a session with a new task
  agentty run --session ID --continue   finish an interrupted run
  agentty sessions ls [--json]       list sessions, newest first
  agentty sessions show ID [--json]  a session's timeline of steps
  agentty sessions rm ID | rename ID TITLE | export ID [--format md|json] | fork ID --at STEP
  agentty sessions trace ID [--run RUN]  send a session's runs as OpenTelemetry spans
  agentty tools [--json]             every tool, with its source, policy and schema
  agentty agents [--json]            every agent (.agentty/agents/*.md …) and the files that
                                     failed to load (exit 1 if any did)
  agentty replay ID [--until STEP [--model M]] [--json]
                                     re-run a session with its recorded decisions (no model
                                     call), the tools for real; exit 1 if a result differs
  agentty eval [flags] FILE.yaml    run a suite of agent test cases (exit 1 if any failed);
                                     --junit FILE, --record DIR / --replay DIR, --from-session ID
  agentty workflow run NAME|FILE [--input K=V]… [--json]
                                     carry out a workflow (.agentty/workflows/NAME.yaml)
  agentty workflows [--json]         every workflow and the files that failed to load
  agentty search QUERY [--scope workspace|sessions|all] [-k N] [--json]
                                     the best chunks of the workspace's files and the past
                                     sessions (BM25; the index is brought up to date first)
  agentty index [--rebuild] [--json] bring the search index up to date; what it holds
  agentty serve [--listen HOST:PORT] [--workers N]
                                     a NATS server with JetStream (default 127.0.0.1:4222, its
                                     store in the data folder's nats/) and N workers (default:
                                     the cores); Ctrl+C drains them
  agentty submit [--pool P] [--session ID] [--agent A] [--model M] [--step] [--wait] TASK
                                     queue a run for a worker; prints its session id
  agentty worker [--pool P] [--concurrency N] [flags]
                                     take queued runs and carry them out; Ctrl+C drains.
                                     --ack-wait D (30s): silence before a worker is taken for
                                     dead; --max-deliver N (5): hand-outs before a run is given
                                     up; --gate-timeout D: a --step run's wait for a console
  agentty watch [SESSION] [--json]   follow a session (or all) live over NATS: what its journal
                                     holds, then each event as it happens; Ctrl+C ends it
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
  --agent NAME        the session's runs run as this agent (see agentty agents)
  --step              (console) pause before every decision and tool call
  --data-dir DIR      where sessions live (default $AGENTTY_HOME, $XDG_DATA_HOME/agentty
                      or ~/.local/share/agentty)
  --json              (run) print every event as one JSON line
  --yes               (run) approve tools that ask, and re-running interrupted tool calls
  --trust-workspace   let the workspace's .agentty.json use its risky settings this once
  --otlp URL          send traces to an OTLP collector, e.g. http://localhost:4318 (default
                      $OTEL_EXPORTER_OTLP_ENDPOINT; off when neither is set)
  --trace-content     put tasks, answers, tool arguments and results in the traces (or
                      AGENTTY_TRACE_CONTENT=1; off by default)
  --nats URL          keep the sessions in that NATS server's JetStream and publish every
                      event on agentty.events.SESSION.RUN.KIND, e.g. nats://127.0.0.1:4222
                      or tls://host:4222 (default $AGENTTY_NATS_URL; off when neither is set)
  --nats-creds FILE   a NATS credentials file (user JWT and seed) for --nats
config: $AGENTTY_CONFIG, else $XDG_CONFIG_HOME/agentty/config.json, else
~/.config/agentty/config.json, with the workspace's .agentty.json over it; until you
trust the folder (agentty trust), its settings that can run programs, reach hosts or
loosen approvals are ignored
exit codes of run: 0 answered, 1 error, 2 bad usage, 3 step limit, 130 cancelled
`
