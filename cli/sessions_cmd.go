package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/sessions"
	"github.com/agentty/agentty/traces"
)

// sessionsCmd runs `agentty sessions ls|show|rm|rename|export|fork`.
func sessionsCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	const say = "agentty sessions: say ls, show ID, rm ID, rename ID TITLE, export ID [--format md|json], fork ID --at STEP or trace ID [--run RUN] [--otlp URL]"
	if len(args) == 0 {
		fmt.Fprintln(stderr, say)
		return app.ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, say)
		return 0
	}
	sub := args[0]
	fs := newFlags("sessions "+sub, stderr)
	var o app.Options
	fs.StringVar(&o.DataDir, "data-dir", "", "where sessions live")
	registerNATS(&o, fs)
	asJSON := fs.Bool("json", false, "print JSON")
	format := fs.String("format", "md", "export format: md or json")
	at := fs.Int("at", -1, "fork: the last step to keep")
	run := fs.String("run", "", "trace: only this run (run-N)")
	registerTraces(&o, fs)
	if err := parseInterspersed(fs, args[1:]); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, err error) int {
		// The sessions package names itself; the command already says it.
		msg := strings.TrimPrefix(strings.TrimPrefix(err.Error(), "sessions: "), sub+": ")
		fmt.Fprintf(stderr, "agentty sessions %s: %s\n", sub, msg)
		return code
	}
	rest := fs.Args()
	want := map[string]int{"ls": 0, "show": 1, "rm": 1, "rename": 2, "export": 1, "fork": 1, "trace": 1}
	n, ok := want[sub]
	if !ok {
		return fail(app.ExitUsage, fmt.Errorf("unknown command %q (ls, show, rm, rename, export, fork, trace)", sub))
	}
	if sub == "rename" && len(rest) > 2 {
		rest = []string{rest[0], strings.Join(rest[1:], " ")}
	}
	if len(rest) != n {
		return fail(app.ExitUsage, fmt.Errorf("wants %d argument(s), got %d", n, len(rest)))
	}
	if sub == "export" && *format != "md" && *format != "json" {
		return fail(app.ExitUsage, fmt.Errorf("unknown format %q (md or json)", *format))
	}
	store, err := o.Store(getenv)
	if errors.As(err, new(app.UsageError)) {
		return fail(app.ExitUsage, err)
	}
	if err != nil {
		return fail(app.ExitError, err)
	}
	defer store.Close()
	switch sub {
	case "trace":
		if err := traceSession(store, rest[0], *run, o, getenv, stdout); err != nil {
			code := app.ExitError
			if errors.As(err, new(app.UsageError)) {
				code = app.ExitUsage
			}
			return fail(code, err)
		}
		return 0
	case "ls":
		list, err := store.List()
		if err != nil {
			return fail(app.ExitError, err)
		}
		if *asJSON {
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
			return printJSON(stdout, rows)
		}
		if len(list) == 0 {
			fmt.Fprintf(stdout, "no sessions yet in %s\n", store.Where())
			if store.Local() {
				fmt.Fprintln(stdout, "(sessions run with --nats or AGENTTY_NATS_URL are kept on that NATS server: pass --nats URL to list them)")
			}
			return 0
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tUPDATED\tSTEPS\tMODEL\tTITLE")
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
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", l.ID, ago(l.Updated), l.LastStep, l.Model, title)
		}
		tw.Flush()
	case "show":
		l, err := store.Load(rest[0])
		if l == nil {
			return fail(app.ExitError, err)
		}
		steps := sessions.Timeline(l.Events)
		if *asJSON {
			return printJSON(stdout, map[string]any{"meta": l.Meta, "steps": steps, "memory": l.Session.Memory()})
		}
		fmt.Fprintf(stdout, "%s  %s  (%s, %d runs, %d steps)\n", l.Meta.ID, l.Meta.Title, l.Meta.Model, l.Meta.Runs, l.Meta.LastStep)
		printSteps(stdout, steps)
		for _, f := range l.Session.Memory() {
			by := ""
			if f.Agent != "" {
				by = ", by " + f.Agent
			}
			fmt.Fprintf(stdout, "memory: %s = %s (step %d%s)\n", f.Key, f.Value, f.Step, by)
		}
		for _, w := range l.Warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
		if err != nil {
			return fail(app.ExitError, err)
		}
	case "rm":
		if err := store.Remove(rest[0]); err != nil {
			return fail(app.ExitError, err)
		}
		fmt.Fprintln(stdout, "removed", rest[0])
	case "rename":
		if err := store.Rename(rest[0], rest[1]); err != nil {
			return fail(app.ExitError, err)
		}
	case "export":
		if err := store.Export(rest[0], *format, stdout); err != nil {
			return fail(app.ExitError, err)
		}
	case "fork":
		if *at < 0 {
			return fail(app.ExitUsage, errors.New("fork needs --at STEP"))
		}
		id, err := store.Fork(rest[0], *at)
		if err != nil {
			return fail(app.ExitError, err)
		}
		fmt.Fprintln(stdout, id)
	}
	return 0
}

// parseInterspersed parses flags that may come before or after the
// positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

func printJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return app.ExitError
	}
	return 0
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h ago"
	}
	return t.Local().Format("2006-01-02")
}

// traceSession sends a stored session's runs (or one) to the OTLP collector
// as spans with their recorded times and ids.
func traceSession(store *sessions.Store, id, run string, o app.Options, getenv func(string) string, stdout io.Writer) error {
	tc := traces.Config{Endpoint: o.OTLP, Content: o.TraceContent || traces.ContentFromEnv(getenv), Getenv: getenv}
	if !tc.Enabled() {
		return app.Usage(errors.New("no collector: give --otlp URL or set OTEL_EXPORTER_OTLP_ENDPOINT"))
	}
	l, err := store.Load(id)
	if err != nil {
		return err
	}
	t, err := traces.Start(context.Background(), tc)
	if err != nil {
		return app.Usage(err)
	}
	sink := t.Sink(traces.Options{Model: l.Meta.Model, Replay: true})
	var runs []string
	seen := map[string]bool{}
	for _, ev := range l.Events {
		if ev.Run == "" || (run != "" && ev.Run != run) {
			continue
		}
		if !seen[ev.Run] {
			seen[ev.Run] = true
			runs = append(runs, ev.Run)
		}
		sink.Emit(ev)
	}
	sink.Close()
	if err := t.Close(); err != nil {
		return err
	}
	if len(runs) == 0 {
		if run != "" {
			return fmt.Errorf("session %s has no run %q", id, run)
		}
		return fmt.Errorf("session %s has no runs", id)
	}
	for _, r := range runs {
		fmt.Fprintf(stdout, "%s %s trace %s\n", id, r, traces.TraceID(l.Session.ID, r))
	}
	return nil
}

// printSteps prints a session's timeline as a tree: each top-level run and
// its steps, and under the step whose call delegated to it, each sub-run
// (indented) with its own steps.
func printSteps(w io.Writer, steps []sessions.Step) {
	byRun := map[string][]sessions.Step{}
	subs := map[string][]string{} // "run#step" → the sub-runs its calls started
	var tops []string
	for _, s := range steps {
		if _, seen := byRun[s.Run]; !seen {
			if s.ParentRun == "" {
				tops = append(tops, s.Run)
			} else {
				k := s.ParentRun + "#" + strconv.Itoa(s.ParentStep)
				subs[k] = append(subs[k], s.Run)
			}
		}
		byRun[s.Run] = append(byRun[s.Run], s)
	}
	var print func(run string, depth int)
	print = func(run string, depth int) {
		pad := strings.Repeat("    ", depth)
		for _, s := range byRun[run] {
			retries := ""
			if s.Retries > 0 {
				retries = fmt.Sprintf(" (%d retries)", s.Retries)
			}
			fmt.Fprintf(w, "%s  step %-3d %-11s %s%s\n", pad, s.Step, s.Status, s.Decision, retries)
			for _, t := range s.Tools {
				fmt.Fprintf(w, "%s           %-8s %s %dms: %s\n", pad, t.Status, t.Name, t.DurationMS, t.Result)
			}
			started := subs[run+"#"+strconv.Itoa(s.Step)]
			slices.SortStableFunc(started, func(a, b string) int { // in the decision's order
				return cmp.Compare(slices.Index(s.Calls, byRun[a][0].ParentCall), slices.Index(s.Calls, byRun[b][0].ParentCall))
			})
			for _, sub := range started {
				fmt.Fprintf(w, "%s    ↳ agent %s (%s):\n", pad, byRun[sub][0].Agent, sub)
				print(sub, depth+1)
			}
		}
	}
	for _, run := range tops {
		name := run
		if a := byRun[run][0].Agent; a != "" {
			name += " (agent " + a + ")"
		}
		fmt.Fprintf(w, "%s:\n", name)
		print(run, 0)
	}
}
