package console

// A console's settings in the session's journal: the first run a console
// starts on a session (and each run after a setting changed) carries them
// in its run_started (engine.Settings): the folder, the model, whether the
// shell is allowed, step mode and breakpoints, the agent. A session opened
// again (--resume, the picker) comes back with them.

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
)

// settings are what b's next run is worked on with.
func (b *backend) settings() engine.Settings {
	c := b.con
	ws, err := filepath.Abs(cmp.Or(c.Opts.Workspace, "."))
	if err != nil {
		ws = cmp.Or(c.Opts.Workspace, ".")
	}
	_, shell := c.Setup.Registry().Lookup("run_shell")
	st := engine.Settings{Workspace: ws, Model: cmp.Or(b.session.Model, b.model, c.Setup.ModelName), AllowShell: shell,
		Agent: b.session.Agent, Origin: "console"}
	if g := c.gate; g != nil {
		st.Step = g.Stepping()
		for _, br := range g.Breaks() {
			st.Breaks = append(st.Breaks, br.String())
		}
		st.Allowed = g.Permissions(b.journal.ID)
	}
	if prev := b.session.Settings(); prev.Origin != "" {
		st.Origin = prev.Origin // what made the session stays said
	}
	return st
}

// restore turns on what session s was last worked on with and this
// console does not have: step mode and breakpoints on the gate, and, when
// the sessions are this machine's files, the shell and the approvals
// given for the session. It returns what it
// says of it; a flag given on the command line wins (flags: what the
// command line set).
func (c *Console) restore(s *engine.Session, flags restoreFlags) []string {
	set := s.Settings()
	var notes []string
	if g := c.gate; g != nil && set.Step && !g.Stepping() && !flags.step {
		g.SetStep(true)
		notes = append(notes, "Step mode is on, as when this session was last worked on (ctrl+t turns it off).")
	}
	if g := c.gate; g != nil && len(set.Breaks) > 0 && !flags.breaks {
		var restored []string
		for _, cond := range set.Breaks {
			if br, err := engine.ParseBreak(cond); err == nil && g.AddBreak(br) {
				restored = append(restored, cond)
			}
		}
		if len(restored) > 0 {
			notes = append(notes, "Breakpoints restored: "+strings.Join(restored, ", ")+" (/break lists them).")
		}
	}
	if _, shell := c.Setup.Registry().Lookup("run_shell"); set.AllowShell && !shell {
		// The person's own journal (not a bus's, which others write to).
		if c.Store.Local() && c.Setup.EnableShell() == nil {
			notes = append(notes, "run_shell is offered, as when this session was last worked on (--allow-shell).")
		} else {
			notes = append(notes, "This session was worked on with --allow-shell; run_shell is not offered here: start agentty with --allow-shell --resume "+s.ID+" to have it.")
		}
	}
	if g := c.gate; g != nil && len(set.Allowed) > 0 {
		// An approval loosens what the session may do: restored only
		// from the person's own journal, as the shell is.
		if c.Store.Local() {
			g.SetPermissions(s.ID, set.Allowed)
			notes = append(notes, "Allowed for this session, as when it was last worked on: "+strings.Join(set.Allowed, ", ")+" (/permissions revoke N takes one back).")
		} else {
			notes = append(notes, "Approvals given for this session elsewhere ask again here: "+strings.Join(set.Allowed, ", ")+".")
		}
	}
	if flags.model == "" && set.Model != "" {
		notes = append(notes, "Model "+set.Model+", as when this session was last worked on (/model picks another).")
	}
	if flags.model != "" && set.Model != "" && flags.model != set.Model {
		notes = append(notes, "Model "+flags.model+" (--model), not "+set.Model+", which this session was last worked on with.")
	}
	return notes
}

// restoreFlags is what the command line set of what restore restores.
type restoreFlags struct {
	step, breaks bool
	model        string
}

// LatestHere returns the most recent session last worked on in o's
// workspace ("" when there is none), for agentty --continue.
func LatestHere(o app.Options, getenv func(string) string) (string, error) {
	store, err := o.Store(getenv)
	if err != nil {
		return "", err
	}
	list, err := store.List()
	if err != nil {
		return "", err
	}
	ws, err := filepath.Abs(cmp.Or(o.Workspace, "."))
	if err != nil {
		return "", err
	}
	for _, dir := range upToRepo(ws) { // the nearest folder's first
		for _, l := range list { // newest first
			if l.Workspace == dir && l.Err == nil {
				return l.ID, nil
			}
		}
	}
	return "", nil
}

// upToRepo is dir and, when dir is inside a git repository, the folders
// above it up to the repository's root (the first with a .git): where
// --continue looks for a session, nearest first, so that a console started
// in a subfolder finds the project's. Outside a repository, dir alone.
func upToRepo(dir string) []string {
	out := []string{dir}
	for d := dir; ; d = filepath.Dir(d) {
		if d != dir {
			out = append(out, d)
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return out
		}
		if filepath.Dir(d) == d {
			return out[:1]
		}
	}
}

// saveSettings journals what b's session is worked on with now, when it
// changed since its last run started (an approval given during that run,
// a breakpoint set after it), so that a resume finds it. A session never
// run is left unwritten, and one with a run going keeps its settings for
// that run's end.
func (b *backend) saveSettings() error {
	if b.session.LastRun().ID == "" {
		return nil
	}
	_, err := b.session.SaveSettings(b.settings(), b.sink)
	if errors.Is(err, engine.ErrBusy) {
		return nil
	}
	return err
}
