// Package workflow runs declared workflows: steps of agents, tools and
// model tasks with dependencies, conditions, fan-out and retries, as one
// run of the engine. The workflow is the run's model (Planner): each of
// its decisions calls the steps that are ready (the tool agent for an agent
// or task step, the tool for a tool step, several at once when their needs
// are met), and it works out what is done from the run's own history. So a
// workflow is journaled, stepped at the gate and continued after a crash
// exactly as any run is: a finished step is never run again.
package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"

	"github.com/agentty/agentty/engine"
)

// Workflow is a parsed workflow file.
type Workflow struct {
	Name        string
	Description string
	File        string
	Inputs      []Input
	Steps       []*Step
	Output      *template.Template // nil: the last step's output
	byID        map[string]*Step
}

// Input is a declared input.
type Input struct {
	Name, Description, Default string
	Required                   bool
}

// Step is one step.
type Step struct {
	ID    string
	Kind  string // "agent", "tool" or "task"
	Agent string // agent steps
	Tool  string // tool steps
	Model string // task steps: the model ("" inherits the session's)
	// Tools narrow a task step's tools to these names (nil: the session's
	// tools; empty: none).
	Tools []string
	// Task is the rendered task of an agent or task step; Args the
	// rendered arguments of a tool step (each string value a template).
	Task    *template.Template
	Args    any
	argTmpl map[string]*template.Template // by the args' JSON path
	Needs   []string
	If      *template.Template
	Foreach *template.Template
	// MaxParallel is how many of a foreach's items run at once, a batch
	// after the one before (1: one at a time, in order); 0: all at once.
	MaxParallel int
	Retry       int
	Line        int
	// OutputCheck is the step's output_schema: whether an output meets it
	// (nil: none).
	OutputCheck func(string) (bool, string)
	// OutputSchema is the output_schema as JSON: a task step's model is
	// asked for it (an OpenAI server's response_format).
	OutputSchema json.RawMessage
}

// Decisions is the most decisions of the planner the step may take: one a
// attempt, or with max_parallel, one a batch of the most items a foreach
// may have. (The run's step limit makes room for them.)
func (st *Step) Decisions() int {
	per := 1
	if st.MaxParallel > 0 {
		per = (MaxItems + st.MaxParallel - 1) / st.MaxParallel
	}
	return (1 + st.Retry) * per
}

// Funcs are the templates' functions.
var Funcs = template.FuncMap{
	"contains": strings.Contains,
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	// jsonList is a single-action foreach's value as JSON: a text is
	// taken as the JSON it holds (a list given as an input), any other
	// value is encoded.
	"jsonList": func(v any) (string, error) {
		if s, ok := v.(string); ok {
			return s, nil
		}
		b, err := json.Marshal(v)
		return string(b), err
	},
	// fromJSON parses a JSON text (a step's output, an input) into the
	// value it holds, for range and fields.
	"fromJSON": func(s string) (any, error) {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, fmt.Errorf("fromJSON: not JSON: %v (%s)", err, engine.OneLine(s, 60))
		}
		return v, nil
	},
	"toJSON": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	// lines are a text's lines that are not blank (a trailing newline
	// makes no empty last line; a \r before a newline is not kept): the
	// list foreach takes from a command's output, {{ lines .steps.log.stdout }}.
	"lines": func(s string) []string {
		out := []string{}
		for l := range strings.Lines(s) {
			l = strings.TrimRight(l, "\r\n")
			if strings.TrimSpace(l) != "" {
				out = append(out, l)
			}
		}
		return out
	},
	// split cuts a text at each sep, as strings.Split does (so "a,b," is
	// three items, the last empty): {{ split "," .inputs.names }}.
	"split": func(sep, s string) []string { return strings.Split(s, sep) },
	"trim":  strings.TrimSpace,
	"join": func(v any, sep string) string {
		switch l := v.(type) {
		case []string:
			return strings.Join(l, sep)
		case []any:
			parts := make([]string, len(l))
			for i, x := range l {
				parts[i] = fmt.Sprint(x)
			}
			return strings.Join(parts, sep)
		}
		return fmt.Sprint(v)
	},
	// print, printf and println (the builtins) and json cap what they
	// make, as a rendered template is capped: a loop that doubles a
	// variable writes nothing until it is too late.
	"print":   func(a ...any) (string, error) { return capped(fmt.Sprint(a...)) },
	"printf":  func(f string, a ...any) (string, error) { return capped(fmt.Sprintf(f, a...)) },
	"println": func(a ...any) (string, error) { return capped(fmt.Sprintln(a...)) },
	"default": func(def, v any) any {
		if v == nil || v == "" {
			return def
		}
		return v
	},
}

var idRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,40}$`)

// Error is a problem of a workflow file, naming file, line and field.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += fmt.Sprintf(":%d", e.Line)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
	}
	return loc + ": " + e.Msg
}

// Parse reads a workflow file; file names it in errors.
func Parse(file string, b []byte) (*Workflow, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, &Error{File: file, Line: 1, Msg: "want a mapping with name, steps and the rest"}
	}
	p := parser{file: file}
	w := &Workflow{File: file, byID: map[string]*Step{}}
	doc := root.Content[0]
	var steps *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		switch k.Value {
		case "name":
			w.Name = p.str(v, "name")
		case "description":
			w.Description = p.str(v, "description")
		case "inputs":
			w.Inputs = p.inputs(v)
		case "steps":
			steps = v
		case "output":
			w.Output = p.tmpl(v, "output")
		default:
			p.fail(k.Line, k.Value, "not a field of a workflow (name, description, inputs, steps, output)")
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	if w.Name == "" {
		return nil, &Error{File: file, Line: doc.Line, Field: "name", Msg: "required"}
	}
	if steps == nil || steps.Kind != yaml.SequenceNode || len(steps.Content) == 0 {
		return nil, &Error{File: file, Line: doc.Line, Field: "steps", Msg: "want a list of at least one step"}
	}
	for i, n := range steps.Content {
		st := p.step(n, i)
		if p.err != nil {
			return nil, p.err
		}
		if _, dup := w.byID[st.ID]; dup {
			return nil, &Error{File: file, Line: st.Line, Field: "steps." + st.ID, Msg: "a second step with this id"}
		}
		if st.Needs == nil && i > 0 {
			st.Needs = []string{w.Steps[i-1].ID} // the step before
		}
		w.Steps = append(w.Steps, st)
		w.byID[st.ID] = st
	}
	for _, st := range w.Steps {
		for _, n := range st.Needs {
			if w.byID[n] == nil {
				return nil, &Error{File: file, Line: st.Line, Field: "steps." + st.ID + ".needs", Msg: fmt.Sprintf("no step is called %q", n)}
			}
		}
	}
	if cyc := w.cycle(); cyc != nil {
		return nil, &Error{File: file, Line: w.byID[cyc[0]].Line, Field: "steps." + cyc[0] + ".needs", Msg: "a cycle: " + strings.Join(cyc, " → ")}
	}
	if err := w.checkRefs(file); err != nil {
		return nil, err
	}
	return w, nil
}

// before is the set of steps id needs, directly or not.
func (w *Workflow) before(id string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(s string) {
		for _, n := range w.byID[s].Needs {
			if !seen[n] {
				seen[n] = true
				walk(n)
			}
		}
	}
	walk(id)
	return seen
}

// cycle returns the steps of a cycle of needs, or nil.
func (w *Workflow) cycle() []string {
	ids := make([]string, len(w.Steps))
	for i, st := range w.Steps {
		ids[i] = st.ID
	}
	return engine.FindCycle(ids, func(id string) []string { return w.byID[id].Needs })
}

// render fills the step's args' templates with data.
func (st *Step) renderArgs(data any) (json.RawMessage, error) {
	var walk func(v any, path string) (any, error)
	walk = func(v any, path string) (any, error) {
		switch x := v.(type) {
		case string:
			return execute(st.argTmpl[path], data)
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				r, err := walk(e, path+"."+k)
				if err != nil {
					return nil, err
				}
				out[k] = r
			}
			return out, nil
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				r, err := walk(e, fmt.Sprintf("%s[%d]", path, i))
				if err != nil {
					return nil, err
				}
				out[i] = r
			}
			return out, nil
		}
		return v, nil
	}
	v, err := walk(st.Args, "")
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// MaxRendered caps what one template may render: a workflow file is
// someone else's, and a template that writes without bound (nested ranges
// over a step's long output) would otherwise take every byte of memory.
const MaxRendered = 1 << 20

// errTooLong ends a template's rendering at MaxRendered.
var errTooLong = fmt.Errorf("rendered more than %d bytes; not rendered further", MaxRendered)

// capped refuses a string past MaxRendered.
func capped(s string) (string, error) {
	if len(s) > MaxRendered {
		return "", errTooLong
	}
	return s, nil
}

// cappedBuffer is a bytes.Buffer that refuses to grow past MaxRendered.
type cappedBuffer struct{ bytes.Buffer }

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.Len()+len(p) > MaxRendered {
		return 0, errTooLong
	}
	return c.Buffer.Write(p)
}

func execute(t *template.Template, data any) (string, error) {
	var b cappedBuffer
	if err := t.Execute(&b, data); err != nil {
		if errors.Is(err, errTooLong) {
			return "", fmt.Errorf("%s: %w", t.Name(), errTooLong)
		}
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "template: ") {
			msg = msg[i+2:]
		}
		if strings.Contains(msg, "nil pointer evaluating") {
			// .steps.X.json.FIELD of a step whose output is not JSON, or a
			// field a JSON output does not have.
			msg = "a field of something that is not there (" + msg + "): a step's .json is empty when its output is not JSON, and an object lacks the fields it does not have"
		}
		return "", fmt.Errorf("%s: %s", t.Name(), msg)
	}
	return b.String(), nil
}

// Inputs checks the given inputs against the declared ones and fills in
// the defaults: a missing required input, or one not declared, is an
// error.
func (w *Workflow) CheckInputs(given map[string]string) (map[string]string, error) {
	out := map[string]string{}
	declared := map[string]bool{}
	for _, in := range w.Inputs {
		declared[in.Name] = true
		v, ok := given[in.Name]
		switch {
		case ok:
			out[in.Name] = v
		case in.Required:
			return nil, fmt.Errorf("workflow %s needs the input %s (%s): --input %s=…", w.Name, in.Name, in.Description, in.Name)
		default:
			out[in.Name] = in.Default
		}
	}
	for k := range given {
		if !declared[k] {
			return nil, fmt.Errorf("workflow %s has no input %s", w.Name, k)
		}
	}
	return out, nil
}
