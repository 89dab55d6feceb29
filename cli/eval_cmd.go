package cli

import (
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

// evalCmd runs a suite of agent test cases (eval.go, eval_run.go).
func evalCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("eval", stderr)
	fs.Usage = func() { fmt.Fprint(stderr, evalUsage) }
	var o app.Options
	register(&o, fs)
	filter := fs.String("filter", "", "only the cases whose name matches this regexp")
	concurrency := fs.Int("concurrency", 4, "runs at once")
	repeat := fs.Int("repeat", 0, "run each case this many times")
	failFast := fs.Bool("fail-fast", false, "start no more runs once a case has failed")
	junitFile := fs.String("junit", "", "write JUnit XML to this file")
	jsonFile := fs.String("json", "", "write the results as JSON to this file")
	recordDir := fs.String("record", "", "keep each case's journal in this folder")
	replayDir := fs.String("replay", "", "replay the recordings in this folder")
	judgeModel := fs.String("judge-model", "", "the model that grades judge: assertions")
	fromSession := fs.String("from-session", "", "print a case made from this session")
	fs.BoolVar(&o.Yes, "yes", false, "approve tools that ask")
	if err := parseInterspersed(fs, args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty eval: "+format+"\n", a...)
		return code
	}
	if *fromSession != "" {
		if fs.NArg() > 0 {
			return fail(app.ExitUsage, "--from-session takes no suite file")
		}
		store, err := o.Store(getenv)
		if err != nil {
			return fail(app.ExitError, "%v", err)
		}
		text, err := eval.CaseFromSession(store, *fromSession)
		if err != nil {
			return fail(app.ExitError, "%v", err)
		}
		io.WriteString(stdout, text)
		return 0
	}
	switch {
	case fs.NArg() != 1:
		return fail(app.ExitUsage, "want one suite file\n%s", evalUsage)
	case *concurrency < 1:
		return fail(app.ExitUsage, "--concurrency must be at least 1, not %d", *concurrency)
	case *repeat < 0:
		return fail(app.ExitUsage, "--repeat must be at least 1, not %d", *repeat)
	case *recordDir != "" && *replayDir != "":
		return fail(app.ExitUsage, "--record and --replay go apart: record once, then replay")
	}
	suite, err := eval.Load(fs.Arg(0))
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
	if *filter != "" {
		re, err := regexp.Compile(*filter)
		if err != nil {
			return fail(app.ExitUsage, "--filter: bad regexp: %v", err)
		}
		cases = slices.DeleteFunc(slices.Clone(cases), func(c *eval.Case) bool { return !re.MatchString(c.Name) })
		if len(cases) == 0 {
			return fail(app.ExitUsage, "no case of %s matches --filter %s", suite.File, *filter)
		}
	}
	if *judgeModel == "" {
		if err := eval.NeedsJudge(suite.File, cases); err != nil {
			return fail(app.ExitUsage, "%v", err)
		}
	}
	if *repeat > 0 {
		for i, c := range cases {
			cc := *c
			cc.Repeat = *repeat
			cases[i] = &cc
		}
	}
	if *recordDir != "" || *replayDir != "" {
		files := map[string]string{}
		for _, c := range cases {
			f := eval.FileName(c.Name)
			if other, dup := files[f]; dup {
				return fail(app.ExitUsage, "cases %q and %q would share the recording %s.jsonl: rename one", other, c.Name, f)
			}
			files[f] = c.Name
		}
	}
	if *recordDir != "" {
		if err := os.MkdirAll(*recordDir, 0o700); err != nil {
			return fail(app.ExitUsage, "--record: %v", err)
		}
	}
	if *replayDir != "" {
		if st, err := os.Stat(*replayDir); err != nil || !st.IsDir() {
			return fail(app.ExitUsage, "--replay: %s is not a folder of recordings", *replayDir)
		}
	}
	if o.Model == "" && *replayDir == "" {
		if err := judgeSuiteModel(o, suite, getenv); err != nil {
			return fail(app.ExitUsage, "%v", err)
		}
	}
	o.Model = cmp.Or(o.Model, suite.Model, "offline")
	if *replayDir != "" {
		o.Model = "offline" // never called: the recordings decide
	}
	o.Agent = cmp.Or(o.Agent, suite.Agent)
	o.MaxStepsSet = flagSet(fs, "max-steps")
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
	if *judgeModel != "" {
		jo := o
		jo.Model = *judgeModel
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
	if *replayDir != "" {
		model = "replay of " + *replayDir
	}
	fmt.Fprintf(stdout, "%s: %d %s, model %s, %d at once\n", suite.File, len(cases), engine.Plural(len(cases), "case"), model, *concurrency)
	r := &eval.Runner{Around: st.WithTrace, Suite: suite, Cases: cases, Engine: st.Engine, Config: st.Engine.Config(), Store: store, Judge: judge,
		RecordDir: *recordDir, ReplayDir: *replayDir, Concurrency: *concurrency, FailFast: *failFast, Report: report}
	began := time.Now()
	results := r.Run(ctx)
	took := time.Since(began)
	eval.WriteSummary(stdout, results, took)
	if *junitFile != "" {
		var b bytes.Buffer
		if err := eval.WriteJUnit(&b, suite, results, took, began); err != nil {
			return fail(app.ExitError, "--junit: %v", err)
		}
		if err := os.WriteFile(*junitFile, b.Bytes(), 0o644); err != nil {
			return fail(app.ExitError, "--junit: %v", err)
		}
	}
	if *jsonFile != "" {
		rep := eval.Tally(results)
		rep.Suite, rep.File, rep.Description, rep.Model, rep.DurationS, rep.Cases = suite.Name, suite.File, suite.Description, model, took.Seconds(), results
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fail(app.ExitError, "--json: %v", err)
		}
		if err := os.WriteFile(*jsonFile, append(b, '\n'), 0o644); err != nil {
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
