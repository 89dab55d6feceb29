package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

const sessionsSay = "agentty sessions: say ls, show ID, rm ID, rename ID TITLE, export ID [--format md|json], fork ID --at STEP [--worktree DIR], diff ID [--at STEP], rewind ID --at STEP|--undo, import [FILE…] [--from claude|codex] or trace ID [--run RUN] [--otlp URL | --out FILE]"

// sessionsOptions are the flags and arguments of agentty sessions' commands.
type sessionsOptions struct {
	*factory
	JSON   bool
	All    bool
	Format string
	At     int
	Run    string
	// trace: --out FILE, OTLP JSON instead of a collector
	TraceOut string
	// diff, rewind and fork's files (checkpoint_cmd.go)
	Yes, Undo, Others bool
	Worktree          string
	Args              []string
}

// newSessionsCmd is `agentty sessions ls|show|rm|rename|export|fork|trace`.
func newSessionsCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions ls|show|rm|rename|export|fork|diff|rewind|import|trace",
		Short: "List, show, rename, export, fork and trace the sessions",
		Example: `  agentty sessions ls
  agentty sessions show 0abc12 --json
  agentty sessions export 0abc12 --format md > session.md
  agentty sessions fork 0abc12 --at 4`,
		Args: commandArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(f.Err, sessionsSay)
			return exit(app.ExitUsage)
		},
	}
	sub := func(use, short, example string, args cobra.PositionalArgs, run func(*sessionsOptions, *sessions.Store) error) *cobra.Command {
		opts := &sessionsOptions{factory: f}
		c := &cobra.Command{
			Use: use, Short: short, Example: example, Args: args,
			RunE: func(cmd *cobra.Command, args []string) error {
				opts.Args = args
				return exit(sessionsRun(opts, cmd.Name(), run))
			},
		}
		c.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
		c.Flags().BoolVar(&opts.All, "all", false, "ls: every folder's sessions, and those evals made")
		c.Flags().StringVar(&opts.Format, "format", "md", "export format: md or json")
		atHelp := "diff: the step's changes; rewind: the files as they were before that step"
		if strings.HasPrefix(use, "fork") {
			atHelp = "the last step to keep"
		}
		c.Flags().IntVar(&opts.At, "at", -1, atHelp)
		c.Flags().StringVar(&opts.Run, "run", "", "trace: only this run (run-N)")
		c.Flags().StringVar(&opts.TraceOut, "out", "", "trace: write OTLP JSON to this file (a line an export) instead of sending it")
		c.Flags().BoolVar(&opts.Yes, "yes", false, "rewind: overwrite files changed since the session's last checkpoint")
		c.Flags().BoolVar(&opts.Undo, "undo", false, "rewind: undo the session's last rewind")
		c.Flags().BoolVar(&opts.Others, "others", false, "rewind: remove or overwrite files other sessions made or changed since, too")
		c.Flags().StringVar(&opts.Worktree, "worktree", "", "fork: give the fork a git worktree DIR of its files at that step")
		if !strings.HasPrefix(use, "ls") {
			c.ValidArgsFunction = firstArg(completeSessions(f))
		}
		c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]cobra.Completion{"md", "json"}, cobra.ShellCompDirectiveNoFileComp))
		for _, n := range []string{"json", "all", "format", "at", "run", "yes", "undo", "worktree"} {
			if !strings.Contains(use, "--"+n) {
				c.Flags().MarkHidden(n)
			}
		}
		return c
	}
	cmd.AddCommand(
		sub("ls [--all] [--json]", "List this folder's sessions, newest first (--all: every folder's, and evals')", "  agentty sessions ls\n  agentty sessions ls --all\n  agentty sessions ls --nats nats://127.0.0.1:4222 --json", cobra.NoArgs, sessionsLs),
		sub("show ID [--json]", "A session's timeline of steps and its memory", "  agentty sessions show 0abc12\n  agentty sessions show 0abc12 --json | jq '.steps | length'", cobra.ExactArgs(1), sessionsShow),
		sub("rm ID", "Remove a session", "  agentty sessions rm 0abc12", cobra.ExactArgs(1), func(o *sessionsOptions, st *sessions.Store) error {
			if err := st.Remove(o.Args[0]); err != nil {
				return err
			}
			fmt.Fprintln(o.Out, "removed", o.Args[0])
			return nil
		}),
		sub("rename ID TITLE", "Give a session a title", "  agentty sessions rename 0abc12 the cache bug", cobra.MinimumNArgs(2), func(o *sessionsOptions, st *sessions.Store) error {
			return st.Rename(o.Args[0], strings.Join(o.Args[1:], " "))
		}),
		sub("export ID [--format md|json]", "Print a session as Markdown or JSON", "  agentty sessions export 0abc12 > session.md\n  agentty sessions export 0abc12 --format json", cobra.ExactArgs(1), func(o *sessionsOptions, st *sessions.Store) error {
			return st.Export(o.Args[0], o.Format, o.Out)
		}),
		sub("fork ID --at STEP [--worktree DIR]", "Copy a session up to a step into a new one; prints its id", "  agentty sessions fork 0abc12 --at 4     then: agentty --resume NEWID\n  agentty sessions fork 0abc12 --at 4 --worktree ../try-b", cobra.ExactArgs(1), sessionsFork),
		sub("diff ID [--at STEP]", "The unified diff of what a session (or one step) changed in the workspace", "  agentty sessions diff 0abc12\n  agentty sessions diff 0abc12 --at 3", cobra.ExactArgs(1), sessionsDiff),
		sub("rewind ID --at STEP | --undo [--yes] [--others]", "Restore the workspace's files as they were before a step's tools ran", "  agentty sessions rewind 0abc12 --at 1     the workspace before the session's first run\n  agentty sessions rewind 0abc12 --undo\n  agentty sessions rewind 0abc12 --at 1 --others   other sessions' work since goes too", cobra.ExactArgs(1), sessionsRewind),
		newSessionsImportCmd(f),
		sub("trace ID [--run RUN] [--otlp URL | --out FILE]", "Send a session's runs as OpenTelemetry spans (or write them as OTLP JSON)", "  agentty sessions trace 0abc12 --otlp http://localhost:4318\n  agentty sessions trace 0abc12 --out trace.jsonl", cobra.ExactArgs(1), func(o *sessionsOptions, st *sessions.Store) error {
			a := *o.App
			a.TraceFile = cmp.Or(o.TraceOut, a.TraceFile)
			return app.TraceSession(st, o.Args[0], o.Run, a, o.Getenv, o.Out)
		}),
	)
	return cmd
}

// sessionsRun opens the store and runs one of the sessions commands (sub)
// on it, saying what went wrong as agentty sessions SUB: ….
func sessionsRun(opts *sessionsOptions, sub string, run func(*sessionsOptions, *sessions.Store) error) int {
	fail := func(code int, err error) int {
		// The sessions package names itself; the command already says it.
		msg := strings.TrimPrefix(err.Error(), "sessions: ")
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, sub+": "), sub+" ")
		fmt.Fprintf(opts.Err, "agentty sessions %s: %s\n", sub, msg)
		return code
	}
	if sub == "export" && opts.Format != "md" && opts.Format != "json" {
		return fail(app.ExitUsage, fmt.Errorf("unknown format %q (md or json)", opts.Format))
	}
	if sub == "fork" && opts.At < 0 {
		return fail(app.ExitUsage, errors.New("fork needs --at STEP"))
	}
	if sub == "rewind" && (opts.At < 0) == !opts.Undo {
		return fail(app.ExitUsage, errors.New("rewind needs --at STEP or --undo (one of them)"))
	}
	store, err := opts.App.Store(opts.Getenv)
	if errors.As(err, new(app.UsageError)) {
		return fail(app.ExitUsage, err)
	}
	if err != nil {
		return fail(app.ExitError, err)
	}
	defer store.Close()
	if !opts.JSON && !(sub == "export" && opts.Format == "json") {
		// What a session holds is someone else's text: cleaned of
		// escapes on a pipe too (less, head and a Markdown viewer show it
		// on a terminal later); --json escapes it as JSON does.
		o, f := *opts, *opts.factory
		var flush func()
		f.Out, flush = app.PipeSafe(opts.Out)
		defer flush()
		o.factory = &f
		opts = &o
	}
	if err := run(opts, store); err != nil {
		if c, ok := errors.AsType[exitCode](err); ok {
			return int(c)
		}
		code := app.ExitError
		if errors.As(err, new(app.UsageError)) {
			code = app.ExitUsage
		}
		return fail(code, err)
	}
	return 0
}

// sessionsLs lists the sessions: those of this folder (the workspace)
// first, newest first.
func sessionsLs(opts *sessionsOptions, store *sessions.Store) error {
	stdout := opts.Out
	list, err := store.List()
	if err != nil {
		return err
	}
	ws, err := filepath.Abs(cmp.Or(opts.App.Workspace, "."))
	if err != nil {
		return err
	}
	sessions.HereFirst(list, ws)
	left := ""
	if !opts.All {
		var elsewhere, evals int
		list, elsewhere, evals = sessions.Here(list, ws)
		left = leftOut(elsewhere, evals)
	}
	if opts.JSON {
		type row struct {
			sessions.Meta
			Error string `json:"error,omitempty"`
		}
		rows := []row{}
		for _, l := range list {
			r := row{Meta: l.Meta}
			if l.Err != nil {
				r.Error = l.Err.Error()
			}
			rows = append(rows, r)
		}
		return exit(printJSON(stdout, rows))
	}
	if len(list) == 0 && left != "" {
		fmt.Fprintf(stdout, "no sessions of %s yet (%s)\n", ws, left)
		return nil
	}
	if len(list) == 0 {
		fmt.Fprintf(stdout, "no sessions yet in %s\n", store.Where())
		if store.Local() {
			fmt.Fprintln(stdout, "(sessions run with --nats or AGENTTY_NATS_URL are kept on that NATS server: pass --nats URL to list them)")
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tSTEPS\tCOST\tMODEL\tTITLE")
	for _, l := range list {
		title := l.Title
		if l.Runs == 0 && l.LastStep == 0 {
			title += " [queued]" // reserved by agentty submit, not yet started
		} else if l.Writing {
			title += " [running]"
		} else if l.Interrupted {
			title += " [interrupted]"
		}
		if l.Err != nil {
			title += " [damaged: " + l.Err.Error() + "]"
		}
		if l.Origin == "eval" || l.Origin == "workflow" {
			title += " [" + l.Origin + "]"
		}
		if l.Workspace != "" && l.Workspace != ws { // --all: where (a fork's worktree)
			title += " (in " + l.Workspace + ")"
		}
		cost := strings.TrimPrefix(l.Usage.CostString(), "cost ") // the column says "cost"
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", l.ID, ago(l.Updated), l.LastStep, cost, l.Model, title)
	}
	if err := tw.Flush(); err != nil || left == "" {
		return err
	}
	_, err = fmt.Fprintf(stdout, "(%s)\n", left)
	return err
}

// leftOut says what a list of this folder's sessions left out, and how to
// see it ("" for nothing).
func leftOut(elsewhere, evals int) string {
	var parts []string
	if elsewhere > 0 {
		parts = append(parts, fmt.Sprintf("%d in other folders", elsewhere))
	}
	if evals > 0 {
		parts = append(parts, fmt.Sprintf("%d made by evals", evals))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " and ") + " not shown: agentty sessions ls --all"
}

// sessionsShow prints a session's timeline of steps and its memory.
func sessionsShow(opts *sessionsOptions, store *sessions.Store) error {
	stdout := opts.Out
	l, err := store.Load(opts.Args[0])
	if l == nil {
		return err
	}
	steps := sessions.Timeline(l.Events)
	if opts.JSON {
		return exit(printJSON(stdout, map[string]any{"meta": l.Meta, "steps": steps, "memory": l.Session.Memory()}))
	}
	u := l.Meta.Usage
	cost := u.CostString()
	if !strings.HasPrefix(cost, "cost ") { // "cost unknown" says it already
		cost = "cost " + cost
	}
	fmt.Fprintf(stdout, "%s  %s  (%s, %d %s, %d %s, %d tokens in, %d out, %s)\n", l.Meta.ID, l.Meta.Title, l.Meta.Model, l.Meta.Runs, engine.Plural(l.Meta.Runs, "run"),
		l.Meta.LastStep, engine.Plural(l.Meta.LastStep, "step"), u.PromptTokens, u.CompletionTokens, cost)
	sessions.PrintSteps(stdout, steps)
	if ev := sessions.Unanswered(l.Events); ev != nil {
		fmt.Fprintf(stdout, "unanswered: %s since %s (%s ago); a console of whoever submitted the run answers it (agentty watch %s)\n",
			sessions.WaitingFor(ev), ev.Time.Local().Format(time.DateTime), time.Since(ev.Time).Round(time.Second), l.Meta.ID)
	}
	for _, f := range l.Session.Memory() {
		by := ""
		if f.Agent != "" {
			by = ", by " + f.Agent
		}
		fmt.Fprintf(stdout, "memory: %s = %s (step %d%s)\n", f.Key, f.Value, f.Step, by)
	}
	if st, points, cerr := checkpointsOf(opts, l); cerr == nil {
		dir, n := st.Held()
		fmt.Fprintf(stdout, "checkpoints: %d (%s mode; sessions diff %s shows them); the workspace's take %s in %s\n", len(points), st.Mode(), l.Meta.ID, humanBytes(n), dir)
	}
	for _, w := range l.Warnings {
		fmt.Fprintln(opts.Err, "warning:", w)
	}
	return err
}

// humanBytes says n bytes as people read them: 12.3 MB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// sessionsFork copies a session up to --at into a new one and prints its
// id.
func sessionsFork(opts *sessionsOptions, store *sessions.Store) error {
	id, err := store.Fork(opts.Args[0], opts.At)
	if err != nil {
		return err
	}
	if opts.Worktree != "" {
		if err := forkWorktree(opts, store, id); err != nil {
			store.Remove(id) // a fork without the files it was asked for is not made
			return err
		}
	}
	fmt.Fprintln(opts.Out, id)
	return nil
}

func printJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return app.ExitError
	}
	return 0
}

func ago(t time.Time) string { return sessions.Age(t, time.Now()) }
