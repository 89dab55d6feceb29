// Package commands reads custom slash commands, as Claude Code and Codex
// users have them: Markdown prompts (`.claude/commands/**/*.md`,
// `.agentty/commands`, `~/.claude/commands`, Codex's `~/.codex/prompts`),
// with optional front matter (description, argument-hint, allowed-tools,
// model), expanded with their arguments before a run starts. A command is
// a prompt, never a program: nothing in a command file is run.
package commands

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/internal/yamlx"
)

// MaxFile bounds a command file: a prompt larger than this is refused.
const MaxFile = 256 << 10

// maxFiles and maxDepth bound a walk of one place: a folder of many
// thousands of files, or one nested without end, is cut and noted.
const (
	maxFiles = 2000
	maxDepth = 6
)

// Place is a folder commands are read from. The loader takes a list of
// them, strongest first; the front ends add their own (a plugin's folder
// with its Prefix) without the loader knowing of them.
type Place struct {
	Dir    string // the folder, as shown in messages
	Prefix string // put before each command's name: "plugin-name:" for a plugin's
	Source string // what lists call the place: "workspace", "user", "codex", …
	// Root, for a folder of someone else's (a workspace's), is the
	// workspace (absolute, symlinks resolved): no file may lead out of it.
	Root string
	// Trusted: the person trusts the place, so its commands may pick a
	// model. An untrusted workspace's commands load, their model refused.
	Trusted bool
	// Flat reads only the folder's own *.md (Codex's prompts); otherwise
	// subfolders make names dir:name, as Claude Code names them.
	Flat bool
	// One: Dir is a single command file (a plugin's manifest may name
	// one), named by its base name.
	One bool
}

// Command is one command as its file defines it.
type Command struct {
	Name         string   `json:"name"`
	Description  string   `json:"description,omitempty"`
	ArgumentHint string   `json:"argument_hint,omitempty"`
	AllowedTools []string `json:"allowed_tools,omitempty"` // Claude Code's words, as written
	Model        string   `json:"model,omitempty"`
	File         string   `json:"file"`
	Source       string   `json:"source"`
	Trusted      bool     `json:"trusted"`
	Body         string   `json:"-"`
	// BodyLine is the file's line the body begins on (for notes on it).
	BodyLine int `json:"-"`
}

// Problem is an error (the file did not load) or a note (it did, with
// something left out) about a command file.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return p.File + ":" + strconv.Itoa(p.Line) + ": " + p.Message
	}
	return p.File + ": " + p.Message
}

// Set is what loading the places found.
type Set struct {
	Commands []Command
	Errors   []Problem
	Notes    []Problem
}

// Find returns the command called name.
func (s *Set) Find(name string) (*Command, bool) {
	if s == nil {
		return nil, false
	}
	i := slices.IndexFunc(s.Commands, func(c Command) bool { return c.Name == name })
	if i < 0 {
		return nil, false
	}
	return &s.Commands[i], true
}

// Unknown says why /name, which is no command of s, is not sent as the
// task: it is a command's name mistyped (within two edits of one), or
// names a plugin's command (PLUGIN:name) that is not here. nil otherwise:
// a task that merely starts with a / (a path) goes on as written.
func (s *Set) Unknown(name string) error {
	var near []string
	for _, c := range s.Commands {
		if config.EditDistance(strings.ToLower(name), strings.ToLower(c.Name)) <= 2 {
			near = append(near, "/"+c.Name)
		}
	}
	switch {
	case len(near) > 0:
		return fmt.Errorf("no command /%s here: did you mean %s?", name, strings.Join(near, " or "))
	case strings.Contains(name, ":"):
		return fmt.Errorf("no command /%s here (is its plugin added? agentty plugin ls)", name)
	}
	return nil
}

// Places are where commands are read from, the strongest first: the
// workspace's .agentty/commands and .claude/commands (confined to it,
// trusted as the workspace is), agentty's own commands folder beside the
// person's config, ~/.claude/commands, and Codex's prompts
// ($CODEX_HOME/prompts, else ~/.codex/prompts; top level only).
func Places(wsDir, wsAbs string, trusted bool, getenv func(string) string) []Place {
	out := []Place{
		{Dir: filepath.Join(wsDir, ".agentty", "commands"), Source: "workspace", Root: wsAbs, Trusted: trusted},
		{Dir: filepath.Join(wsDir, ".claude", "commands"), Source: "workspace", Root: wsAbs, Trusted: trusted},
		{Dir: filepath.Join(filepath.Dir(config.Path(getenv)), "commands"), Source: "user", Trusted: true},
	}
	home := getenv("HOME")
	if home != "" {
		out = append(out, Place{Dir: filepath.Join(home, ".claude", "commands"), Source: "user", Trusted: true})
	}
	codex := getenv("CODEX_HOME")
	if codex == "" && home != "" {
		codex = filepath.Join(home, ".codex")
	}
	if codex != "" {
		out = append(out, Place{Dir: filepath.Join(codex, "prompts"), Source: "codex", Trusted: true, Flat: true})
	}
	return out
}

// Load reads the command files of places, strongest first. A name a
// stronger place has is noted and skipped; a name in reserved (the
// console's built-in commands) is noted and left out: the built-in wins.
// A file that cannot be read or whose front matter does not parse is an
// error naming its line, and the rest load.
func Load(places []Place, reserved []string) Set {
	var out Set
	seen := map[string]string{} // name → its file
	for _, pl := range places {
		for _, file := range pl.files(&out) {
			c, notes, prob := readCommand(file, pl)
			out.Notes = append(out.Notes, notes...)
			if prob != nil {
				out.Errors = append(out.Errors, *prob)
				continue
			}
			switch first, dup := seen[c.Name]; {
			case slices.Contains(reserved, c.Name):
				out.Notes = append(out.Notes, Problem{File: file, Message: fmt.Sprintf("/%s is a built-in command of agentty's, which wins; this file is not used", c.Name)})
			case dup:
				out.Notes = append(out.Notes, Problem{File: file, Message: fmt.Sprintf("/%s is also %s, which wins; this file is not used", c.Name, first)})
			default:
				seen[c.Name] = file
				out.Commands = append(out.Commands, c)
			}
		}
	}
	return out
}

// files lists the *.md files of the place, in name order: the folder's
// own, then (unless Flat) its subfolders', at most maxDepth deep and
// maxFiles in all (noted in out when cut). Symlinked folders are not
// followed; a symlinked file is read as the place allows (confined).
func (pl Place) files(out *Set) []string {
	if pl.One {
		return []string{pl.Dir}
	}
	var files []string
	err := filepath.WalkDir(pl.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == pl.Dir {
				return err
			}
			out.Errors = append(out.Errors, Problem{File: p, Message: err.Error()})
			return nil
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(pl.Dir, p)
			depth := strings.Count(rel, string(filepath.Separator)) + 1
			if p != pl.Dir && (pl.Flat || strings.HasPrefix(d.Name(), ".") || depth > maxDepth) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		if len(files) == maxFiles {
			out.Notes = append(out.Notes, Problem{File: pl.Dir, Message: fmt.Sprintf("more than %d command files: the rest are not read", maxFiles)})
			return filepath.SkipAll
		}
		files = append(files, p)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		out.Errors = append(out.Errors, Problem{File: pl.Dir, Message: err.Error()})
	}
	return files
}

// read reads file, a file of the place: through config.ReadIn in a
// workspace (no link leads out of it, a FIFO is refused at once), bounded
// by MaxFile everywhere.
func (pl Place) read(file string) ([]byte, error) {
	if pl.Root == "" {
		b, more, err := config.ReadAtMost(file, MaxFile)
		if err == nil && more {
			err = fmt.Errorf("larger than %d bytes", MaxFile)
		}
		return b, err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	return config.ReadIn(pl.Root, abs, MaxFile)
}

// name is the command's name of file: its path under the place without
// .md, each folder a "dir:" before it, after the place's prefix.
func (pl Place) name(file string) string {
	rel, err := filepath.Rel(pl.Dir, file)
	if err != nil || pl.One {
		rel = filepath.Base(file)
	}
	rel = strings.TrimSuffix(filepath.ToSlash(rel), ".md")
	return pl.Prefix + strings.ReplaceAll(rel, "/", ":")
}

// readCommand reads one command file of place pl.
func readCommand(file string, pl Place) (Command, []Problem, *Problem) {
	b, err := pl.read(file)
	if err != nil {
		return Command{}, nil, &Problem{File: file, Message: err.Error()}
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return Command{}, nil, &Problem{File: file, Message: "not a text file"}
	}
	c := Command{Name: pl.name(file), File: file, Source: pl.Source, Trusted: pl.Trusted}
	if strings.ContainsAny(c.Name, " \t\n") {
		return Command{}, nil, &Problem{File: file, Message: fmt.Sprintf("/%s: a command's name has no spaces (rename the file)", c.Name)}
	}
	notes, prob := parse(&c, b)
	if prob != nil {
		prob.File = file
		return Command{}, nil, prob
	}
	for i := range notes {
		notes[i].File = file
	}
	if c.Description == "" {
		c.Description = firstLine(c.Body)
	}
	return c, notes, nil
}

// parse reads b's front matter (between --- lines, optional) into c and
// the rest as its body. A front matter that is not YAML fields is a
// problem naming its line.
func parse(c *Command, b []byte) ([]Problem, *Problem) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	lines := strings.SplitAfter(string(b), "\n")
	fence := func(l string) bool { return strings.TrimRight(l, " \t\r\n") == "---" }
	end := -1
	if fence(lines[0]) {
		end = slices.IndexFunc(lines[1:], fence) + 1
		if end == 0 {
			return nil, &Problem{Line: 1, Message: "front matter: no closing --- line after the fields"}
		}
	}
	c.Body = strings.TrimSpace(strings.Join(lines[end+1:], ""))
	c.BodyLine = end + 2
	if end < 0 {
		return nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(lines[1:end], "")), &doc); err != nil {
		line, msg := yamlx.ErrorLine(err)
		return nil, &Problem{Line: line + 1, Message: "front matter: " + msg}
	}
	if doc.Kind == 0 {
		return nil, nil
	}
	m := yamlx.Deref(doc.Content[0])
	if m.Kind != yaml.MappingNode {
		return nil, &Problem{Line: m.Line + 1, Message: "front matter: want fields (description: …), got " + yamlx.KindName(m)}
	}
	return fields(c, m), nil
}

// fields reads the front matter's fields into c; what it leaves out is noted.
func fields(c *Command, m *yaml.Node) []Problem {
	var notes []Problem
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := yamlx.Deref(m.Content[i]), yamlx.Deref(m.Content[i+1])
		line := k.Line + 1
		str, _ := yamlx.Scalar(v)
		switch k.Value {
		case "description":
			c.Description = strings.TrimSpace(str)
		case "argument-hint", "argument_hint":
			c.ArgumentHint = strings.TrimSpace(str)
		case "model":
			c.Model = strings.TrimSpace(str)
		case "allowed-tools", "allowed_tools":
			c.AllowedTools = toolWords(v)
		case "name", "disable-model-invocation", "version", "author", "tags", "category", "examples", "usage":
			// Descriptive: the name is the file's, and agentty's model
			// never calls a command itself.
		default:
			notes = append(notes, Problem{Line: line, Message: k.Value + ": ignored (a command's fields are description, argument-hint, allowed-tools, model)"})
		}
	}
	return notes
}

// toolWords reads allowed-tools: Claude Code's comma-separated string, or
// a YAML list. A word keeps its specifier (Bash(git add:*)), whose commas
// are not separators.
func toolWords(v *yaml.Node) []string {
	var raw []string
	if v.Kind == yaml.SequenceNode {
		for _, n := range v.Content {
			if s, ok := yamlx.Scalar(yamlx.Deref(n)); ok {
				raw = append(raw, s)
			}
		}
	} else if s, ok := yamlx.Scalar(v); ok {
		raw = []string{s}
	}
	var out []string
	for _, s := range raw {
		depth, start := 0, 0
		for i, r := range s + "," {
			switch r {
			case '(':
				depth++
			case ')':
				depth = max(depth-1, 0)
			case ',':
				if depth == 0 {
					if w := strings.TrimSpace(s[start:min(i, len(s))]); w != "" {
						out = append(out, w)
					}
					start = i + 1
				}
			}
		}
	}
	return out
}

// firstLine is a body's first line of text, for a command with no
// description (Claude Code shows that).
func firstLine(body string) string {
	for l := range strings.SplitSeq(body, "\n") {
		if l = strings.TrimSpace(strings.TrimLeft(l, "# ")); l != "" {
			return engine.OneLine(l, 100)
		}
	}
	return ""
}
