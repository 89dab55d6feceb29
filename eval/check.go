package eval

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentty/agentty/agents"
	"github.com/agentty/agentty/config"
)

// Check finds, before any case runs (and spends), a case whose agent is
// not defined, or whose model (live) cannot be had: each an error naming
// the file, the line and the field, with the nearest agent's name when
// one is within two edits.
func (r *Runner) Check() error {
	var known []string
	for _, a := range r.Config.Agents {
		known = append(known, a.Name)
	}
	var errs SuiteErrors
	for _, c := range r.Cases {
		s := c.Settings
		if s.Agent != "" && !slices.Contains(known, agents.NormalName(s.Agent)) {
			msg := fmt.Sprintf("no agent %q here (agents: %s)", s.Agent, strings.Join(known, ", "))
			if len(known) == 0 {
				msg = fmt.Sprintf("no agent %q here: no agent is defined (.agentty/agents/NAME.md)", s.Agent)
			}
			if near := nearestName(s.Agent, known); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			errs = append(errs, fileError{r.Suite.File, s.Lines["agent"], c.at + ".agent", msg})
		}
		if s.Model != "" && r.ReplayDir == "" && r.Models != nil {
			if _, _, err := r.Models(s.Model); err != nil {
				errs = append(errs, fileError{r.Suite.File, s.Lines["model"], c.at + ".model", oneLineErr(err)})
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// nearestName is the name of names within two edits of s ("" for none).
func nearestName(s string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := config.EditDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}
