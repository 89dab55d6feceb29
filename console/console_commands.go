package console

// What the console's slash commands ask of the session (ui.Commander):
// compact, model, agent, fork, clear, export, trust.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/ui"
)

// Compact compacts the session's history now (/compact).
func (b *backend) Compact(ctx context.Context, focus string) <-chan engine.Event {
	return b.eng().StartCompact(ctx, b.session, focus, b.sink)
}

// SetModel makes name the model of the session's next runs (/model): the
// model is made first, so that a name that cannot be used changes nothing.
func (b *backend) SetModel(name string) (engine.Event, error) {
	e, err := b.con.engineFor(name)
	if err != nil {
		return engine.Event{}, err
	}
	ev, err := b.session.ChangeModel(e.Config().ModelName, b.journal)
	if err != nil {
		return engine.Event{}, err
	}
	b.mu.Lock()
	b.engine = e
	b.mu.Unlock()
	return ev, nil
}

// ModelName names the model of the session's next runs.
func (b *backend) ModelName() string { return b.eng().Config().ModelName }

// SetAgent makes name the agent the session's next runs run as (/agent).
func (b *backend) SetAgent(name string) (engine.Event, error) {
	var names []string
	for _, a := range b.eng().Config().Agents {
		names = append(names, a.Name)
	}
	switch {
	case len(names) == 0:
		return engine.Event{}, errors.New("there are no agents (agent files go in .agentty/agents or ~/.config/agentty/agents)")
	case !slices.Contains(names, name):
		slices.Sort(names)
		what := fmt.Sprintf("no agent %q", name)
		if name == "" {
			what = "name an agent"
		}
		return engine.Event{}, fmt.Errorf("%s: the agents are %s", what, strings.Join(names, ", "))
	case name == b.session.Agent:
		return engine.Event{}, fmt.Errorf("the session already runs as %s", name)
	}
	return b.session.SwitchAgent(name, b.journal)
}

// Fork forks the session at step and opens the fork (/fork).
func (b *backend) Fork(step int) (ui.Backend, []engine.Event, error) {
	if err := b.journal.Flush(); err != nil {
		return nil, nil, err
	}
	if len(b.session.History) == 0 {
		return nil, nil, errors.New("there is nothing to fork yet")
	}
	id, err := b.con.Store.Fork(b.journal.ID, step)
	if err != nil {
		return nil, nil, err
	}
	// The store cuts the fork's title to 60 characters, "(fork of ID at
	// step N)" with it when the title is long: the parent is kept whole,
	// for the picker (forkOf), and the title cut before it. A title that
	// cannot be written leaves the store's.
	suffix := fmt.Sprintf(" (fork of %s at step %d)", b.journal.ID, step)
	_ = b.con.Store.Rename(id, engine.OneLine(cmp.Or(b.journal.Meta().Title, "untitled"), max(60-len(suffix), 12))+suffix)
	j, l, err := b.con.Store.OpenWriter(id)
	if err != nil {
		return nil, nil, err
	}
	return b.con.openWith(j, l.Session, l.Events), l.Events, nil
}

// Clear opens a new, empty session with the same settings (/clear), on
// the model of this one's next runs.
func (b *backend) Clear() (ui.Backend, []engine.Event, error) {
	j, err := b.con.Store.Create()
	if err != nil {
		return nil, nil, err
	}
	nb := b.con.Open(j, engine.NewSession(j.ID))
	nb.engine = b.eng()
	return nb, nil, nil
}

// Export writes the session as format to file (/export), by default a
// file named after the session in the current folder, replacing the file
// whole; it returns the file's path.
func (b *backend) Export(format, file string) (string, error) {
	if err := b.journal.Flush(); err != nil {
		return "", err
	}
	if len(b.session.History) == 0 {
		return "", errors.New("there is nothing to export yet")
	}
	if file == "" {
		file = b.journal.ID + "." + format
	}
	path, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".agentty-export-*")
	if err != nil {
		return "", fmt.Errorf("export %s: %w", path, err)
	}
	defer os.Remove(f.Name()) // gone once renamed
	err = b.con.Store.Export(b.journal.ID, format, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return "", fmt.Errorf("export %s: %w", path, err)
	}
	return path, nil
}

// Trust trusts the workspace's config as `agentty trust` does (/trust)
// and returns what it said.
func (b *backend) Trust() (string, error) {
	store, err := config.LoadTrust(b.con.Getenv)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	if err := config.TrustFolder(store, cmp.Or(b.con.Opts.Workspace, "."), &out, 100, b.con.Getenv); err != nil {
		return "", err
	}
	return out.String(), nil
}

// Skills says which Agent Skills the model has, for /skills.
func (b *backend) Skills() string {
	ss := &b.con.Setup.Skills
	if len(ss.Skills) == 0 {
		return "No skills. Put one in .agentty/skills/NAME/SKILL.md (or .claude/skills, .agents/skills); agentty skills lists them."
	}
	var lines []string
	for _, s := range ss.Skills {
		lines = append(lines, "• "+s.Name+": "+engine.OneLine(s.Description, 120))
	}
	head := fmt.Sprintf("%d %s the model may read (with the skill tool):", len(ss.Skills), engine.Plural(len(ss.Skills), "skill"))
	if n := len(ss.Errors); n > 0 {
		head = fmt.Sprintf("%s (%d did not load: agentty skills says why)", head, n)
	}
	return head + "\n" + strings.Join(lines, "\n")
}
