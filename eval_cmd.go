package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/sessions"
	"go.yaml.in/yaml/v3"
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
	var o options
	o.register(fs)
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
	fs.BoolVar(&o.yes, "yes", false, "approve tools that ask")
	if err := parseInterspersed(fs, args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty eval: "+format+"\n", a...)
		return code
	}
	if *fromSession != "" {
		if fs.NArg() > 0 {
			return fail(exitUsage, "--from-session takes no suite file")
		}
		store, err := o.store(getenv)
		if err != nil {
			return fail(exitError, "%v", err)
		}
		text, err := caseFromSession(store, *fromSession)
		if err != nil {
			return fail(exitError, "%v", err)
		}
		io.WriteString(stdout, text)
		return 0
	}
	switch {
	case fs.NArg() != 1:
		return fail(exitUsage, "want one suite file\n%s", evalUsage)
	case *concurrency < 1:
		return fail(exitUsage, "--concurrency must be at least 1, not %d", *concurrency)
	case *repeat < 0:
		return fail(exitUsage, "--repeat must be at least 1, not %d", *repeat)
	case *recordDir != "" && *replayDir != "":
		return fail(exitUsage, "--record and --replay go apart: record once, then replay")
	}
	suite, err := loadSuite(fs.Arg(0))
	if err != nil {
		var es suiteErrors
		if errors.As(err, &es) {
			for _, e := range es {
				fmt.Fprintf(stderr, "agentty eval: %v\n", e)
			}
			return exitUsage
		}
		return fail(exitUsage, "%v", err)
	}
	cases := suite.Cases
	if *filter != "" {
		re, err := regexp.Compile(*filter)
		if err != nil {
			return fail(exitUsage, "--filter: bad regexp: %v", err)
		}
		cases = slices.DeleteFunc(slices.Clone(cases), func(c *evalCase) bool { return !re.MatchString(c.Name) })
		if len(cases) == 0 {
			return fail(exitUsage, "no case of %s matches --filter %s", suite.File, *filter)
		}
	}
	if *judgeModel == "" {
		for _, c := range cases {
			for _, a := range c.Asserts {
				if j := a.find("judge"); j != nil {
					return fail(exitUsage, "%s:%d: %s: judge needs --judge-model", suite.File, j.Line, j.Field)
				}
			}
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
			f := safeFileName(c.Name)
			if other, dup := files[f]; dup {
				return fail(exitUsage, "cases %q and %q would share the recording %s.jsonl: rename one", other, c.Name, f)
			}
			files[f] = c.Name
		}
	}
	if *recordDir != "" {
		if err := os.MkdirAll(*recordDir, 0o700); err != nil {
			return fail(exitUsage, "--record: %v", err)
		}
	}
	if *replayDir != "" {
		if st, err := os.Stat(*replayDir); err != nil || !st.IsDir() {
			return fail(exitUsage, "--replay: %s is not a folder of recordings", *replayDir)
		}
	}
	if o.model == "" && *replayDir == "" {
		if err := judgeSuiteModel(o, suite, getenv); err != nil {
			return fail(exitUsage, "%v", err)
		}
	}
	o.model = cmpOr(o.model, suite.Model, "offline")
	if *replayDir != "" {
		o.model = "offline" // never called: the recordings decide
	}
	o.agent = cmpOr(o.agent, suite.Agent)
	o.maxStepsSet = flagSet(fs, "max-steps")
	if !o.maxStepsSet && suite.MaxSteps > 0 {
		o.maxSteps, o.maxStepsSet = suite.MaxSteps, true
	}
	store, err := o.store(getenv)
	if err != nil {
		return fail(exitError, "%v", err)
	}
	st, err := build(ctx, o, evalGate{yes: o.yes}, getenv)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	defer st.Close()
	for _, n := range st.notices {
		fmt.Fprintln(stderr, "agentty eval: warning:", n)
	}
	var judge judgeFunc
	if *judgeModel != "" {
		jo := o
		jo.model = *judgeModel
		m, _, err := pickModel(jo, &config{}, getenv)
		if err != nil {
			return fail(exitUsage, "--judge-model: %v", err)
		}
		judge = newJudge(m)
	}
	raw := stdout
	if s, ok := stdout.(*safeWriter); ok {
		raw = s.w // the live table sanitizes what it draws
	}
	var report evalReporter = &plainReporter{w: stdout}
	if isTerminal(raw) {
		report = newLiveReporter(raw)
	}
	model := st.modelName
	if *replayDir != "" {
		model = "replay of " + *replayDir
	}
	fmt.Fprintf(stdout, "%s: %d %s, model %s, %d at once\n", suite.File, len(cases), plural(len(cases), "case"), model, *concurrency)
	r := &evalRunner{around: st.withTrace, suite: suite, cases: cases, eng: st.engine, cfg: st.engine.Config(), store: store, judge: judge,
		recordDir: *recordDir, replayDir: *replayDir, concurrency: *concurrency, failFast: *failFast, report: report}
	began := time.Now()
	results := r.run(ctx)
	took := time.Since(began)
	writeSummary(stdout, results, took)
	if *junitFile != "" {
		var b bytes.Buffer
		if err := writeJUnit(&b, suite, results, took, began); err != nil {
			return fail(exitError, "--junit: %v", err)
		}
		if err := os.WriteFile(*junitFile, b.Bytes(), 0o644); err != nil {
			return fail(exitError, "--junit: %v", err)
		}
	}
	if *jsonFile != "" {
		rep := tally(results)
		rep.Suite, rep.File, rep.Description, rep.Model, rep.DurationS, rep.Cases = suite.Name, suite.File, suite.Description, model, took.Seconds(), results
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fail(exitError, "--json: %v", err)
		}
		if err := os.WriteFile(*jsonFile, append(b, '\n'), 0o644); err != nil {
			return fail(exitError, "--json: %v", err)
		}
	}
	if ctx.Err() != nil {
		return exitCancelled
	}
	for _, c := range results {
		if c.Status != evalPass {
			return exitError
		}
	}
	return 0
}

func cmpOr(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// find returns the assertion of kind within a (a itself, or what it
// negates), or nil.
func (a *assertion) find(kind string) *assertion {
	for x := a; x != nil; x = x.not {
		if x.Kind == kind {
			return x
		}
	}
	return nil
}

// evalGate never pauses; it approves tools that ask with --yes, and denies
// them otherwise (the denial is in the journal, for the assertions).
type evalGate struct{ yes bool }

func (g evalGate) Stop(engine.Pending) bool { return false }

func (g evalGate) Wait(context.Context, engine.Pending) (engine.Verdict, error) {
	if g.yes {
		return engine.Verdict{Action: engine.Proceed}, nil
	}
	return engine.Verdict{Action: engine.Deny}, nil
}

// caseFromSession writes a case (YAML, a list item to paste under cases:)
// from a session: its tasks, the facts given before its first run, and
// assertions on a distinctive part of the last answer, the tools it used
// and its steps.
func caseFromSession(store *sessions.Store, id string) (string, error) {
	l, err := store.Load(id)
	if l == nil {
		return "", err
	}
	var tasks, tools []string
	var memory []kv
	var last *engine.RunFinished
	ran := false
	for _, ev := range l.Events {
		switch d := ev.Data.(type) {
		case *engine.RunStarted:
			if ev.ParentRun == "" {
				tasks = append(tasks, d.Task)
				ran = true
			}
		case *engine.MemoryChanged:
			if !ran && d.Op == engine.MemorySet {
				memory = append(memory, kv{d.Key, d.Value})
			}
		case *engine.Decided:
			for _, c := range d.ToolCalls {
				if !slices.Contains(tools, c.Name) {
					tools = append(tools, c.Name)
				}
			}
		case *engine.RunFinished:
			if ev.ParentRun == "" {
				last = d
			}
		}
	}
	if len(tasks) == 0 {
		return "", fmt.Errorf("session %s has no runs to make a case of", id)
	}
	if last == nil || last.StopReason != engine.StopAnswered {
		return "", fmt.Errorf("session %s's last run did not answer: there is nothing to assert on", id)
	}
	name := l.Meta.Title
	if _, after, ok := strings.Cut(name, " / "); ok && strings.HasPrefix(name, "eval: ") {
		name = after
	}
	c := &yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, v *yaml.Node) {
		c.Content = append(c.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	}
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
	add("name", str(cmpOr(engine.OneLine(name, 60), id)))
	if len(tasks) == 1 {
		add("task", str(tasks[0]))
	} else {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, t := range tasks {
			seq.Content = append(seq.Content, str(t))
		}
		add("turns", seq)
	}
	if len(memory) > 0 {
		m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		for _, f := range memory {
			m.Content = append(m.Content, str(f.Key), str(f.Value))
		}
		add("memory", m)
	}
	asserts := &yaml.Node{Kind: yaml.SequenceNode}
	one := func(kind string, v *yaml.Node) {
		asserts.Content = append(asserts.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{str(kind), v}})
	}
	if part := distinctive(last.Answer, tasks[len(tasks)-1]); part != "" {
		one("answer_contains", &yaml.Node{Kind: yaml.ScalarNode, Value: part, Style: yaml.DoubleQuotedStyle})
	}
	for _, t := range tools {
		one("tool_called", str(t))
	}
	one("max_steps", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(max(1, l.Session.Steps))})
	add("assert", asserts)
	doc := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{c}}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# a case from session %s: paste it under cases: in a suite\n", id)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	enc.Close()
	return b.String(), nil
}

// distinctive picks a part of an answer to assert on: its last number, or
// else its longest word that is not in the task and not a common one, or
// else the answer's first line.
func distinctive(answer, task string) string {
	words := strings.FieldsFunc(answer, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' && r != '-' && r != '_'
	})
	for i := range words {
		words[i] = strings.Trim(words[i], ".-_")
	}
	for i := len(words) - 1; i >= 0; i-- {
		w := words[i]
		if w != "" && strings.IndexFunc(w, unicode.IsDigit) >= 0 && !strings.Contains(task, w) {
			return w
		}
	}
	lower := strings.ToLower(task)
	best := ""
	for _, w := range words {
		if len([]rune(w)) < 3 || commonWords[strings.ToLower(w)] || strings.Contains(lower, strings.ToLower(w)) {
			continue
		}
		if len(w) > len(best) {
			best = w
		}
	}
	if best != "" {
		return best
	}
	first, _, _ := strings.Cut(strings.TrimSpace(answer), "\n")
	return engine.Clip(strings.TrimSpace(first), 60)
}

// commonWords are words too common to tell one answer from another.
var commonWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for are but not you your yours all any can her was one our out has have had
		him his how its may new now see who did get let put say she too use that this with from they them then than there
		their what when where which will would could should about into over also just only some such very here is it be
		i am as at by of on or to we he me my no so up us an a in do if got know remembered remember`) {
		m[w] = true
	}
	return m
}()

// judgeSuiteModel refuses the model a suite names when the suite is a file
// of an untrusted workspace, as workflow files' models are refused: a
// script: model's calls would run under the person's own policies, and any
// other would spend their key. Named on the command line, it is theirs.
func judgeSuiteModel(o options, suite *evalSuite, getenv func(string) string) error {
	if suite.Model == "" || suite.Model == offline.Name {
		return nil
	}
	wsDir := cmpOr(o.workspace, ".")
	if !inside(suite.File, wsDir) {
		return nil
	}
	_, ws, err := loadConfig(getenv, wsDir)
	if err != nil {
		return err
	}
	trusted, err := workspaceTrusted(o, absDir(wsDir), ws, getenv)
	if err != nil || trusted {
		return err
	}
	return fmt.Errorf("%s: model %q: refused: the suite is in a workspace you have not trusted (%s); pass --model %s to run it with that model yourself, or trust the folder (agentty trust %s)",
		suite.File, suite.Model, absDir(wsDir), shellQuote(suite.Model), shellQuote(absDir(wsDir)))
}
