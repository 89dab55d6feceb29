package commands

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
)

// Attached is prompt with the files paths name attached, as the
// console's @ attaches them (engine.AttachedMarker blocks), each read by
// read; a path read cannot read is noted and left out.
func (c *Command) Attached(prompt string, paths []string, read func(string) (string, error)) (string, []string) {
	var notes []string
	var b strings.Builder
	b.WriteString(prompt)
	for _, p := range paths {
		text, err := read(p)
		if err != nil {
			notes = append(notes, fmt.Sprintf("/%s: @%s not attached: %v", c.Name, p, err))
			continue
		}
		fmt.Fprintf(&b, "%s%s\">\n%s\n</attached>", engine.AttachedMarker, strings.ReplaceAll(p, `"`, "'"), strings.TrimRight(text, "\n"))
	}
	return b.String(), notes
}

// ModelFor is the model the command's run asks for, given the session's
// (""): none for inherit or the session's own; Claude Code's aliases and
// model ids use the session's, and an untrusted workspace's command picks
// none, each noted. A script: path is taken from the file's folder.
func (c *Command) ModelFor(session string) (string, string) {
	m := c.Model
	switch {
	case m == "" || m == "inherit" || m == session:
		return "", ""
	case m == "sonnet" || m == "opus" || m == "haiku" || strings.HasPrefix(m, "claude-"):
		return "", fmt.Sprintf("/%s: model %s is Claude Code's: the run uses the session's model (%s)", c.Name, m, session)
	case !c.Trusted:
		return "", fmt.Sprintf("/%s: model %s refused: the workspace is not trusted, so its commands use the session's model (agentty trust)", c.Name, m)
	}
	if p, ok := strings.CutPrefix(m, "script:"); ok && !filepath.IsAbs(p) {
		return "script:" + filepath.Join(filepath.Dir(c.File), p), ""
	}
	return m, ""
}

// Tools is the registry of the tools of reg that the command's
// allowed-tools name (Claude Code's words, mapped as agent files' are; a
// specifier such as Bash(git add:*) stands for the whole tool, with its
// approvals as they are). It only narrows: no approval is loosened. The
// words that match no tool are noted.
func (c *Command) Tools(reg *engine.Registry) (*engine.Registry, []string, error) {
	var notes []string
	var all []engine.Tool
	if reg != nil {
		all = reg.Tools()
	}
	keep := map[string]bool{}
	for _, w := range c.AllowedTools {
		word, _, _ := strings.Cut(w, "(")
		g := config.ClaudeToolGlob(strings.TrimSpace(word))
		n := 0
		for _, t := range all {
			if ok, _ := path.Match(g, t.Name); ok || g == "skill" && t.Name == "read_skill_file" {
				keep[t.Name] = true
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
	return out, notes, nil
}
