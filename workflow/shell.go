package workflow

import (
	"encoding/json"
	"fmt"

	"github.com/agentty/agentty/engine"
)

// ShellTool is the tool whose steps expose .stdout, .stderr and .exit.
const ShellTool = "run_shell"

// shellFields are what a template may read of a run_shell step besides a
// step's fields.
var shellFields = []string{"stdout", "stderr", "exit"}

// IsShell reports whether the step is a run_shell tool step.
func (st *Step) IsShell() bool { return st.Kind == "tool" && st.Tool == ShellTool }

// shellOut is run_shell's structured result (tools.ShellResult), as the
// history's message carries it.
type shellOut struct {
	Exit      int    `json:"exit"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	StdoutCut int    `json:"stdout_cut"`
}

// parseShell reads a run_shell call's structured result; nil when it has
// none (it failed, or the person answered in its place).
func parseShell(m engine.Message) *shellOut {
	if m.Name != ShellTool || len(m.Structured) == 0 {
		return nil
	}
	var sh shellOut
	if json.Unmarshal(m.Structured, &sh) != nil {
		return nil
	}
	return &sh
}

// addShell adds a run_shell step's stdout, stderr and exit to its fields:
// an item's, or with foreach, a list of each item's. A step not run (or
// whose command did not end on its own) has "" and no exit.
func (st *stepState) addShell(fields map[string]any, foreach bool) {
	one := func(sh *shellOut) (string, string, any) {
		if sh == nil {
			return "", "", nil
		}
		return sh.Stdout, sh.Stderr, sh.Exit
	}
	if !foreach {
		fields["stdout"], fields["stderr"], fields["exit"] = one(st.shell[-1])
		return
	}
	keys := st.itemKeys()
	outs, errs, exits := make([]string, len(keys)), make([]string, len(keys)), make([]any, len(keys))
	for i, k := range keys {
		outs[i], errs[i], exits[i] = one(st.shell[k])
	}
	fields["stdout"], fields["stderr"], fields["exit"] = outs, errs, exits
}

// shellCut is why a run_shell step fails when its stdout was cut: a
// template would read part of it as if it were all ("" when not cut).
func (st *stepState) shellCut() string {
	for _, k := range st.itemKeys() {
		if sh := st.shell[k]; sh != nil && sh.StdoutCut > 0 {
			what := "its stdout"
			if k >= 0 {
				what = fmt.Sprintf("item %d's stdout", k)
			}
			return fmt.Sprintf("%s was cut at %d bytes (%d more), so .stdout is not all of it: make the command print less (| head -n 500)", what, len(sh.Stdout), sh.StdoutCut)
		}
	}
	return ""
}
