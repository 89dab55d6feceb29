package app

// Custom slash commands (commands/): loaded with the setup, and made a
// run's prompt and engine in every front end (the console, run, ACP,
// evals) the same way.

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentty/agentty/commands"
	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/ui"
)

// commandKit is what a command's run is made with: the commands, and
// the options, settings and environment that pick a command's model.
type commandKit struct {
	set    commands.Set
	o      Options
	cfg    *config.Settings
	getenv func(string) string
}

// loadCommands reads the custom commands of the workspace (confined to
// it; trusted as it is) and the person's; what failed or was left out is
// in st.Notices, each with its file and line.
func (st *Setup) loadCommands(o Options, cfg *config.Settings, wsDir string, ws *config.Workspace, getenv func(string) string) error {
	wsAbs := AbsDir(wsDir)
	trusted, err := WorkspaceTrusted(o, wsAbs, ws, getenv)
	if err != nil {
		return err
	}
	set := commands.Load(commands.Places(wsDir, wsAbs, trusted, getenv), ui.BuiltinCommands())
	st.commands = &commandKit{set: set, o: o, cfg: cfg, getenv: getenv}
	for _, p := range set.Errors {
		st.Notices = append(st.Notices, "command file "+p.String()+" (not loaded)")
	}
	for _, p := range set.Notes {
		st.Notices = append(st.Notices, "command file "+p.String())
	}
	return nil
}

// Commands are the custom commands the setup loaded (nil for none).
func (st *Setup) Commands() []commands.Command {
	if st.commands == nil {
		return nil
	}
	return st.commands.set.Commands
}

// Command makes task, when it is "/name args" for a custom command, that
// command's run: its expanded prompt with the files its @paths name
// attached (as the console's @ attaches them, through the workspace), and
// an engine on base with the command's model and allowed-tools for that
// run alone. Any other task comes back as it is, on base. Notes say what
// was left out (a model refused, a tool agentty lacks, a file not
// attached, shell lines not run).
func (st *Setup) Command(ctx context.Context, base *engine.Engine, task string) (*engine.Engine, string, []string, error) {
	name, args, ok := commands.Split(task)
	var c *commands.Command
	if ok && st.commands != nil {
		c, ok = st.commands.set.Find(name)
	}
	if !ok || c == nil {
		return base, task, nil, nil
	}
	x := c.Expand(args)
	notes := x.Notes
	var b strings.Builder
	b.WriteString(x.Prompt)
	for _, p := range x.Attach {
		text, err := st.attach(ctx, p)
		if err != nil {
			notes = append(notes, fmt.Sprintf("/%s: @%s not attached: %v", c.Name, p, err))
			continue
		}
		fmt.Fprintf(&b, "%s%s\">\n%s\n</attached>", engine.AttachedMarker, strings.ReplaceAll(p, `"`, "'"), strings.TrimRight(text, "\n"))
	}
	ec := base.Config()
	changed, more := st.commands.model(c, &ec)
	notes = append(notes, more...)
	if len(c.AllowedTools) > 0 {
		reg, more, err := commandTools(c, ec.Tools)
		if err != nil {
			return nil, "", notes, err
		}
		ec.Tools, changed, notes = reg, true, append(notes, more...)
	}
	if !changed {
		return base, b.String(), notes, nil
	}
	e := engine.New(ec)
	return e, b.String(), notes, e.Err()
}

// attach reads what @p attaches (read_file's confinement and bounds).
func (st *Setup) attach(ctx context.Context, p string) (string, error) {
	if st.ws == nil {
		return "", fmt.Errorf("no workspace is open")
	}
	return st.ws.Attach(ctx, p)
}

// model sets ec's model to the command's, when it names one that may be
// used here: Claude Code's aliases and model ids inherit the session's
// (noted), an untrusted workspace's command picks none (noted), a model
// that cannot be made here is noted and inherits. changed says whether
// ec changed.
func (k *commandKit) model(c *commands.Command, ec *engine.Config) (bool, []string) {
	m := c.Model
	switch {
	case m == "" || m == "inherit" || m == ec.ModelName:
		return false, nil
	case m == "sonnet" || m == "opus" || m == "haiku" || strings.HasPrefix(m, "claude-"):
		return false, []string{fmt.Sprintf("/%s: model %s is Claude Code's: the run uses the session's model (%s)", c.Name, m, ec.ModelName)}
	case !c.Trusted:
		return false, []string{fmt.Sprintf("/%s: model %s refused: the workspace is not trusted, so its commands use the session's model (agentty trust)", c.Name, m)}
	}
	o := k.o
	o.Model = m
	if strings.HasPrefix(m, "script:") && !filepath.IsAbs(strings.TrimPrefix(m, "script:")) {
		o.Model = "script:" + filepath.Join(filepath.Dir(c.File), strings.TrimPrefix(m, "script:"))
	}
	model, name, err := PickModel(o, k.cfg, k.getenv)
	if err != nil {
		return false, []string{fmt.Sprintf("/%s: model %s cannot be used here (%v): the run uses the session's model", c.Name, m, err)}
	}
	ec.Model, ec.ModelName = model, name
	return true, nil
}

// commandTools is the registry of the tools of reg that the command's
// allowed-tools name (Claude Code's words, mapped as agent files' are; a
// specifier such as Bash(git add:*) stands for the whole tool, with its
// approvals as they are). It only narrows: no approval is loosened. The
// words that match nothing are noted.
func commandTools(c *commands.Command, reg *engine.Registry) (*engine.Registry, []string, error) {
	var notes []string
	var names []string
	var all []engine.Tool
	if reg != nil {
		names, all = reg.Names(), reg.Tools()
	}
	keep := map[string]bool{}
	for _, w := range c.AllowedTools {
		word, _, _ := strings.Cut(w, "(")
		g := config.ClaudeToolGlob(strings.TrimSpace(word))
		n := 0
		for _, name := range names {
			if ok, _ := path.Match(g, name); ok || g == "skill" && name == "read_skill_file" {
				keep[name] = true
				n++
			}
		}
		if n == 0 {
			notes = append(notes, fmt.Sprintf("/%s: allowed-tools %s: no such tool in this session; left out", c.Name, w))
		}
	}
	var tools []engine.Tool
	for _, t := range all {
		if keep[t.Name] {
			tools = append(tools, t)
		}
	}
	out, err := engine.NewRegistry(tools...)
	if err != nil {
		return nil, notes, fmt.Errorf("/%s: allowed-tools: %w", c.Name, err)
	}
	slices.Sort(notes)
	return out, slices.Compact(notes), nil
}
