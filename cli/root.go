package cli

import (
	"os"
	"strings"

	"github.com/spf13/cobra/doc"

	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/console"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/openai"
)

// consoleOptions are the console's: agentty [flags].
type consoleOptions struct {
	*factory
	Step     bool
	Resume   string // --resume [ID]: "-" for the picker
	Continue bool   // --continue: this folder's most recent session
	Args     []string
}

// resumePicker is --resume's value when it is given no session: the
// picker.
const resumePicker = "pick"

func newRootCmd(f *factory) *cobra.Command {
	opts := &consoleOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "agentty [flags]",
		Short: "A terminal console for running LLM agents",
		Long: `agentty runs an agent through a task (perceive, decide, act, observe) and shows
what it does step by step: chat, a step timeline and memory side by side. With no
command it opens the console on a new session; the commands below run the same
engine headless, keep and search the sessions, and run a fleet of workers over NATS.`,
		Example: `  agentty                                 the console, a new session (the offline model)
  agentty --step                          pause before every decision and tool call
  agentty --resume                        pick a session to resume
  agentty --continue                      go on with this folder's most recent session
  agentty --base-url http://localhost:11434/v1 --model qwen2.5-coder:7b   a local model
  agentty run "what is 17*23?"            one run, headless`,
		Version:       version(),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || (opts.Resume != "" && len(args) == 1) {
				return nil
			}
			return unknownCommand(cmd, args[0])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			withRunFlags(cmd, f.App)
			return exit(consoleRun(cmd, opts))
		},
	}
	cmd.SetIn(f.In)
	cmd.SetOut(f.Out) // before the completion command, which keeps it
	cmd.SetErr(f.Err)
	cmd.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if opts.Resume != "" && len(args) == 0 { // --resume ID
			return completeSessions(f)(c, args, toComplete)
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cmd.SetVersionTemplate("{{.Version}}\n")
	cmd.SetFlagErrorFunc(flagError)
	addGlobalFlags(cmd.PersistentFlags(), f.App)
	fs := cmd.Flags()
	addRunFlags(fs, f.App)
	fs.BoolVar(&opts.Step, "step", false, "start in step mode: pause before every decision and tool call")
	addBreakFlag(fs, f.App)
	fs.StringVar(&opts.Resume, "resume", "", "resume the session `ID`, or pick one (--resume alone)")
	fs.Lookup("resume").NoOptDefVal = resumePicker
	fs.StringVar(&f.App.Session, "session", "", "resume this session (as --resume ID)")
	fs.MarkHidden("session")
	fs.BoolVar(&opts.Continue, "continue", false, "open this folder's most recent session")
	cmd.MarkFlagsMutuallyExclusive("resume", "session", "continue")
	cmd.RegisterFlagCompletionFunc("resume", completeSessions(f))
	cmd.RegisterFlagCompletionFunc("session", completeSessions(f))
	addCommands(cmd, f)
	return cmd
}

// addCommands adds agentty's commands to root, in groups, with help,
// version, man and completion.
func addCommands(cmd *cobra.Command, f *factory) {
	cmd.AddGroup(
		&cobra.Group{ID: "runs", Title: "Runs:"},
		&cobra.Group{ID: "sessions", Title: "Sessions and search:"},
		&cobra.Group{ID: "defs", Title: "What is defined here:"},
		&cobra.Group{ID: "fleet", Title: "A fleet over NATS:"},
	)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			cmd.AddCommand(c)
		}
	}
	add("runs", newRunCmd(f), newReplayCmd(f), newEvalCmd(f), newWorkflowCmd(f), newACPCmd(f))
	add("sessions", newSessionsCmd(f), newSearchCmd(f), newIndexCmd(f))
	add("defs", newToolsCmd(f), newAgentsCmd(f), newSkillsCmd(f), newHooksCmd(f), newWorkflowsCmd(f), newTrustCmd(f), newMCPCmd(f), newPluginCmd(f))
	add("fleet", newServeCmd(f), newWorkerCmd(f), newSubmitCmd(f), newWatchCmd(f), newAnswerCmd(f), newTopCmd(f), newQueueCmd(f), newCancelCmd(f))
	cmd.AddCommand(newVersionCmd(f), newManCmd(f))
	cmd.SetHelpCommand(newHelpCmd())
	cmd.InitDefaultCompletionCmd()
	for _, c := range cmd.Commands() {
		if c.Name() == "completion" { // runnable, so that a shell it does not know is an error
			c.Args = commandArgs
			c.RunE = func(*cobra.Command, []string) error {
				fmt.Fprintln(f.Err, "agentty completion: say which shell: bash, zsh, fish or powershell (agentty completion -h)")
				return exit(app.ExitUsage)
			}
			withBashFallback(c)
		}
	}
}

// consoleRun opens the console: a new session, the picker, or the session
// --resume (or --session) names.
func consoleRun(cmd *cobra.Command, opts *consoleOptions) int {
	o := *opts.App
	start := console.Start{Step: opts.Step}
	switch {
	case o.Session != "":
		start.Resume, start.ID = true, o.Session
	case opts.Resume == resumePicker && len(opts.Args) == 1:
		start.Resume, start.ID = true, opts.Args[0] // --resume ID
	case opts.Resume != "":
		start.Resume = true
		if opts.Resume != resumePicker {
			start.ID = opts.Resume // --resume=ID
		}
	case opts.Continue:
		id, err := console.LatestHere(o, opts.Getenv)
		if err != nil {
			fmt.Fprintln(opts.Err, "agentty:", err)
			return app.ExitError
		}
		if id == "" {
			start.Notice = "--continue: no session of this folder (nor of a folder above it, up to the repository's root) yet: this is a new one."
		}
		start.Resume, start.ID = id != "", id
	}
	return console.Run(cmd.Context(), o, start, opts.In, opts.Out, opts.Err, opts.Getenv)
}

// unknownCommand is the error for a word agentty does not know, with the
// commands nearest to it.
func unknownCommand(cmd *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	cmd.SuggestionsMinimumDistance = 2
	if s := cmd.SuggestionsFor(word); len(s) > 0 {
		msg += "\n\nDid you mean this?"
		for _, c := range s {
			msg += "\n\t" + c
		}
	} else if !cmd.HasParent() {
		msg += " (to run a task headless: agentty run TASK)"
	}
	return fmt.Errorf("%s", msg)
}

// commandArgs is the Args of a command made of commands: a word that is
// none of them is an unknown command, with the nearest.
func commandArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return unknownCommand(cmd, args[0])
	}
	return nil
}

// addGlobalFlags adds the flags every command takes, before or after its
// name.
func addGlobalFlags(fs *pflag.FlagSet, o *app.Options) {
	fs.StringVar(&o.Model, "model", "", "model: offline, script:FILE, or an OpenAI-compatible model name (default $AGENTTY_MODEL, gpt-4o-mini with a key, else offline)")
	fs.StringVar(&o.BaseURL, "base-url", "", "an OpenAI-compatible server, e.g. http://localhost:11434/v1 (default $OPENAI_BASE_URL)")
	fs.StringVar(&o.DataDir, "data-dir", "", "where sessions live (default $AGENTTY_HOME, $XDG_DATA_HOME/agentty or ~/.local/share/agentty)")
	fs.StringVar(&o.Workspace, "workspace", "", "the folder the file tools work in (default: the current folder)")
	fs.StringVar(&o.Agent, "agent", "", "run as this agent (see agentty agents)")
	fs.BoolVar(&o.TrustWorkspace, "trust-workspace", false, "let the workspace's .agentty.json and .mcp.json run programs, reach hosts and loosen approvals, this once")
	fs.StringVar(&o.OTLP, "otlp", "", "send traces to this OTLP collector, e.g. http://localhost:4318 (default $OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.StringVar(&o.TraceFile, "trace-file", "", "write the traces to FILE as OTLP JSON, one export request a line, instead of to a collector")
	fs.BoolVar(&o.TraceContent, "trace-content", false, "put tasks, answers, tool arguments and results in the traces (or AGENTTY_TRACE_CONTENT=1)")
	fs.StringVar(&o.NATS, "nats", "", "keep the sessions in this NATS server's JetStream and publish every event there, e.g. nats://127.0.0.1:4222 (default $AGENTTY_NATS_URL)")
	fs.StringVar(&o.NATSCreds, "nats-creds", "", "a NATS credentials file (a user JWT and its seed) for --nats")
}

// addRunFlags adds the flags of the commands that run the engine.
func addRunFlags(fs *pflag.FlagSet, o *app.Options) {
	fs.Float64Var(&o.Temperature, "temperature", -1, "sampling temperature (-1: the server's own)")
	fs.DurationVar(&o.Timeout, "timeout", openai.DefaultTimeout, "time limit of one model request")
	fs.IntVar(&o.MaxSteps, "max-steps", engine.DefaultMaxSteps, "decisions per run before stopping with step_limit")
	fs.BoolVar(&o.AllowShell, "allow-shell", false, "offer the run_shell tool (it asks before each command)")
	fs.IntVar(&o.Budget, "context-budget", 0, "tokens of history, memory and tools one request may hold (default 64000)")
	fs.Float64Var(&o.MaxCost, "max-cost", 0, "stop a run before a decision that would pass this cost, in US `dollars` (exit 4; needs the model's price)")
	fs.IntVar(&o.MaxTokens, "max-tokens", 0, "stop a run before a decision that would pass this many prompt and completion tokens (exit 4)")
}

// addBreakFlag adds --break, whose conditions land in o.Breaks.
func addBreakFlag(fs *pflag.FlagSet, o *app.Options) {
	fs.StringArrayVar(&o.Breaks, "break", nil, "pause where `COND` holds: "+engine.BreakSyntax+" (repeatable)")
}

// withRunFlags notes in o what the run flags cannot say by their values:
// whether --max-steps was given (it then wins over the config).
func withRunFlags(cmd *cobra.Command, o *app.Options) {
	o.MaxStepsSet = cmd.Flags().Changed("max-steps")
}

// newManCmd is `agentty man`: the manual page, in roff, on stdout.
func newManCmd(f *factory) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:     "man",
		Short:   "Print agentty's manual page (roff)",
		Example: "  agentty man > agentty.1 && man ./agentty.1\n  agentty man --dir /usr/local/share/man/man1   one page per command",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit(manRun(cmd.Root(), dir, f.Out, f.Err))
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "write one page per command into this folder (made if need be) instead")
	return cmd
}

// manRun writes the manual page of root, or with dir one page per command
// into dir.
func manRun(root *cobra.Command, dir string, out, errw io.Writer) int {
	root.DisableAutoGenTag = true // no date: the page changes only with the commands
	header := &doc.GenManHeader{Title: "AGENTTY", Section: "1", Source: "agentty", Manual: "agentty manual"}
	var err error
	if dir != "" {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			err = doc.GenManTree(root, header, dir)
		}
	} else {
		err = doc.GenMan(root, header, out)
	}
	if err != nil {
		fmt.Fprintln(errw, "agentty man:", err)
		return app.ExitError
	}
	return 0
}

// flagError is cobra's error for a flag of cmd it could not parse, with
// the nearest flag cmd has when the flag is unknown (--temprature: did you
// mean --temperature?).
func flagError(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	best, bestD := "", 3 // at most two edits away
	visit := func(f *pflag.Flag) {
		if d := config.EditDistance(name, f.Name); d < bestD && !f.Hidden {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if best == "" {
		return err
	}
	return fmt.Errorf("%w\n\nDid you mean this?\n\t--%s", err, best)
}

// bashFallback stands in for the bash-completion package's
// _get_comp_words_by_ref, which cobra's bash script calls, where that
// package is not installed (else every TAB says "command not found"). It
// splits the line as bash does, so a value after = or : completes as a
// word of its own.
const bashFallback = `# agentty: a minimal _get_comp_words_by_ref where bash-completion is not installed
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
_get_comp_words_by_ref() {
    local OPTIND=1 opt
    while getopts "n:" opt; do :; done
    shift $((OPTIND-1))
    local v
    for v in "$@"; do
        case $v in
            cur) cur=${COMP_WORDS[COMP_CWORD]} ;;
            prev) prev=${COMP_WORDS[COMP_CWORD-1]} ;;
            words) words=("${COMP_WORDS[@]}") ;;
            cword) cword=$COMP_CWORD ;;
        esac
    done
}
fi
`

// withBashFallback makes completion bash print bashFallback before cobra's
// script.
func withBashFallback(completion *cobra.Command) {
	for _, c := range completion.Commands() {
		if c.Name() != "bash" {
			continue
		}
		run := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if _, err := io.WriteString(cmd.OutOrStdout(), bashFallback); err != nil {
				return err
			}
			return run(cmd, args)
		}
	}
}
