package agents

// Agent Skills (agentskills.io): a folder with SKILL.md (YAML front matter
// name and description, optional allowed-tools, license, metadata; a
// Markdown body) and files beside it (scripts/, references/, assets/). The
// model sees each skill's name and description with the system prompt,
// reads a skill's body with the tool skill, and its files with
// read_skill_file (confined to the skill's folder). Scripts run only
// through run_shell, with its approvals: a skill widens no tool.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/internal/yamlx"
)

// Skill is one skill folder as read.
type Skill struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Dir         string   `json:"dir"`
	Scope       string   `json:"scope"` // workspace or user
	License     string   `json:"license,omitempty"`
	Files       []string `json:"files"` // beside SKILL.md, relative to Dir
	body        string
}

// Skills is what reading the skill folders found.
type Skills struct {
	Skills []Skill
	Errors []Problem
	Notes  []Problem
}

// SkillPlaces are where skills are read from, the strongest first: the
// workspace's .agentty/skills, .claude/skills and .agents/skills, then
// skills beside the person's config and ~/.claude/skills.
func SkillPlaces(wsDir, wsAbs string, trusted bool, getenv func(string) string) []Place {
	var out []Place
	for _, d := range []string{".agentty", ".claude", ".agents"} {
		out = append(out, Place{dir: filepath.Join(wsDir, d, "skills"), scope: "workspace", root: wsAbs, untrusted: !trusted})
	}
	out = append(out, Place{dir: filepath.Join(filepath.Dir(config.Path(getenv)), "skills"), scope: "user"})
	if home := getenv("HOME"); home != "" {
		out = append(out, Place{dir: filepath.Join(home, ".claude", "skills"), scope: "user"})
	}
	return out
}

// LoadSkills reads the skill folders of places (each a folder holding
// SKILL.md). A name a stronger place has is noted and skipped; skills past
// the list's budget (skillsBudget) are noted and left out.
func LoadSkills(places []Place) Skills {
	var out Skills
	seen := map[string]string{} // name → its folder
	for _, pl := range places {
		parent, entries, err := pl.entries()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			out.Errors = append(out.Errors, Problem{File: pl.dir, Message: err.Error()})
			continue
		}
		for _, e := range entries {
			dir := filepath.Join(parent, e.Name())
			file := filepath.Join(dir, "SKILL.md")
			if _, err := os.Stat(file); err != nil {
				continue // not a skill folder
			}
			s, notes, prob := readSkill(dir, file, pl)
			out.Notes = append(out.Notes, notes...)
			if prob != nil {
				out.Errors = append(out.Errors, *prob)
				continue
			}
			if first, dup := seen[s.Name]; dup {
				out.Notes = append(out.Notes, Problem{File: file, Field: "name", Message: fmt.Sprintf("skill %q is also in %s, which wins; this one is not used", s.Name, first)})
				continue
			}
			seen[s.Name] = dir
			out.Skills = append(out.Skills, s)
		}
	}
	out.bound()
	return out
}

// readSkill reads the skill in dir (its SKILL.md is file) of place pl.
func readSkill(dir, file string, pl Place) (Skill, []Problem, *Problem) {
	if pl.root != "" {
		real, err := filepath.Abs(dir)
		if err == nil {
			real, err = filepath.EvalSymlinks(real)
		}
		if err != nil || !inside(pl.root, real) {
			return Skill{}, nil, problem(file, 0, "", "the skill's folder leads outside the workspace; refusing to read it")
		}
	}
	b, err := pl.read(file)
	if err != nil {
		return Skill{}, nil, problem(file, 0, "", "%v", err)
	}
	m, lines, end, prob := frontMatter(file, b)
	if prob != nil {
		return Skill{}, nil, prob
	}
	s := Skill{Dir: dir, Scope: pl.scope, body: strings.TrimSpace(strings.Join(lines[end+1:], ""))}
	var notes []Problem
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := yamlx.Deref(m.Content[i]), yamlx.Deref(m.Content[i+1])
		str, _ := yamlx.Scalar(v)
		switch line := k.Line + 1; k.Value {
		case "name":
			s.Name = strings.TrimSpace(str)
		case "description":
			s.Description = strings.TrimSpace(str)
		case "license":
			s.License = str
		case "allowed-tools", "allowed_tools":
			notes = append(notes, *problem(file, line, k.Value, "not used: a skill widens no tool (agentty's approvals stay as they are)"))
		case "metadata", "compatibility", "version":
		default:
			notes = append(notes, *problem(file, line, k.Value, "ignored: not a field of a skill (name, description, allowed-tools, license, metadata)"))
		}
	}
	switch {
	case s.Name == "":
		return Skill{}, notes, problem(file, 1, "name", "missing: every skill needs a name")
	case !agentName.MatchString(s.Name) || len(s.Name) > 64:
		return Skill{}, notes, problem(file, 1, "name", "%q is not a skill name: lower-case letters, digits and -, at most 64", s.Name)
	case s.Description == "":
		return Skill{}, notes, problem(file, 1, "description", "missing: the model reads it to choose the skill")
	}
	if base := filepath.Base(dir); base != s.Name {
		notes = append(notes, *problem(file, 1, "name", "%q is not its folder's name (%s): it is used as %q", s.Name, base, s.Name))
	}
	s.Files = skillFiles(dir)
	return s, notes, nil
}

// skillFiles are the files of a skill's folder other than SKILL.md, as
// paths relative to it: at most 200, hidden ones left out.
func skillFiles(dir string) []string {
	files := []string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(files) >= 200 {
			return filepath.SkipDir
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if rel, _ := filepath.Rel(dir, p); d.Type().IsRegular() && rel != "SKILL.md" {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files
}

func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// skillsBudget bounds the skills list of the system prompt, in tokens as
// engine.EstimateTokens counts them: a folder's thousands of skills would
// otherwise fill the context (2,000 make ~157,000 tokens). Past it the
// list is cut, and LoadSkills notes it.
const skillsBudget = 8000

// Prompt is what the system prompt says of the skills: each one's name and
// description, and how to read one; at most skillsBudget tokens, the
// skills in order until the next would pass it. "" when there are none.
func (ss *Skills) Prompt() string {
	p, _ := ss.prompt()
	return p
}

// prompt is Prompt and how many skills it lists.
func (ss *Skills) prompt() (string, int) {
	if len(ss.Skills) == 0 {
		return "", 0
	}
	var b strings.Builder
	b.WriteString("\n\n# Skills\n\nSkills are instructions for particular tasks, with files beside them. When a task fits one, call skill with its name to read it first; read_skill_file reads its files.\n")
	for i, s := range ss.Skills {
		before := b.Len()
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, engine.OneLine(s.Description, 300))
		if engine.EstimateTokens(b.String()) > skillsBudget {
			return b.String()[:before], i
		}
	}
	return b.String(), len(ss.Skills)
}

// bound keeps the skills the list has room for, noting those left out:
// a skill the model is not told of is not offered at all.
func (ss *Skills) bound() {
	_, n := ss.prompt()
	if n == len(ss.Skills) {
		return
	}
	left := ss.Skills[n:]
	ss.Notes = append(ss.Notes, Problem{File: filepath.Dir(left[0].Dir), Message: fmt.Sprintf(
		"%d %s not listed: the skills list is over its budget of %d tokens; from %s (%s) on, the model is not offered them (fewer skills, or shorter descriptions, make room)",
		len(left), engine.Plural(len(left), "skill"), skillsBudget, left[0].Name, left[0].Dir)})
	ss.Skills = ss.Skills[:n:n]
}

// Tools are skill (a skill's instructions) and read_skill_file (a file of
// its folder); none when there are no skills.
func (ss *Skills) Tools() []engine.Tool {
	if len(ss.Skills) == 0 {
		return nil
	}
	find := func(name string) (*Skill, error) {
		i := slices.IndexFunc(ss.Skills, func(s Skill) bool { return s.Name == name })
		if i < 0 {
			var names []string
			for _, s := range ss.Skills {
				names = append(names, s.Name)
			}
			return nil, fmt.Errorf("no skill %q; the skills are %s", name, strings.Join(names, ", "))
		}
		return &ss.Skills[i], nil
	}
	return []engine.Tool{{
		Name:        "skill",
		Description: "Read a skill's instructions (the skills are listed in the system prompt).",
		Schema:      []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`),
		Policy:      engine.PolicyAllow,
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Name string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			s, err := find(in.Name)
			if err != nil {
				return "", err
			}
			files := "none"
			if len(s.Files) > 0 {
				files = strings.Join(s.Files, ", ")
			}
			return fmt.Sprintf("# Skill %s\n\n%s\n\n(Its files, for read_skill_file: %s. Its scripts run only through run_shell, from %s.)", s.Name, s.body, files, s.Dir), nil
		},
	}, {
		Name:        "read_skill_file",
		Description: "Read a file of a skill's folder (a reference, a script's text, a template), by its path in that folder.",
		Schema:      []byte(`{"type":"object","properties":{"skill":{"type":"string"},"path":{"type":"string"}},"required":["skill","path"],"additionalProperties":false}`),
		Policy:      engine.PolicyAllow,
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Skill, Path string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			s, err := find(in.Skill)
			if err != nil {
				return "", err
			}
			return readSkillFile(s.Dir, in.Path)
		},
	}}
}

// readSkillFile reads path in the folder dir, which it may not leave (not
// through .., not through a link): a regular file (a FIFO is refused at
// once, as read_file refuses it), at most 256 KiB of it, text.
func readSkillFile(dir, path string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	b, more, err := config.ReadAtMostIn(abs, filepath.FromSlash(path), 256<<10)
	if _, ok := errors.AsType[*config.NotRegularError](err); ok {
		return "", err // it names the path
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	text := string(b)
	if strings.IndexByte(text, 0) >= 0 {
		return "", fmt.Errorf("%s is not a text file", path)
	}
	if more {
		text += "\n[cut at 256 KiB]"
	}
	return text, nil
}
