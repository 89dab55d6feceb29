package plugins

// Marketplaces: a folder or repository holding
// .claude-plugin/marketplace.json, which lists plugins and where each is
// (a path inside the marketplace, a git URL, GitHub's owner/repo, a
// folder of a repository). Added, it is kept by its name; NAME@MARKET
// installs one of its plugins.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentty/agentty/config"
)

// MarketPath is a marketplace's file, under its folder.
const MarketPath = ".claude-plugin/marketplace.json"

// marketFile is what agentty reads of a marketplace.json.
type marketFile struct {
	Name     string `json:"name"`
	Metadata struct {
		PluginRoot string `json:"pluginRoot"`
	} `json:"metadata"`
	Plugins []json.RawMessage `json:"plugins"`
}

// Entry is one plugin a marketplace lists.
type Entry struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
	// Source says where it is, in words: a path, a URL.
	Source string          `json:"source"`
	raw    json.RawMessage // its entry
}

// source is an entry's source: a string (a path in the marketplace) or
// an object (github, url, git-subdir).
type source struct {
	Source string `json:"source"`
	Repo   string `json:"repo"`
	URL    string `json:"url"`
	Path   string `json:"path"`
	Ref    string `json:"ref"`
	SHA    string `json:"sha"`
}

// readMarket reads the marketplace file of the folder dir.
func readMarket(dir string) (marketFile, []Entry, error) {
	var m marketFile
	path := filepath.Join(dir, MarketPath)
	b, err := config.ReadIn(dir, path, 16<<20)
	if err != nil {
		return m, nil, fmt.Errorf("%s: %v", path, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, nil, jsonError(path, b, err)
	}
	var out []Entry
	for _, raw := range m.Plugins {
		var e struct {
			Name, Description, Version string
			Source                     json.RawMessage
		}
		if json.Unmarshal(raw, &e) != nil || e.Name == "" {
			continue
		}
		out = append(out, Entry{Name: e.Name, Description: e.Description, Version: e.Version, Source: describe(e.Source), raw: raw})
	}
	return m, out, nil
}

// describe says where a source is, in words.
func describe(raw json.RawMessage) string {
	var rel string
	if json.Unmarshal(raw, &rel) == nil {
		return rel
	}
	var s source
	json.Unmarshal(raw, &s)
	switch s.Source {
	case "github":
		return "github:" + s.Repo
	case "git-subdir":
		return s.URL + "#" + s.Path
	}
	return s.URL
}

// keepMarket keeps the fetched marketplace content (replacing one of its
// name) and lists its plugins.
func (s Store) keepMarket(content string, rec Record, notes []string) (*Added, error) {
	m, entries, err := readMarket(content)
	if err != nil {
		return nil, fmt.Errorf("%v: not added", strings.Replace(err.Error(), content, rec.Source, 1))
	}
	if err := checkName("marketplace", m.Name); err != nil {
		return nil, err
	}
	dst := s.marketDir(m.Name)
	mk := Market{Name: m.Name, Source: rec.Source, Ref: rec.Ref, Commit: rec.Commit, Added: time.Now().UTC().Round(time.Second)}
	err = s.locked(func(ix *index) error {
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		os.RemoveAll(dst)
		if err := os.Rename(content, dst); err != nil {
			return err
		}
		ix.Marketplaces = slices.DeleteFunc(ix.Marketplaces, func(x Market) bool { return x.Name == m.Name })
		ix.Marketplaces = append(ix.Marketplaces, mk)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Added{Market: &mk, Listed: entries, Notes: notes}, nil
}

// Listing is the plugins of the marketplace name, added before.
func (s Store) Listing(name string) ([]Entry, error) {
	_, entries, err := readMarket(s.marketDir(name))
	return entries, err
}

// addFromMarket installs the plugin name of the marketplace market.
func (s Store) addFromMarket(ctx context.Context, name, market string) (*Added, error) {
	_, markets, err := s.Installed()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(markets, func(m Market) bool { return m.Name == market })
	if i < 0 {
		return nil, fmt.Errorf("no marketplace %q has been added (agentty plugin add DIR|GIT-URL of one holding %s)", market, MarketPath)
	}
	dir := s.marketDir(market)
	m, entries, err := readMarket(dir)
	if err != nil {
		return nil, err
	}
	j := slices.IndexFunc(entries, func(e Entry) bool { return e.Name == name })
	if j < 0 {
		return nil, fmt.Errorf("marketplace %s lists no plugin %q (agentty plugin ls lists its plugins)", market, name)
	}
	var e struct {
		Source json.RawMessage `json:"source"`
	}
	json.Unmarshal(entries[j].raw, &e)
	stage, err := s.stage()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	content := filepath.Join(stage, "content")
	rec := Record{Marketplace: market, Source: entries[j].Source}
	notes, err := s.fetchEntry(ctx, &rec, dir, m.Metadata.PluginRoot, e.Source, stage, content)
	if err != nil {
		return nil, fmt.Errorf("marketplace %s: plugin %s: %w", market, name, err)
	}
	a, err := s.install(content, rec, name, components(entries[j].raw))
	if a != nil {
		a.Notes = append(notes, a.Notes...)
	}
	return a, err
}

// fetchEntry fetches an entry's source into content: a path inside the
// marketplace's folder dir (under its pluginRoot when the path is bare),
// or a git source, pinned.
func (s Store) fetchEntry(ctx context.Context, rec *Record, dir, pluginRoot string, raw json.RawMessage, stage, content string) ([]string, error) {
	var rel string
	if json.Unmarshal(raw, &rel) == nil {
		if pluginRoot != "" && !strings.HasPrefix(rel, "./") && !strings.HasPrefix(rel, "../") {
			rel = filepath.Join(pluginRoot, rel)
		}
		from, err := within(dir, rel)
		if err != nil {
			return nil, fmt.Errorf("source %w: a plugin's path stays inside its marketplace", err)
		}
		notes, err := copyTree(from, content, s.bounds())
		return notes, err
	}
	var src source
	if err := json.Unmarshal(raw, &src); err != nil {
		return nil, fmt.Errorf("source: want a path or an object with source")
	}
	url := src.URL
	switch src.Source {
	case "github":
		url = "https://github.com/" + src.Repo + ".git"
	case "url", "git-subdir":
	default:
		return nil, fmt.Errorf("a source of kind %q: agentty installs paths, github, url and git-subdir sources", src.Source)
	}
	if _, err := cloneURL(url); err != nil || url == "" {
		return nil, fmt.Errorf("source: %q is not a git URL", url)
	}
	rec.Source, rec.Ref = url, cmp.Or(src.SHA, src.Ref)
	commit, notes, err := s.fetchGit(ctx, url, rec.Ref, src.Path, stage, content)
	rec.Commit = commit
	return notes, err
}

// components are the component fields of a marketplace entry (commands,
// agents, skills, hooks, mcpServers, lspServers), which supplement the
// plugin's own manifest.
func components(raw json.RawMessage) []byte {
	var m Manifest
	json.Unmarshal(raw, &m)
	m.Name, m.Version, m.Description = "", "", ""
	b, _ := json.Marshal(m)
	if string(b) == `{"name":""}` {
		return nil
	}
	return b
}
