// Package plugins keeps Claude Code plugins the person added: folders
// (or git repositories, cloned and pinned to a commit) that bundle
// commands, agents, skills, hooks and MCP servers, each described by an
// optional .claude-plugin/plugin.json. They are copied into the data
// folder (plugins/NAME, with installed.json saying where each came from);
// marketplaces (.claude-plugin/marketplace.json) are remembered by name
// and their plugins installed as NAME@MARKETPLACE. What a plugin brings
// is loaded as the person's own (Load): nothing of a plugin is read or
// run before the person adds it.
package plugins

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"syscall"
	"time"

	"github.com/agentty/agentty/config"
)

// Record is one installed plugin, as installed.json keeps it.
type Record struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Source is what was added: a folder (absolute), a git URL, or the
	// marketplace entry's source.
	Source string `json:"source"`
	Ref    string `json:"ref,omitempty"`
	// Commit is the commit a git source was pinned to.
	Commit      string    `json:"commit,omitempty"`
	Marketplace string    `json:"marketplace,omitempty"`
	Installed   time.Time `json:"installed"`
	// Entry is the marketplace entry's component fields (commands,
	// agents, skills, hooks, mcpServers), which supplement plugin.json.
	Entry json.RawMessage `json:"entry,omitempty"`
}

// Market is a marketplace the person added: its copy is kept in the
// plugins folder's .marketplaces/NAME.
type Market struct {
	Name   string    `json:"name"`
	Source string    `json:"source"`
	Ref    string    `json:"ref,omitempty"`
	Commit string    `json:"commit,omitempty"`
	Added  time.Time `json:"added"`
}

// index is installed.json.
type index struct {
	Plugins      []Record `json:"plugins"`
	Marketplaces []Market `json:"marketplaces,omitempty"`
}

// Store is the plugins folder of a data folder.
type Store struct {
	// Dir is DATA/plugins.
	Dir string
	// MaxBytes and MaxFiles bound one plugin's copy (0: the package's
	// MaxBytes, MaxFiles).
	MaxBytes, MaxFiles int64
}

// Open is the store of the data folder home.
func Open(home string) Store { return Store{Dir: filepath.Join(home, "plugins")} }

// indexFile is installed.json's path.
func (s Store) indexFile() string { return filepath.Join(s.Dir, "installed.json") }

// marketDir is where the marketplace name's copy is kept.
func (s Store) marketDir(name string) string { return filepath.Join(s.Dir, ".marketplaces", name) }

// PluginDir is where the plugin name is installed.
func (s Store) PluginDir(name string) string { return filepath.Join(s.Dir, name) }

// validName is a plugin's or a marketplace's name as a folder may be
// called: Claude Code's names are kebab-case; dots are allowed, not first.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// checkName refuses a name that cannot be a folder of the store.
func checkName(what, name string) error {
	if !validName.MatchString(name) || name == "installed.json" {
		return fmt.Errorf("%s name %q: a name is letters, digits, '.', '_' and '-' (not first), as Claude Code's are", what, name)
	}
	return nil
}

// read reads installed.json (none: nothing installed).
func (s Store) read() (index, error) {
	var ix index
	b, err := config.ReadSmall(s.indexFile())
	if errors.Is(err, fs.ErrNotExist) {
		return ix, nil
	}
	if err != nil {
		return ix, err
	}
	if err := json.Unmarshal(b, &ix); err != nil {
		return ix, fmt.Errorf("%s: %v", s.indexFile(), err)
	}
	return ix, nil
}

// write replaces installed.json.
func (s Store) write(ix index) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	slices.SortFunc(ix.Plugins, func(a, b Record) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(ix.Marketplaces, func(a, b Market) int { return cmp.Compare(a.Name, b.Name) })
	b, err := json.MarshalIndent(ix, "", "  ")
	if err != nil {
		return err
	}
	return config.WriteFileAtomic(s.indexFile(), append(b, '\n'))
}

// locked runs f on installed.json under the store's lock, and writes it
// back when f succeeds: two adds (or an add and a rm) at once do not lose
// each other's record.
func (s Store) locked(f func(*index) error) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	l, err := os.OpenFile(filepath.Join(s.Dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer l.Close()
	if err := syscall.Flock(int(l.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	ix, err := s.read()
	if err != nil {
		return err
	}
	if err := f(&ix); err != nil {
		return err
	}
	return s.write(ix)
}

// Installed lists the installed plugins and the marketplaces added, by
// name.
func (s Store) Installed() ([]Record, []Market, error) {
	ix, err := s.read()
	return ix.Plugins, ix.Marketplaces, err
}

// Remove takes the plugin name away: its folder and its record. A
// marketplace's name takes the marketplace away (its plugins stay).
func (s Store) Remove(name string) error {
	if err := checkName("plugin", name); err != nil {
		return err
	}
	return s.locked(func(ix *index) error {
		if i := slices.IndexFunc(ix.Plugins, func(r Record) bool { return r.Name == name }); i >= 0 {
			ix.Plugins = slices.Delete(ix.Plugins, i, i+1)
			return os.RemoveAll(s.PluginDir(name))
		}
		if i := slices.IndexFunc(ix.Marketplaces, func(m Market) bool { return m.Name == name }); i >= 0 {
			ix.Marketplaces = slices.Delete(ix.Marketplaces, i, i+1)
			return os.RemoveAll(s.marketDir(name))
		}
		return fmt.Errorf("no plugin or marketplace %q is installed (agentty plugin ls lists them)", name)
	})
}
