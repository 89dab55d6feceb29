package app

import (
	"cmp"
	"fmt"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine/offline"
	"github.com/agentty/agentty/eval"
)

// JudgeSuiteModel refuses the model a suite names when the suite is a file
// of an untrusted workspace, as workflow files' models are refused: a
// script: model's calls would run under the person's own policies, and any
// other would spend their key. Named on the command line, it is theirs.
func JudgeSuiteModel(o Options, suite *eval.Suite, getenv func(string) string) error {
	if suite.Model == "" || suite.Model == offline.Name {
		return nil
	}
	wsDir := cmp.Or(o.Workspace, ".")
	if !Inside(suite.File, wsDir) {
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
	return fmt.Errorf("%s: model %q: refused: the suite is in a workspace you have not trusted (%s); pass --model %s to run it with that model yourself, or trust the folder (agentty trust %s)",
		suite.File, suite.Model, AbsDir(wsDir), config.ShellQuote(suite.Model), config.ShellQuote(AbsDir(wsDir)))
}
