package app

import (
	"cmp"
	"fmt"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/eval"
	"github.com/agentty/agentty/tools"
)

// JudgeSuiteModel refuses the model a suite names when the suite is a file
// of an untrusted workspace, as workflow files' models are refused: a
// script: model's calls would run under the person's own policies, and any
// other would spend their key. Named on the command line, it is theirs.
// A case's model is judged so too; with --model, only the cases' own.
func JudgeSuiteModel(o Options, suite *eval.Suite, getenv func(string) string) error {
	model, at, fix := "", "", ""
	for _, c := range suite.Cases {
		if m := c.Settings.Model; m != "" && m != offline.Name {
			model, at = m, fmt.Sprintf(":%d", c.Settings.Lines["model"]) // a case's own: --model does not change it
		}
	}
	if o.Model == "" && suite.Model != "" && suite.Model != offline.Name {
		model, at, fix = suite.Model, "", fmt.Sprintf("pass --model %s to run it with that model yourself, or ", config.ShellQuote(suite.Model))
	}
	wsDir := cmp.Or(o.Workspace, ".")
	if model == "" || !Inside(suite.File, wsDir) {
		return nil
	}
	_, ws, err := config.Load(getenv, wsDir)
	if err != nil {
		return err
	}
	trusted, err := WorkspaceTrusted(o, AbsDir(wsDir), ws, getenv)
	if err != nil || trusted {
		return err
	}
	return fmt.Errorf("%s%s: model %q: refused: the suite is in a workspace you have not trusted (%s); %strust the folder (agentty trust %s)",
		suite.File, at, model, AbsDir(wsDir), fix, config.ShellQuote(AbsDir(wsDir)))
}

// CaseModels picks the models the cases of a suite name as the setup's
// is picked (with the configuration's base URL).
func CaseModels(o Options, getenv func(string) string) (func(name string) (engine.Model, string, error), error) {
	cfg, _, _, _, err := settings(o, cmp.Or(o.Workspace, "."), getenv)
	if err != nil {
		return nil, err
	}
	return func(name string) (engine.Model, string, error) {
		mo := o
		mo.Model = name
		return PickModel(mo, cfg, getenv)
	}, nil
}

// WorkspaceTools are the setup's tools that work in its workspace (the
// file tools and the shell) made again for the folder dir, redacted as
// the setup's are; release lets dir go. (An eval case's workspace: the
// caller offers only those the setup offers.)
func (st *Setup) WorkspaceTools(dir string) (ts []engine.Tool, release func(), err error) {
	ws, err := tools.OpenWorkspace(dir)
	if err != nil {
		return nil, nil, err
	}
	ts = []engine.Tool{ws.ReadFile(), ws.ListDir(), ws.SearchFiles(), ws.WriteFile(), ws.EditFile(), ws.RunShell(0, st.shellEnv...)}
	for i := range ts {
		ts[i] = st.redact.Tool(ts[i])
	}
	return ts, func() { ws.Close() }, nil
}
