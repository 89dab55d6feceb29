package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/eval"
)

const evalUsage = `usage: agentty eval [flags] FILE.yaml
       agentty eval --from-session ID

  --model NAME         the model of every case (default: the suite's model:, else offline)
  --filter REGEXP      only the cases whose name matches
  --concurrency N      runs at once (default 4; a script: model plays each run from its
                       first turn, so only the order of the lines changes)
  --repeat N           run each case N times (default: each case's repeat:)
  --fail-fast          start no more runs once a case has failed
  --junit FILE         write JUnit XML (for CI)
  --json FILE          write the results as JSON
  --record DIR         keep each case's journal as DIR/CASE.jsonl, and what it ran with
                       as DIR/CASE.settings.json (a replay needs no flags)
  --replay DIR         run each case with the decisions recorded in DIR (no model call)
  --compare            with --replay: run the cases again live (--model) with the recorded
                       tool results where the calls match; show old and new side by side
  --variants A,B,…     run the cases with each prompt file as the agent's system prompt:
                       the prompt × case matrix (with --replay: recorded tool results)
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
	JUnitFile   string
	JSONFile    string
	RecordDir   string
	ReplayDir   string
	Compare     bool
	Variants    []string
	prompts     []string // the --variants files' prompts, read by evalCompareUsage
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
  agentty eval evals.yaml --replay rec/ --compare --model gpt-4o-mini
  agentty eval evals.yaml --replay rec/ --variants prompt-a.md,prompt-b.md
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
	fs.StringVar(&opts.JUnitFile, "junit", "", "write JUnit XML to this file")
	fs.StringVar(&opts.JSONFile, "json", "", "write the results as JSON to this file")
	fs.StringVar(&opts.RecordDir, "record", "", "keep each case's journal in this folder")
	fs.StringVar(&opts.ReplayDir, "replay", "", "replay the recordings in this folder")
	fs.BoolVar(&opts.Compare, "compare", false, "with --replay: run the cases live too and compare")
	fs.StringSliceVar(&opts.Variants, "variants", nil, "prompt files to compare, comma-separated")
	fs.StringVar(&opts.JudgeModel, "judge-model", "", "the model that grades judge: assertions")
	fs.StringVar(&opts.FromSession, "from-session", "", "print a case made from this session")
	fs.BoolVar(&f.App.Yes, "yes", false, "approve tools that ask")
	return cmd
}

// evalRun runs a suite of agent test cases (package eval) and reports
// them; exit 1 if any failed, 2 for bad usage or a bad suite file.
func evalRun(ctx context.Context, opts *evalOptions) int {
	fail := func(err error) int { return evalFail(opts, err) }
	if opts.FromSession != "" {
		if err := evalFromSession(opts); err != nil {
			return fail(err)
		}
		return 0
	}
	suite, cases, err := evalCases(opts)
	if err != nil {
		return fail(err)
	}
	o, err := evalOptionsFor(opts, suite)
	if err != nil {
		return fail(err)
	}
	store, err := o.Store(opts.Getenv)
	if err != nil {
		return fail(err)
	}
	st, err := app.Build(ctx, o, eval.Gate{Yes: o.Yes}, opts.Getenv)
	if err != nil {
		return fail(app.Usage(suiteAgentError(opts, suite, err)))
	}
	defer st.Close()
	for _, n := range st.Notices {
		fmt.Fprintln(opts.Err, "agentty eval: warning:", n)
	}
	var judge eval.JudgeFunc
	if opts.JudgeModel != "" {
		jo := o
		jo.Model = opts.JudgeModel
		m, _, err := app.PickModel(jo, &config.Settings{}, opts.Getenv)
		if err != nil {
			return fail(app.Usage(fmt.Errorf("--judge-model: %w", err)))
		}
		judge = eval.NewJudge(m)
	}
	stdout := opts.Out
	raw := app.RawOf(stdout) // the live table sanitizes what it draws
	report := eval.NewPlainReporter(stdout)
	if app.IsTerminal(raw) {
		report = eval.NewLiveReporter(raw, app.Sanitize)
	}
	model := st.ModelName
	if opts.ReplayDir != "" && !opts.comparing() {
		model = "replay of " + opts.ReplayDir
	}
	r, err := evalRunner(opts, o, suite, cases, st)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "%s: %d %s, model %s, %d at once\n", suite.File, len(cases), engine.Plural(len(cases), "case"), model, opts.Concurrency)
	r.Store, r.Judge, r.Report = store, judge, report
	if opts.comparing() {
		return evalCompare(ctx, opts, r, st.Engine.Config())
	}
	began := time.Now()
	results := r.Run(ctx)
	took := time.Since(began)
	eval.WriteSummary(stdout, results, took)
	if err := eval.WriteReports(eval.ReportFiles{JUnit: opts.JUnitFile, JSON: opts.JSONFile}, suite, model, results, began, took); err != nil {
		return fail(err)
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

// evalFail says err, and is its exit code: 2 for a bad suite or usage.
func evalFail(opts *evalOptions, err error) int {
	if es, ok := errors.AsType[eval.SuiteErrors](err); ok {
		for _, e := range es {
			fmt.Fprintf(opts.Err, "agentty eval: %v\n", e)
		}
		return app.ExitUsage
	}
	fmt.Fprintf(opts.Err, "agentty eval: %v\n", err)
	if errors.As(err, new(app.UsageError)) {
		return app.ExitUsage
	}
	return app.ExitError
}

// evalFromSession prints a case made from the session --from-session
// names.
func evalFromSession(opts *evalOptions) error {
	if len(opts.Args) > 0 {
		return app.Usage(errors.New("--from-session takes no suite file"))
	}
	store, err := opts.App.Store(opts.Getenv)
	if err != nil {
		return err
	}
	schemaOf := func(agent string) json.RawMessage {
		files, err := app.AgentDefs(*opts.App, opts.Getenv)
		if err != nil {
			return nil
		}
		for _, d := range files.Defs {
			if d.Name == agent {
				return d.OutputSchema
			}
		}
		return nil
	}
	text, err := eval.CaseFromSession(store, opts.FromSession, schemaOf)
	if err != nil {
		return err
	}
	_, err = io.WriteString(opts.Out, text)
	return err
}

// evalCases loads the suite and picks its cases as the flags say (every
// error is one of usage).
func evalCases(opts *evalOptions) (*eval.Suite, []*eval.Case, error) {
	usage := func(format string, a ...any) (*eval.Suite, []*eval.Case, error) {
		return nil, nil, app.Usage(fmt.Errorf(format, a...))
	}
	switch {
	case len(opts.Args) != 1:
		return usage("want one suite file\n%s", evalUsage)
	case opts.Concurrency < 1:
		return usage("--concurrency must be at least 1, not %d", opts.Concurrency)
	case opts.Repeat < 0:
		return usage("--repeat must be at least 1, not %d", opts.Repeat)
	case opts.RecordDir != "" && opts.ReplayDir != "":
		return usage("--record and --replay go apart: record once, then replay")
	}
	if err := evalCompareUsage(opts); err != nil {
		return nil, nil, app.Usage(err)
	}
	suite, err := eval.Load(opts.Args[0])
	if err != nil {
		if _, ok := errors.AsType[eval.SuiteErrors](err); ok {
			return nil, nil, err
		}
		return nil, nil, app.Usage(err)
	}
	cases := suite.Cases
	if opts.Filter != "" {
		re, err := regexp.Compile(opts.Filter)
		if err != nil {
			return usage("--filter: bad regexp: %v", err)
		}
		cases = slices.DeleteFunc(slices.Clone(cases), func(c *eval.Case) bool { return !re.MatchString(c.Name) })
		if len(cases) == 0 {
			return usage("no case of %s matches --filter %s", suite.File, opts.Filter)
		}
	}
	if opts.JudgeModel == "" {
		if err := eval.NeedsJudge(suite.File, cases); err != nil {
			return nil, nil, app.Usage(err)
		}
	}
	if opts.Repeat > 0 {
		for i, c := range cases {
			cc := *c
			cc.Repeat = opts.Repeat
			cases[i] = &cc
		}
	}
	if err := evalRecordings(opts, cases); err != nil {
		return nil, nil, app.Usage(err)
	}
	return suite, cases, nil
}

// evalRecordings checks --record and --replay: the cases' recordings have
// names of their own, and the folders are there.
func evalRecordings(opts *evalOptions, cases []*eval.Case) error {
	if opts.RecordDir == "" && opts.ReplayDir == "" {
		return nil
	}
	files := map[string]string{}
	for _, c := range cases {
		f := eval.FileName(c.Name)
		if other, dup := files[f]; dup {
			return fmt.Errorf("cases %q and %q would share the recording %s.jsonl: rename one", other, c.Name, f)
		}
		files[f] = c.Name
	}
	if opts.RecordDir != "" {
		if err := os.MkdirAll(opts.RecordDir, 0o700); err != nil {
			return fmt.Errorf("--record: %v", err)
		}
	}
	if opts.ReplayDir != "" {
		if st, err := os.Stat(opts.ReplayDir); err != nil || !st.IsDir() {
			return fmt.Errorf("--replay: %s is not a folder of recordings", opts.ReplayDir)
		}
	}
	return nil
}
