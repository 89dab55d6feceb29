package cli

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/eval"
)

// evalOptionsFor is the setup the suite's runs get: the flags, else the
// suite's model, agent, step limit and budget (a case's own settings are
// the runner's, over these).
func evalOptionsFor(opts *evalOptions, suite *eval.Suite) (app.Options, error) {
	o := *opts.App
	live := opts.ReplayDir == "" || opts.comparing()
	if opts.comparing() && o.Model == "" && suite.Model == "" {
		return o, app.Usage(errors.New("a comparison runs the cases live: name the model with --model (the suite names none)"))
	}
	if live {
		if err := app.JudgeSuiteModel(o, suite, opts.Getenv); err != nil {
			return o, app.Usage(err)
		}
	}
	o.Model = cmp.Or(o.Model, suite.Model, "offline")
	if !live {
		o.Model = "offline" // never called: the recordings decide
	}
	o.Agent = cmp.Or(o.Agent, suite.Agent)
	if !o.MaxStepsSet && suite.MaxSteps > 0 {
		o.MaxSteps, o.MaxStepsSet = suite.MaxSteps, true
	}
	o.MaxTokens = cmp.Or(o.MaxTokens, suite.Defaults.MaxTokens)
	o.MaxCost = cmp.Or(o.MaxCost, suite.Defaults.MaxCost)
	return o, nil
}

// evalRunner is the runner of the suite's cases over the setup st, built
// with the options o: the settings the flags and the suite give every
// case, the models and workspaces the cases may ask for, checked before
// anything runs.
func evalRunner(opts *evalOptions, o app.Options, suite *eval.Suite, cases []*eval.Case, st *app.Setup) (*eval.Runner, error) {
	r := &eval.Runner{Around: st.WithTrace, Suite: suite, Cases: cases, Engine: st.Engine, Config: st.Engine.Config(),
		RecordDir: opts.RecordDir, ReplayDir: opts.ReplayDir, Concurrency: opts.Concurrency, FailFast: opts.FailFast,
		Workspace: st.WorkspaceTools, Expand: st.Command}
	r.Base = eval.Settings{Agent: o.Agent, MaxTokens: o.MaxTokens, MaxCost: o.MaxCost, Answers: suite.Defaults.Answers, Workspace: suite.Defaults.Workspace}
	if o.MaxStepsSet {
		r.Base.MaxSteps = o.MaxSteps
	}
	if opts.ReplayDir == "" || opts.comparing() {
		models, err := app.CaseModels(o, opts.Getenv)
		if err != nil {
			return nil, err
		}
		r.Models = models
	}
	return r, r.Check()
}

// suiteAgentError is err of a setup whose agent came from the suite's
// agent: field, not --agent: said at the suite's line.
func suiteAgentError(opts *evalOptions, suite *eval.Suite, err error) error {
	if opts.App.Agent != "" || suite.Agent == "" || !strings.HasPrefix(err.Error(), "--agent ") {
		return err
	}
	msg := fmt.Sprintf("%s:%d: agent: %s", suite.File, suite.AgentLine, strings.TrimPrefix(err.Error(), "--agent "))
	// The suite beside its workspace's agents, run from elsewhere.
	dir := filepath.Dir(suite.File)
	if app.AbsDir(dir) != app.AbsDir(cmp.Or(opts.App.Workspace, ".")) {
		if st, serr := os.Stat(filepath.Join(dir, ".agentty", "agents")); serr == nil && st.IsDir() {
			msg += fmt.Sprintf("; the suite's folder has agents of its own: run it with --workspace %s", config.ShellQuote(dir))
		}
	}
	return errors.New(msg)
}
