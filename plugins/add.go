package plugins

// agentty plugin add: a folder copied, a repository cloned (pinned), then
// kept as a plugin, or, when it holds .claude-plugin/marketplace.json, as
// a marketplace whose plugins are listed.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Added is what Add did: a plugin installed (Plugin, what it Brings), or
// a marketplace kept (Market, its plugins Listed).
type Added struct {
	Plugin *Record
	Brings Brings
	Market *Market
	Listed []Entry
	// Notes are what was left out (a FIFO not copied, a path refused).
	Notes []string
}

// Add installs src: NAME@MARKETPLACE (a plugin of a marketplace added
// before), a git URL or GitHub's owner/repo (cloned at ref, pinned to its
// commit), or a folder (copied). A source holding a marketplace.json is
// kept as a marketplace. Nothing is installed when it fails.
func (s Store) Add(ctx context.Context, src, ref string) (*Added, error) {
	if name, market, ok := strings.Cut(src, "@"); ok && validName.MatchString(name) && validName.MatchString(market) && !IsGit(src) {
		if _, err := os.Stat(src); err != nil {
			return s.addFromMarket(ctx, name, market)
		}
	}
	stage, err := s.stage()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	rec := Record{Ref: ref}
	content := filepath.Join(stage, "content")
	var notes []string
	if IsGit(src) {
		url, err := cloneURL(src)
		if err != nil {
			return nil, err
		}
		rec.Source = url
		if rec.Commit, notes, err = s.fetchGit(ctx, url, ref, "", stage, content); err != nil {
			return nil, err
		}
	} else {
		if ref != "" {
			return nil, fmt.Errorf("--ref is for a git repository; %s is a folder", src)
		}
		if rec.Source, notes, err = s.fetchDir(src, content); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(content, MarketPath)); err == nil {
		return s.keepMarket(content, rec, notes)
	}
	a, err := s.install(content, rec, "", nil)
	if a != nil {
		a.Notes = append(notes, a.Notes...)
	}
	return a, err
}

// stage makes a folder to fetch into, inside the store (so the final
// rename does not cross file systems).
func (s Store) stage() (string, error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return "", err
	}
	return os.MkdirTemp(s.Dir, ".add-*")
}

// fetchDir copies the folder src into content; its absolute path is the
// source recorded.
func (s Store) fetchDir(src, content string) (string, []string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", nil, err
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("%s: no such folder, and not a git URL or NAME@MARKETPLACE", src)
	case !fi.IsDir():
		return "", nil, fmt.Errorf("%s is not a folder", src)
	}
	notes, err := copyTree(abs, content, s.bounds())
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", abs, err)
	}
	return abs, notes, nil
}

// fetchGit clones url at ref into stage and copies it (its sub folder
// sub, when given) into content; it says the commit.
func (s Store) fetchGit(ctx context.Context, url, ref, sub, stage, content string) (string, []string, error) {
	repo := filepath.Join(stage, "clone")
	commit, err := clone(ctx, url, ref, repo)
	if err != nil {
		return "", nil, err
	}
	from := repo
	if sub != "" {
		if from, err = within(repo, sub); err != nil {
			return "", nil, fmt.Errorf("%s: path %w", url, err)
		}
	}
	notes, err := copyTree(from, content, s.bounds())
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", url, err)
	}
	return commit, notes, nil
}

// within is the path rel inside root: refused when it leads out of it
// (through .. or a symbolic link).
func within(root, rel string) (string, error) {
	if filepath.IsAbs(rel) {
		return "", fmt.Errorf("%q is not relative to the folder; refused", rel)
	}
	abs := filepath.Join(root, filepath.FromSlash(rel))
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, os.ErrNotExist) {
		real = abs
	} else if err != nil {
		return "", err
	}
	for _, pair := range [][2]string{{root, abs}, {realRoot, real}} {
		if r, err := filepath.Rel(pair[0], pair[1]); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("%q leads out of the folder (to %s); refused", rel, pair[1])
		}
	}
	return abs, nil
}

// install keeps the fetched plugin content as name (its manifest's name,
// else the source's base name), recorded as rec, with its marketplace
// entry's component fields.
func (s Store) install(content string, rec Record, name string, entry []byte) (*Added, error) {
	m, _, err := readManifest(content)
	if err != nil {
		return nil, fmt.Errorf("%v: not installed", strings.Replace(err.Error(), content, rec.Source, 1))
	}
	name = cmp.Or(name, m.Name, strings.TrimSuffix(filepath.Base(strings.TrimRight(rec.Source, "/")), ".git"))
	if err := checkName("plugin", name); err != nil {
		return nil, err
	}
	dst := s.PluginDir(name)
	rec.Name, rec.Version, rec.Installed, rec.Entry = name, m.Version, time.Now().UTC().Round(time.Second), entry
	err = s.locked(func(ix *index) error {
		if i := slices.IndexFunc(ix.Plugins, func(r Record) bool { return r.Name == name }); i >= 0 {
			return fmt.Errorf("plugin %s is installed already (from %s); agentty plugin rm %s first", name, ix.Plugins[i].Source, name)
		}
		os.RemoveAll(dst) // a folder left by a failed add, not in installed.json
		if err := os.Rename(content, dst); err != nil {
			return err
		}
		ix.Plugins = append(ix.Plugins, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	p, err := Read(dst, name, entry)
	if err != nil {
		return nil, err
	}
	return &Added{Plugin: &rec, Brings: p.Brings(), Notes: p.Notes}, nil
}
