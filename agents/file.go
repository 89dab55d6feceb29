package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agentty/agentty/config"

	"go.yaml.in/yaml/v3"

	"github.com/agentty/agentty/internal/yamlx"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/offline"
)

// Agents are Markdown files with YAML front matter: name, description,
// tools, model, max_steps, mode; the body is the agent's system prompt. They
// are read from the workspace's .agentty/agents and .claude/agents, and the
// user's agents folder (beside their config) and ~/.claude/agents. A file in
// the workspace wins over the user's on a name clash; .agentty over .claude
// in the same place. A bad file is a problem naming file, line and field,
// and the others still load.

// Def is one agent as its file defines it.
type Def struct {
	Name        string
	Description string
	// Mode is Delegate or Handoff.
	Mode string
	// Model is "inherit", offline, "script:" with an absolute path, or a
	// model name.
	Model    string
	MaxSteps int
	// MaxCost (US dollars) and MaxTokens bound what each of the agent's
	// runs spends (max_cost, max_tokens).
	MaxCost   float64
	MaxTokens int
	// Tools are the patterns (names and path.Match globs) of the tools the
	// agent may use, nil for every tool the session has; Deny (Claude
	// Code's disallowedTools) takes some away again.
	Tools []string
	Deny  []string
	// System is the body: the agent's system prompt.
	System string
	File   string // the file, as shown in messages
	Scope  string // "workspace" or "user"
	claude bool   // read from a .claude/agents folder
	// claudeTools: its tools are Claude Code's comma-separated string, so
	// a word agentty does not know is one of Claude Code's (or another
	// tool of the person's setup) and left out, as Claude Code does.
	claudeTools bool
	// OutputSchema is the JSON Schema of the agent's final answers;
	// Guardrails check its task and answer (shape.go).
	OutputSchema json.RawMessage
	Guardrails   engine.Guardrails
	// ToolsLine and ModelLine are where the fields are, for problems found
	// when the agent is wired (an unknown tool, a model that fails).
	ToolsLine, ModelLine int
}

const (
	Delegate = "delegate"
	Handoff  = "handoff"
	Inherit  = "inherit"
)

// Problem is an error (the file did not load) or a note (it did, with
// something ignored) about an agent file.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		b.WriteString(":" + strconv.Itoa(p.Line))
	}
	b.WriteString(": ")
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Place is a folder agent files are read from.
type Place struct {
	dir    string // as shown in messages
	scope  string // "workspace" or "user"
	claude bool   // a .claude/agents folder: Claude Code's shape
	// root, for a workspace folder, is the workspace (absolute, symlinks
	// resolved): a file must not lead out of it.
	root string
	// untrusted: the workspace is not trusted, so its agent files may not
	// pick a model, name MCP servers or loosen approvals.
	untrusted bool
	// one: dir is a single agent file or skill folder (a plugin's
	// manifest may name one), not a folder of them.
	one bool
}

// PluginPlace is a place of a plugin the person added: a folder of agent
// files or skills, or (one) a single agent file or skill folder; the
// person's own, scoped "plugin NAME", nothing read leading out of root
// (the plugin's folder).
func PluginPlace(path, root, plugin string, one bool) Place {
	return Place{dir: path, scope: "plugin " + plugin, claude: true, root: root, one: one}
}

// entries are the entries of the place's folder; a place of one is its
// own entry (in its parent folder, which dir is then).
func (pl Place) entries() (string, []fs.DirEntry, error) {
	if !pl.one {
		es, err := os.ReadDir(pl.dir)
		return pl.dir, es, err
	}
	fi, err := os.Lstat(pl.dir)
	if err != nil {
		return "", nil, err
	}
	return filepath.Dir(pl.dir), []fs.DirEntry{fs.FileInfoToDirEntry(fi)}, nil
}

// read reads file, a file of the place: through config.ReadIn in someone
// else's folder (nothing, no symlink of the file's own, leads out of it;
// a FIFO is refused at once).
func (pl Place) read(file string) ([]byte, error) {
	if pl.root == "" {
		return config.ReadSmall(file)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	return config.ReadIn(pl.root, abs, config.MaxFile)
}

// Places lists where agents are read from, the strongest first: the
// workspace's .agentty/agents and .claude/agents, the user's agents folder
// (beside their config: $AGENTTY_CONFIG's folder, else
// $XDG_CONFIG_HOME/agentty, else ~/.config/agentty) and ~/.claude/agents.
// ~/.claude is found through $HOME only: with no HOME there is none. A
// folder that is two of these (the workspace is the home folder) is read
// once, as the workspace's.
func Places(wsDir, wsAbs string, trusted bool, getenv func(string) string) []Place {
	places := []Place{
		{dir: filepath.Join(wsDir, ".agentty", "agents"), scope: "workspace", root: wsAbs, untrusted: !trusted},
		{dir: filepath.Join(wsDir, ".claude", "agents"), scope: "workspace", claude: true, root: wsAbs, untrusted: !trusted},
		{dir: filepath.Join(filepath.Dir(config.Path(getenv)), "agents"), scope: "user"},
	}
	if home := getenv("HOME"); home != "" {
		places = append(places, Place{dir: filepath.Join(home, ".claude", "agents"), scope: "user", claude: true})
	}
	seen := map[string]bool{}
	out := places[:0]
	for _, p := range places {
		key, err := filepath.Abs(p.dir)
		if err != nil {
			key = p.dir
		}
		if real, err := filepath.EvalSymlinks(key); err == nil {
			key = real
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	return out
}

// Files is what loading the agent folders found.
type Files struct {
	Defs   []Def
	Errors []Problem
	Notes  []Problem
	// Shadowed are the definitions a stronger one of the same name hid,
	// strongest first: the next in line when that one cannot be wired
	// (its tools or its model).
	Shadowed []Def
	// Read counts the agent files read.
	Read int
}

// loadAgents reads every *.md file of places, strongest place first. A name
// defined again in a weaker place is noted and skipped; twice in one place,
// it is an error naming both files (the first by file name loads).
func Load(places []Place) Files {
	var out Files
	byName := map[string]int{}       // name → index in out.Defs
	untrusted := map[string]string{} // names defined by an untrusted workspace: its folder
	for _, pl := range places {
		dir, entries, err := pl.entries()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			out.Errors = append(out.Errors, Problem{File: pl.dir, Message: err.Error()})
			continue
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".md") || e.IsDir() {
				continue
			}
			file := filepath.Join(dir, e.Name())
			out.Read++
			def, notes, prob := readFile(file, pl)
			out.Notes = append(out.Notes, notes...)
			if prob != nil {
				out.Errors = append(out.Errors, *prob)
				continue
			}
			if i, dup := byName[def.Name]; dup {
				first := out.Defs[i]
				if root, ok := untrusted[def.Name]; ok && !pl.untrusted {
					// An untrusted workspace may not replace the person's own
					// agent (and the tools they gave it) with its own.
					out.Notes = append(out.Notes, Problem{File: first.File, Field: "name",
						Message: fmt.Sprintf("agent %q is yours (%s) while this folder is untrusted; this file is not used (to use it: agentty trust %s)", def.Name, file, config.ShellQuote(root))})
					out.Defs[i] = def
					delete(untrusted, def.Name)
					continue
				}
				if filepath.Dir(first.File) == dir {
					out.Errors = append(out.Errors, Problem{File: file, Line: 2, Field: "name",
						Message: fmt.Sprintf("agent %q is also defined in %s, in the same folder; rename one", def.Name, first.File)})
				} else {
					out.Notes = append(out.Notes, Problem{File: file, Field: "name",
						Message: fmt.Sprintf("agent %q is defined by %s too, which wins; this file is used only if that one cannot be", def.Name, first.File)})
					out.Shadowed = append(out.Shadowed, def)
				}
				continue
			}
			byName[def.Name] = len(out.Defs)
			if pl.untrusted {
				untrusted[def.Name] = pl.root
			}
			out.Defs = append(out.Defs, def)
		}
	}
	return out
}

// readFile reads one agent file of place pl.
func readFile(file string, pl Place) (Def, []Problem, *Problem) {
	fail := func(line int, field, format string, a ...any) (Def, []Problem, *Problem) {
		return Def{}, nil, &Problem{File: file, Line: line, Field: field, Message: fmt.Sprintf(format, a...)}
	}
	b, err := pl.read(file)
	if err != nil {
		return fail(0, "", "%v", err)
	}
	return Parse(file, b, pl)
}

// frontMatter splits an agent file into its fields (a YAML mapping) and
// the lines, of which end is the one that closes the fields. Fields that
// are not valid YAML but read as key: value lines come with the YAML's
// problem (lenientFields).
func frontMatter(file string, b []byte) (*yaml.Node, []string, int, *Problem) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	lines := strings.SplitAfter(string(b), "\n")
	fence := func(l string) bool { return strings.TrimRight(l, " \t\r\n") == "---" }
	if !fence(lines[0]) {
		return nil, nil, 0, problem(file, 1, "", "front matter: an agent file begins with a --- line, then YAML fields (name, description, …), then another --- line")
	}
	end := slices.IndexFunc(lines[1:], fence) + 1
	if end == 0 {
		return nil, nil, 0, problem(file, 1, "", "front matter: no closing --- line after the fields")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(lines[1:end], "")), &doc); err != nil {
		line, msg := yamlx.ErrorLine(err)
		if m := lenientFields(lines[1:end]); m != nil { // as Claude Code reads it
			return m, lines, end, &Problem{File: file, Line: line + 1, Message: msg}
		}
		return nil, nil, 0, problem(file, line+1, "", "front matter: %s", msg)
	}
	switch {
	case doc.Kind == 0: // empty front matter
		return &yaml.Node{Kind: yaml.MappingNode}, lines, end, nil
	case yamlx.Deref(doc.Content[0]).Kind == yaml.MappingNode:
		return yamlx.Deref(doc.Content[0]), lines, end, nil
	default:
		return nil, nil, 0, problem(file, yamlx.Deref(doc.Content[0]).Line+1, "", "front matter: want fields (name: …, description: …), got %s", yamlx.KindName(yamlx.Deref(doc.Content[0])))
	}
}

// problem is a Problem of file at line: field, and what is wrong with it.
func problem(file string, line int, field, format string, a ...any) *Problem {
	return &Problem{File: file, Line: line, Field: field, Message: fmt.Sprintf(format, a...)}
}

// Parse parses an agent file's bytes: front matter between --- lines,
// then the body. Problems name file, line and field; line numbers count the
// opening --- as line 1.
func Parse(file string, b []byte, pl Place) (Def, []Problem, *Problem) {
	var notes []Problem
	fail := func(line int, field, format string, a ...any) (Def, []Problem, *Problem) {
		return Def{}, notes, &Problem{File: file, Line: line, Field: field, Message: fmt.Sprintf(format, a...)}
	}
	note := func(line int, field, format string, a ...any) {
		notes = append(notes, Problem{File: file, Line: line, Field: field, Message: fmt.Sprintf(format, a...)})
	}
	m, lines, end, prob := frontMatter(file, b)
	if prob != nil && m == nil {
		return Def{}, nil, prob
	}
	yamlProb := prob
	if prob != nil {
		note(prob.Line, "", "the front matter is not valid YAML (%s): read as one key: value a line, as Claude Code reads it", prob.Message)
	}
	def := Def{Mode: Delegate, Model: Inherit, File: file, Scope: pl.scope, claude: pl.claude,
		System: strings.TrimSpace(strings.Join(lines[end+1:], ""))}
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := yamlx.Deref(m.Content[i]), yamlx.Deref(m.Content[i+1])
		field, line := k.Value, k.Line+1
		if first, dup := seen[field]; dup {
			return fail(k.Line+1, field, "given twice (first on line %d)", first)
		}
		seen[field] = k.Line + 1
		if v.ShortTag() == "!!null" {
			continue // "field:" with nothing: as if absent
		}
		switch field {
		case "name", "description", "mode", "model":
			s, ok := yamlx.Scalar(v)
			if !ok {
				return fail(line, field, "want a string, got %s", yamlx.KindName(v))
			}
			switch field {
			case "name":
				def.Name = s
			case "description":
				def.Description = strings.TrimSpace(s)
			case "mode":
				if s != Delegate && s != Handoff {
					return fail(line, field, "want delegate or handoff, got %q", s)
				}
				def.Mode = s
			case "model":
				def.ModelLine = line
				def.Model = agentModel(file, s, line, pl, note)
			}
		case "output_schema", "guardrails", "tools", "disallowedTools", "disallowed_tools":
			if prob := parseShape(&def, field, v, line); prob != nil {
				prob.File = file
				return def, notes, prob
			}
		case "max_steps", "maxTurns", "max_tokens", "max_cost":
			if msg := limitField(&def, field, v); msg != "" {
				return fail(line, field, "%s", msg)
			}
		default:
			if prob := unknownField(k.Line+1, field, pl, note); prob != nil {
				prob.File = file
				return def, notes, prob
			}
		}
	}
	if prob := finish(&def, seen["name"], end, yamlProb, note); prob != nil {
		if yamlProb != nil {
			return Def{}, nil, prob
		}
		return Def{}, notes, prob
	}
	return def, notes, nil
}

// finish checks the definition Parse read (its name on line nameLine, its
// front matter ending on line end): a name made an agent's, what it
// lacks, an empty body noted. Read leniently (yamlProb, the YAML's
// problem), a file that is no agent either fails with the YAML's problem.
func finish(def *Def, nameLine, end int, yamlProb *Problem, note func(int, string, string, ...any)) *Problem {
	normalizeName(def, nameLine, note)
	if prob := checkDef(def.File, *def, nameLine); prob != nil {
		if yamlProb != nil {
			return problem(def.File, yamlProb.Line, "", "front matter: %s", yamlProb.Message)
		}
		return prob
	}
	if def.System == "" {
		note(end+1, "", "the body after the front matter is empty: the agent has no system prompt of its own")
	}
	return nil
}

// agentModel judges an agent's model field: "inherit" for the session's
// model (Claude Code's sonnet, opus and haiku too, noted); offline;
// script:PATH, the path relative to the agent file's folder; or a model
// name. An untrusted workspace's file may pick none but inherit and
// offline: a script or a model name is refused, noted, and inherits.
func agentModel(file, s string, line int, pl Place, note func(int, string, string, ...any)) string {
	switch s {
	case "", Inherit:
		return Inherit
	case "sonnet", "opus", "haiku":
		note(line, "model", "%s is a Claude Code alias: the agent inherits the session's model", s)
		return Inherit
	}
	if strings.HasPrefix(s, "claude-") {
		note(line, "model", "%s is a Claude model id: the agent inherits the session's model (name a model your server serves to pick one)", s)
		return Inherit
	}
	if s == offline.Name {
		return s
	}
	if pl.untrusted {
		note(line, "model", "refused %q: the workspace is not trusted, so its agent files may only inherit the model or use offline; the agent inherits it (to trust the folder: agentty trust %s)", s, config.ShellQuote(pl.root))
		return Inherit
	}
	if p, ok := strings.CutPrefix(s, "script:"); ok {
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(file), p)
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return "script:" + p
	}
	return s
}

// toolPatterns reads a tools field: a YAML list of names, or (Claude Code's
// shape) one comma-separated string. Each is a tool name or a path.Match
// glob such as fs__*. line is the field's.
func toolPatterns(v *yaml.Node, line int) ([]string, *Problem) {
	var raw []*yaml.Node
	switch v.Kind {
	case yaml.SequenceNode:
		raw = v.Content
	case yaml.ScalarNode:
		raw = []*yaml.Node{v}
	default:
		return nil, &Problem{Line: line, Message: "want a list of tool names, got " + yamlx.KindName(v)}
	}
	pats := []string{} // not nil: an empty list is no tools
	for _, n := range raw {
		n = yamlx.Deref(n)
		s, ok := yamlx.Scalar(n)
		if !ok {
			return nil, &Problem{Line: n.Line + 1, Message: "want a tool name, got " + yamlx.KindName(n)}
		}
		for p := range strings.SplitSeq(s, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			if _, err := path.Match(p, ""); err != nil {
				return nil, &Problem{Line: n.Line + 1, Message: fmt.Sprintf("%q is not a valid pattern: %v", p, err)}
			}
			pats = append(pats, p)
		}
	}
	return pats, nil
}

// limitField reads one of an agent's limits into def: max_steps (or
// Claude Code's maxTurns), max_tokens, max_cost. It says what is wrong
// with v ("" for nothing).
func limitField(def *Def, field string, v *yaml.Node) string {
	switch field {
	case "max_steps", "maxTurns":
		var n int
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&n) != nil || n <= 0 {
			return "want a positive integer, got " + yamlx.KindName(v)
		}
		if def.MaxSteps > 0 {
			return "give max_steps or maxTurns, not both"
		}
		def.MaxSteps = n
	case "max_tokens":
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&def.MaxTokens) != nil || def.MaxTokens <= 0 {
			return "want a positive number of tokens, got " + yamlx.KindName(v)
		}
	case "max_cost":
		if v.Kind != yaml.ScalarNode || v.Decode(&def.MaxCost) != nil || def.MaxCost <= 0 {
			return "want a cost in US dollars such as 0.50, got " + yamlx.KindName(v)
		}
	}
	return ""
}
