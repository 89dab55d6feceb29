package eval

// Per-case settings: what a case runs with (its agent, model, limits,
// answers and workspace), the suite's as defaults, read from the suite
// file and kept beside each recording so that a replay needs no flags.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/replay"
	"github.com/agentty/agentty/internal/yamlx"
)

// settingKeys are the keys of a suite, and of a case, that say what the
// runs run with.
var settingKeys = []string{"model", "agent", "max_steps", "max_tokens", "max_cost", "answers", "workspace"}

// maxAnswersFile bounds an answers file a suite names.
const maxAnswersFile = 1 << 20

// Settings are what a case runs with; the zero value of a field leaves it
// to the suite, the flags or the configuration.
type Settings struct {
	Agent     string  `json:"agent,omitempty"`
	Model     string  `json:"model,omitempty"`
	MaxSteps  int     `json:"max_steps,omitempty"`
	MaxTokens int     `json:"max_tokens,omitempty"`
	MaxCost   float64 `json:"max_cost,omitempty"`
	// Answers answer the runs' questions (ask_user), keyed by the
	// question's text as the model asks it.
	Answers map[string]string `json:"answers,omitempty"`
	// Workspace is a folder of the suite's folder (relative to it) copied
	// into a fresh folder for each run: the file tools and the shell work
	// there.
	Workspace string `json:"workspace,omitempty"`
	// Lines are where each field is in the suite file, for errors.
	Lines map[string]int `json:"-"`
}

// Over is s with the fields s leaves unset taken from base.
func (s Settings) Over(base Settings) Settings {
	out := s
	if out.Agent == "" {
		out.Agent = base.Agent
	}
	if out.Model == "" {
		out.Model = base.Model
	}
	if out.MaxSteps == 0 {
		out.MaxSteps = base.MaxSteps
	}
	if out.MaxTokens == 0 {
		out.MaxTokens = base.MaxTokens
	}
	if out.MaxCost == 0 {
		out.MaxCost = base.MaxCost
	}
	if out.Answers == nil {
		out.Answers = base.Answers
	}
	if out.Workspace == "" {
		out.Workspace = base.Workspace
	}
	return out
}

// empty reports whether s sets nothing.
func (s Settings) empty() bool {
	return s.Agent == "" && s.Model == "" && s.MaxSteps == 0 && s.MaxTokens == 0 && s.MaxCost == 0 && s.Answers == nil && s.Workspace == ""
}

// setting reads the value v of key k, one of settingKeys, into s.
func (p *suiteParser) setting(s *Settings, k string, v *yaml.Node, field string) {
	if s.Lines == nil {
		s.Lines = map[string]int{}
	}
	s.Lines[k] = v.Line
	switch k {
	case "agent":
		s.Agent, _ = p.str(v, field)
	case "model":
		s.Model, _ = p.str(v, field)
		if rest, ok := strings.CutPrefix(s.Model, "script:"); ok && rest != "" && !filepath.IsAbs(rest) {
			s.Model = "script:" + filepath.Join(p.dir, rest) // a script beside the suite
		}
	case "max_steps":
		s.MaxSteps, _ = p.posInt(v, field)
	case "max_tokens":
		s.MaxTokens, _ = p.posInt(v, field)
	case "max_cost":
		usd, err := strconv.ParseFloat(strings.TrimPrefix(v.Value, "$"), 64)
		if v.Kind != yaml.ScalarNode || err != nil || usd <= 0 {
			p.fail(v, field, "want a cost in US dollars such as 0.05, got %s", yamlx.KindName(v))
		}
		s.MaxCost = usd
	case "answers":
		s.Answers = p.answers(v, field)
	case "workspace":
		if dir, ok := p.str(v, field); ok {
			s.Workspace = p.fixture(v, field, dir)
		}
	}
}

// answers reads answers: a mapping of questions to answers, or the name
// of a JSON file of them (--answers' shape) in the suite's folder.
func (p *suiteParser) answers(v *yaml.Node, field string) map[string]string {
	if v.Kind == yaml.MappingNode {
		out := map[string]string{}
		for _, f := range p.facts(v, field) {
			out[f.Key] = f.Value
		}
		return out
	}
	name, ok := p.str(v, field)
	if !ok {
		return nil
	}
	if !filepath.IsLocal(name) {
		p.fail(v, field, "%s is not a file of the suite's folder: name one there, relative to the suite", name)
		return nil
	}
	b, err := config.ReadIn(p.dir, name, maxAnswersFile)
	if err != nil {
		p.fail(v, field, "%s: %v", name, err)
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		p.fail(v, field, "%s: want a JSON object of questions and their answers: %v", name, err)
		return nil
	}
	return m
}

// fixture checks a workspace: a folder of the suite's folder.
func (p *suiteParser) fixture(v *yaml.Node, field, dir string) string {
	if !filepath.IsLocal(dir) {
		p.fail(v, field, "%s is not a folder of the suite's folder: name one there, relative to the suite (refused)", dir)
		return ""
	}
	root, err := os.OpenRoot(p.dir)
	if err != nil {
		p.fail(v, field, "%v", err)
		return ""
	}
	defer root.Close()
	st, err := root.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		p.fail(v, field, "no folder %s beside the suite", dir)
	case err != nil:
		p.fail(v, field, "%s: %v", dir, err)
	case !st.IsDir():
		p.fail(v, field, "%s is not a folder", dir)
	default:
		return dir
	}
	return ""
}

// recordedSettingsPath is where the settings of a case's recording are:
// DIR/CASE.settings.json beside DIR/CASE.jsonl.
func recordedSettingsPath(dir string, c *Case) string {
	return filepath.Join(dir, FileName(c.Name)+".settings.json")
}

// writeSettings keeps what case c ran with beside its recording.
func writeSettings(dir string, c *Case, s Settings) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".settings-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), recordedSettingsPath(dir, c))
}

// recordedSettings is what case c ran with when it was recorded in dir:
// the settings kept beside the recording, else (a recording made before
// they were kept) the agent and the answers its journal shows.
func recordedSettings(dir string, c *Case, events []engine.Event) (Settings, error) {
	b, err := config.ReadSmall(recordedSettingsPath(dir, c))
	if errors.Is(err, os.ErrNotExist) {
		return journalSettings(events), nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("the recording's settings: %w", err)
	}
	var s Settings
	if err := json.Unmarshal(b, &s); err != nil {
		return Settings{}, fmt.Errorf("the recording's settings %s: %v", recordedSettingsPath(dir, c), err)
	}
	return s, nil
}

// journalSettings are the settings a journal shows: the agent its first
// run ran as and the answers its questions got.
func journalSettings(events []engine.Event) Settings {
	s := Settings{Agent: replay.Agent(events)}
	if a := replay.Answers(events); len(a) > 0 {
		s.Answers = a
	}
	return s
}
