package cli

import (
	"github.com/spf13/cobra"

	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"time"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/eval"
)

const evalUsage = `usage: agentty eval [flags] FILE.yaml
       agentty eval --from-session ID

  --model NAME         the model of every case (default: the suite's model:, else offline)
  --filter REGEXP      only the cases whose name matches
  --concurrency N      runs at once (default 4)
  --repeat N           run each case N times (default: each case's repeat:)
  --fail-fast          start no more runs once a case has failed
  --junit FILE         write JUnit XML (for CI)
  --json FILE          write the results as JSON
  --record DIR         keep each case's journal as DIR/CASE.jsonl
  --replay DIR         run each case with the decisions recorded in DIR (no model call)
  --judge-model NAME   the model that grades judge: assertions
  --yes                approve tools that ask (else they are denied)
  --from-session ID    print a case made from a session, to paste into a suite
  (and the flags of agentty run: --base-url, --workspace, --max-steps, --data-dir, …)
exit codes: 0 every case passed, 1 some did not, 2 bad usage or a bad suite file
`

// evalOptions are the flags and arguments of agentty eval.
type evalOptions struct {
	*factory
	Filter      string
	Concurrency int
	Repeat      int
	FailFast    bool
	JunitFile   string
	JsonFile    string
	RecordDir   string
	ReplayDir   string
	JudgeModel  string
	FromSession string
	Args        []string
}

// newEvalCmd binds the flags of its command into its options.
func newEvalCmd(f *factory) *cobra.Command {
	opts := &evalOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "eval [flags] FILE.yaml",
		Short: "Run a suite of agent test cases (exit 1 if any failed)",
		Example: `  agentty eval examples/evals.yaml
  agentty eval evals.yaml --junit report.xml --concurrency 8
  agentty eval evals.yaml --record rec/     then: agentty eval evals.yaml --replay rec/
  agentty eval --from-session 0abc12 >> evals.yaml`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			withRunFlags(cmd, f.App)
			return exit(evalRun(cmd.Context(), opts))
		},
	}
	fs := cmd.Flags()
	addRunFlags(fs, f.App)
	fs.StringVar(&opts.Filter, "filter", "", "only the cases whose name matches this regexp")
	fs.IntVar(&opts.Concurrency, "concurrency", 4, "runs at once")
	fs.IntVar(&opts.Repeat, "repeat", 0, "run each case this many times")
	fs.BoolVar(&opts.FailFast, "fail-fast", false, "start no more runs once a case has failed")
	fs.StringVar(&opts.JunitFile, "junit", "", "write JUnit XML to this file")
	fs.StringVar(&opts.JsonFile, "json", "", "write the results as JSON to this file")
	fs.StringVar(&opts.RecordDir, "record", "", "keep each case's journal in this folder")
	fs.StringVar(&opts.ReplayDir, "replay", "", "replay the recordings in this folder")
	fs.StringVar(&opts.JudgeModel, "judge-model", "", "the model that grades judge: assertions")
	fs.StringVar(&opts.FromSession, "from-session", "", "print a case made from this session")
	fs.BoolVar(&f.App.Yes, "yes", false, "approve tools that ask")
	return cmd
}

// evalRun runs a suite of agent test cases (eval.go, eval_run.go).
func evalRun(ctx context.Context, opts *evalOptions) int {
	o := *opts.App
	stdout := opts.Out
	stderr := opts.Err
	getenv := opts.Getenv
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty eval: "+format+"\n", a...)
		return code
	}
	if opts.FromSession != "" {
		if len(opts.Args) > 0 {
			return fail(app.ExitUsage, "--from-session takes no suite file")
		}
		store, err := o.Store(getenv)
		if err != nil {
			return fail(app.ExitError, "%v", err)
		}
		text, err := eval.CaseFromSession(store, opts.FromSession)
		if err != nil {
			return fail(app.ExitError, "%v", err)
		}
		io.WriteString(stdout, text)
		return 0
	}
	switch {
	case len(opts.Args) != 1:
		return fail(app.ExitUsage, "want one suite file\n%s", evalUsage)
	case opts.Concurrency < 1:
		return fail(app.ExitUsage, "--concurrency must be at least 1, not %d", opts.Concurrency)
	case opts.Repeat < 0:
		return fail(app.ExitUsage, "--repeat must be at least 1, not %d", opts.Repeat)
	case opts.RecordDir != "" && opts.ReplayDir != "":
		return fail(app.ExitUsage, "--record and --replay go apart: record once, then replay")
	}
	suite, err := eval.Load(arg(opts.Args, 0))
	if err != nil {
		var es eval.SuiteErrors
		if errors.As(err, &es) {
			for _, e := range es {
				fmt.Fprintf(stderr, "agentty eval: %v\n", e)
			}
			return app.ExitUsage
		}
		return fail(app.ExitUsage, "%v", err)
	}
	cases := suite.Cases
	if opts.Filter != "" {
		re, err := regexp.Compile(opts.Filter)
		if err != nil {
			return fail(app.ExitUsage, "--filter: bad regexp: %v", err)
		}
		cases = slices.DeleteFunc(slices.Clone(cases), func(c *eval.Case) bool { return !re.MatchString(c.Name) })
		if len(cases) == 0 {
			return fail(app.ExitUsage, "no case of %s matches --filter %s", suite.File, opts.Filter)
		}
	}
	if opts.JudgeModel == "" {
		if err := eval.NeedsJudge(suite.File, cases); err != nil {
			return fail(app.ExitUsage, "%v", err)
		}
	}
	if opts.Repeat > 0 {
		for i, c := range cases {
			cc := *c
			cc.Repeat = opts.Repeat
			cases[i] = &cc
		}
	}
	if opts.RecordDir != "" || opts.ReplayDir != "" {
		files := map[string]string{}
		for _, c := range cases {
			f := eval.FileName(c.Name)
			if other, dup := files[f]; dup {
				return fail(app.ExitUsage, "cases %q and %q would share the recording %s.jsonl: rename one", other, c.Name, f)
			}
			files[f] = c.Name
		}
	}
	if opts.RecordDir != "" {
		if err := os.MkdirAll(opts.RecordDir, 0o700); err != nil {
			return fail(app.ExitUsage, "--record: %v", err)
		}
	}
	if opts.ReplayDir != "" {
		if st, err := os.Stat(opts.ReplayDir); err != nil || !st.IsDir() {
			return fail(app.ExitUsage, "--replay: %s is not a folder of recordings", opts.ReplayDir)
		}
	}
	if o.Model == "" && opts.ReplayDir == "" {
		if err := judgeSuiteModel(o, suite, getenv); err != nil {
			return fail(app.ExitUsage, "%v", err)
		}
	}
	o.Model = cmp.Or(o.Model, suite.Model, "offline")
	if opts.ReplayDir != "" {
		o.Model = "offline" // never called: the recordings decide
	}
	o.Agent = cmp.Or(o.Agent, suite.Agent)
	if !o.MaxStepsSet && suite.MaxSteps > 0 {
		o.MaxSteps, o.MaxStepsSet = suite.MaxSteps, true
	}
	store, err := o.Store(getenv)
	if err != nil {
		return fail(app.ExitError, "%v", err)
	}
	st, err := app.Build(ctx, o, eval.Gate{Yes: o.Yes}, getenv)
	if err != nil {
		return fail(app.ExitUsage, "%v", err)
	}
	defer st.Close()
	for _, n := range st.Notices {
		fmt.Fprintln(stderr, "agentty eval: warning:", n)
	}
	var judge eval.JudgeFunc
	if opts.JudgeModel != "" {
		jo := o
		jo.Model = opts.JudgeModel
		m, _, err := app.PickModel(jo, &config.Settings{}, getenv)
		if err != nil {
			return fail(app.ExitUsage, "--judge-model: %v", err)
		}
		judge = eval.NewJudge(m)
	}
	raw := app.RawOf(stdout) // the live table sanitizes what it draws
	report := eval.NewPlainReporter(stdout)
	if app.IsTerminal(raw) {
		report = eval.NewLiveReporter(raw)
	}
	model := st.ModelName
	if opts.ReplayDir != "" {
		model = "replay of " + opts.ReplayDir
	}
	fmt.Fprintf(stdout, "%s: %d %s, model %s, %d at once\n", suite.File, len(cases), engine.Plural(len(cases), "case"), model, opts.Concurrency)
	r := &eval.Runner{Around: st.WithTrace, Suite: suite, Cases: cases, Engine: st.Engine, Config: st.Engine.Config(), Store: store, Judge: judge,
		RecordDir: opts.RecordDir, ReplayDir: opts.ReplayDir, Concurrency: opts.Concurrency, FailFast: opts.FailFast, Report: report}
	began := time.Now()
	results := r.Run(ctx)
	took := time.Since(began)
	eval.WriteSummary(stdout, results, took)
	if opts.JunitFile != "" {
		var b bytes.Buffer
		if err := eval.WriteJUnit(&b, suite, results, took, began); err != nil {
			return fail(app.ExitError, "--junit: %v", err)
		}
		if err := os.WriteFile(opts.JunitFile, b.Bytes(), 0o644); err != nil {
			return fail(app.ExitError, "--junit: %v", err)
		}
	}
	if opts.JsonFile != "" {
		rep := eval.Tally(results)
		rep.Suite, rep.File, rep.Description, rep.Model, rep.DurationS, rep.Cases = suite.Name, suite.File, suite.Description, model, took.Seconds(), results
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fail(app.ExitError, "--json: %v", err)
		}
		if err := os.WriteFile(opts.JsonFile, append(b, '\n'), 0o644); err != nil {
			return fail(app.ExitError, "--json: %v", err)
		}
	}
	if ctx.Err() != nil {
		return app.ExitCancelled
	}
	for _, c := range results {
		if c.Status != eval.Passed {
			return app.ExitError
		}
	}
	return 0
}

// judgeSuiteModel refuses the model a suite names when the suite is a file
// of an untrusted workspace, as workflow files' models are refused: a
// script: model's calls would run under the person's own policies, and any
// other would spend their key. Named on the command line, it is theirs.
func judgeSuiteModel(o app.Options, suite *eval.Suite, getenv func(string) string) error {
	if suite.Model == "" || suite.Model == offline.Name {
		return nil
	}
	wsDir := cmp.Or(o.Workspace, ".")
	if !app.Inside(suite.File, wsDir) {
		return nil
	}
	_, ws, err := config.Load(getenv, wsDir)
	if err != nil {
		return err
	}
	trusted, err := app.WorkspaceTrusted(o, app.AbsDir(wsDir), ws, getenv)
	if err != nil || trusted {
		return err
	}
	return fmt.Errorf("%s: model %q: refused: the suite is in a workspace you have not trusted (%s); pass --model %s to run it with that model yourself, or trust the folder (agentty trust %s)",
		suite.File, suite.Model, app.AbsDir(wsDir), config.ShellQuote(suite.Model), config.ShellQuote(app.AbsDir(wsDir)))
}
