// Package eval runs suites of agent test cases (agentty eval): a suite
// file's cases (a task or several turns) with assertions on the answer,
// the tools called, the steps, memory, tokens and time; run concurrently,
// each in a journaled session, recorded and replayed; reported as a table,
// JUnit and JSON.
package eval

// Suite files of agentty eval: parsing (every error names file, line and
// field, all found before anything runs) and the assertions.

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// Suite is one suite file.
type Suite struct {
	File        string
	Dir         string // the file's folder, absolute: the folder of its fixtures
	Name        string // the file's name without its extension
	Description string
	Model       string
	Agent       string
	AgentLine   int // where agent: is, for an error about it
	MaxSteps    int
	// Defaults are the suite's settings (Model, Agent and MaxSteps among
	// them): a case's own are over them.
	Defaults Settings
	Cases    []*Case
}

// Case is one case of a suite: one task or several turns in one
// session, checked by its assertions after the run; with Repeat, run that
// many times and passing when at least MinPass of the runs pass.
type Case struct {
	Name    string
	Line    int
	at      string // where it is in the file, for errors: cases[2]
	Turns   []string
	Memory  []kv // facts to start with, in file order
	Asserts []*assertion
	Repeat  int
	MinPass float64
	// Settings are the case's own: its agent, model, limits, answers and
	// workspace (over the flags and the suite's Defaults).
	Settings Settings
	// stopAsserted: an assertion (or a negated one) looks at the stop
	// reason; otherwise a run must answer to pass.
	stopAsserted bool
}

type kv struct{ Key, Value string }

// assertKinds are the assertions a case may make, in the order the errors
// list them.
var assertKinds = []string{"answer_contains", "answer_equals", "answer_matches", "answer_json_schema",
	"tool_called", "tool_not_called", "tool_order", "max_steps", "stop_reason", "guardrail", "memory",
	"max_tokens", "cost_below", "max_duration", "judge", "not"}

// assertion is one check of a case's outcome.
type assertion struct {
	Kind  string
	Line  int
	Field string // where it is in the file, for messages: cases[0].assert[2]
	Text  string // the assertion as written, one line

	str    string
	re     *regexp.Regexp
	schema *jsonschema.Schema
	tool   toolMatch
	names  []string
	n      int
	dur    time.Duration
	usd    float64
	facts  []kv
	not    *assertion
}

// toolMatch is a tool_called (or tool_not_called) condition: the tool's
// name, arguments the call must include (a subset match), and how many
// calls must match (-1: at least one).
type toolMatch struct {
	Name  string
	Args  map[string]any
	Times int
}

// fileError is an error in a suite file at a line and field.
type fileError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e fileError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// SuiteErrors are every error found in a suite file.
type SuiteErrors []fileError

func (es SuiteErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Load reads and checks a suite file.
func Load(path string) (*Suite, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseSuite(path, b)
}

func oneLineErr(err error) string { return engine.OneLine(err.Error(), 300) }

// normalizeJSON makes what YAML decoded into what JSON would have: maps
// keyed by strings, numbers as float64.
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeJSON(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = normalizeJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeJSON(e)
		}
		return out
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return v
}

// yamlOneLine is a node written back as one line of flow YAML.
func yamlOneLine(n *yaml.Node) string {
	if len(n.Content) == 2 && n.Content[1].Kind == yaml.ScalarNode && n.Content[1].Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		// A block of text (a schema, a rubric): its words, not its escapes.
		return engine.OneLine(n.Content[0].Value+": "+n.Content[1].Value, 120)
	}
	c := *n
	c.Style = yaml.FlowStyle
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	if err := enc.Encode(&c); err != nil {
		return n.Content[0].Value
	}
	enc.Close()
	text := strings.TrimSpace(b.String())
	if strings.HasPrefix(text, "{") && strings.HasSuffix(text, "}") {
		text = text[1 : len(text)-1] // one key: no braces needed
	}
	return engine.OneLine(text, 120)
}
