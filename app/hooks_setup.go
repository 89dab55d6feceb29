package app

// The hooks a setup runs: the person's (agentty's config, Claude Code's
// ~/.claude/settings.json) always, the workspace's once it is trusted.

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/hooks"
	"github.com/agentty/agentty/tools"
)

// setupHooks makes the setup's hooks runner; the engine is given it when
// any hook runs.
func (st *Setup) setupHooks(o Options, cfg *config.Settings, ws *config.Workspace, trusted bool, getenv func(string) string) error {
	src := hooks.Sources{Trusted: trusted}
	var notes []string
	src.Person, notes = hooks.PersonFiles(cfg, getenv)
	if ws != nil {
		src.Workspace = ws.Hooks
	}
	src.Plugins = st.plugins.Hooks()
	defs, more := hooks.Load(src)
	st.Notices = append(st.Notices, append(notes, more...)...)
	dir, err := filepath.Abs(cmp.Or(o.Workspace, "."))
	if err != nil {
		return err
	}
	env := hooks.Env{Workspace: dir, Environ: tools.ChildEnv(getenv, os.Environ(), cfg.ShellEnv, nil), Redact: st.redact.Redact}
	if slices.ContainsFunc(defs, func(d hooks.Def) bool { return d.Skip == "" }) {
		if store, err := o.LocalStore(getenv); err == nil { // opened only when a hook will run
			env.Transcript = store.JournalPath
		}
	}
	st.hooks = hooks.New(defs, env)
	return nil
}

// Hooks is the setup's hooks: those that run and those that do not, with
// why.
func (st *Setup) Hooks() *hooks.Runner { return st.hooks }
