package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/agents"
	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
)

// skillsOptions are the flags of agentty skills.
type skillsOptions struct {
	*factory
	JSON bool
}

// newSkillsCmd binds the flags of agentty skills.
func newSkillsCmd(f *factory) *cobra.Command {
	opts := &skillsOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "skills [--json]",
		Short: "List the Agent Skills (.agentty/skills, .claude/skills, .agents/skills …) and those that failed to load",
		Example: `  agentty skills
  agentty skills --json | jq '.skills[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit(skillsRun(cmd.Context(), opts))
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// skillsRun lists the skills the workspace and the person have: exit 1
// when one failed to load.
func skillsRun(ctx context.Context, opts *skillsOptions) int {
	o := *opts.App
	if o.Model == "" {
		o.Model = offline.Name // listing skills needs no model
	}
	o.MaxSteps = engine.DefaultMaxSteps
	st, err := app.Build(ctx, o, nil, opts.Getenv)
	if err != nil {
		fmt.Fprintln(opts.Err, "agentty skills:", err)
		return codeOf(err)
	}
	defer st.Close()
	s := &st.Skills
	code := 0
	if len(s.Errors) > 0 {
		code = app.ExitError
	}
	if opts.JSON {
		if c := printJSON(opts.Out, map[string]any{"skills": nonNil(s.Skills), "errors": nonNil(s.Errors), "notes": nonNil(s.Notes)}); c != 0 {
			return c
		}
		return code
	}
	printSkills(opts, s)
	return code
}

// printSkills lists the skills, the folders that failed and the notes.
func printSkills(opts *skillsOptions, s *agents.Skills) {
	out := opts.Out
	if len(s.Skills) == 0 {
		fmt.Fprintf(out, "No skills. Put one in the workspace's .agentty/skills/NAME/SKILL.md (or .claude/skills, .agents/skills), or in %s for every folder (see docs/skills.md).\n",
			filepath.Join(filepath.Dir(config.Path(opts.Getenv)), "skills"))
	}
	for i, sk := range s.Skills {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%s  (%s, %s)\n  %s\n", sk.Name, sk.Scope, sk.Dir, engine.OneLine(sk.Description, 100))
		if len(sk.Files) > 0 {
			fmt.Fprintf(out, "  files: %s\n", engine.OneLine(strings.Join(sk.Files, ", "), 100))
		}
	}
	for _, list := range []struct {
		title string
		ps    []agents.Problem
	}{{"Failed to load", s.Errors}, {"Notes", s.Notes}} {
		if len(list.ps) > 0 {
			fmt.Fprintf(out, "\n%s (%d):\n", list.title, len(list.ps))
			for _, p := range list.ps {
				fmt.Fprintf(out, "  %s\n", p)
			}
		}
	}
}
