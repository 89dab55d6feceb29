package app

// Custom slash commands (commands/): loaded with the setup, and made a
// run's prompt and engine in every front end (the console, run, ACP,
// evals) the same way.

import (
	"context"
	"fmt"

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
	places := commands.Places(wsDir, wsAbs, trusted, getenv)
	for _, d := range st.plugins.Commands() { // named PLUGIN:name, as Claude Code names them
		places = append(places, commands.Place{Dir: d.Path, One: d.One, Prefix: d.Plugin + ":", Source: "plugin " + d.Plugin, Root: d.Root, Trusted: true})
	}
	set := commands.Load(places, ui.BuiltinCommands())
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
// attached, shell lines not run). A /name that is no command but one
// within two edits of a command's name, or a plugin's (PLUGIN:name), is
// an error: a typo is not sent to the model as the task.
func (st *Setup) Command(ctx context.Context, base *engine.Engine, task string) (*engine.Engine, string, []string, error) {
	name, args, ok := commands.Split(task)
	var c *commands.Command
	if ok && st.commands != nil {
		var found bool
		if c, found = st.commands.set.Find(name); !found {
			return base, task, nil, st.commands.set.Unknown(name) // a typo is refused; a path goes on as written
		}
	}
	if !ok || c == nil {
		return base, task, nil, nil
	}
	x := c.Expand(args)
	task, more := c.Attached(x.Prompt, x.Attach, func(p string) (string, error) { return st.attach(ctx, p) })
	notes := append(x.Notes, more...)
	ec := base.Config()
	changed := false
	if m, note := c.ModelFor(ec.ModelName); note != "" {
		notes = append(notes, note)
	} else if m != "" {
		o := st.commands.o
		o.Model = m
		model, name, err := PickModel(o, st.commands.cfg, st.commands.getenv)
		if err != nil {
			notes = append(notes, fmt.Sprintf("/%s: model %s cannot be used here (%v): the run uses the session's model", c.Name, m, err))
		} else {
			ec.Model, ec.ModelName, changed = model, name, true
		}
	}
	if len(c.AllowedTools) > 0 {
		reg, more, err := c.Tools(ec.Tools)
		if err != nil {
			return nil, "", notes, err
		}
		ec.Tools, changed, notes = reg, true, append(notes, more...)
	}
	if !changed {
		return base, task, notes, nil
	}
	e := engine.New(ec)
	return e, task, notes, e.Err()
}

// attach reads what @p attaches (read_file's confinement and bounds).
func (st *Setup) attach(ctx context.Context, p string) (string, error) {
	if st.ws == nil {
		return "", fmt.Errorf("no workspace is open")
	}
	return st.ws.Attach(ctx, p)
}
