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
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"
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
	// Task is the rendered task of an agent or task step; Args the
	// rendered arguments of a tool step (each string value a template).
	Task    *template.Template
	Args    any
	argTmpl map[string]*template.Template // by the args' JSON path
	Needs   []string
	If      *template.Template
	Foreach *template.Template
	Retry   int
	Line    int
}

// Funcs are the templates' functions.
var Funcs = template.FuncMap{
	"contains": strings.Contains,
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
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
	for _, st := range w.Steps {
		before := w.before(st.ID)
		for _, ref := range st.refs() {
			if w.byID[ref] == nil {
				return nil, &Error{File: file, Line: st.Line, Field: "steps." + st.ID, Msg: fmt.Sprintf("a template refers to step %s, and there is none", ref)}
			}
			if !before[ref] {
				// Its output would be read before it exists, and an if could
				// change its mind later.
				return nil, &Error{File: file, Line: st.Line, Field: "steps." + st.ID + ".needs",
					Msg: fmt.Sprintf("a template refers to step %s, which this step does not need: add it to needs", ref)}
			}
		}
	}
	return w, nil
}

var stepRef = regexp.MustCompile(`\.steps\.([A-Za-z][A-Za-z0-9_]*)`)

// refs are the steps the step's templates read.
func (st *Step) refs() []string {
	var srcs []string
	for _, t := range []*template.Template{st.Task, st.If, st.Foreach} {
		if t != nil && t.Tree != nil {
			srcs = append(srcs, t.Tree.Root.String())
		}
	}
	for _, t := range st.argTmpl {
		if t.Tree != nil {
			srcs = append(srcs, t.Tree.Root.String())
		}
	}
	var out []string
	for _, src := range srcs {
		for _, m := range stepRef.FindAllStringSubmatch(src, -1) {
			out = append(out, m[1])
		}
	}
	return out
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
	state := map[string]int{} // 1 visiting, 2 done
	var path []string
	var visit func(id string) []string
	visit = func(id string) []string {
		switch state[id] {
		case 1:
			for i, p := range path {
				if p == id {
					return append(append([]string(nil), path[i:]...), id)
				}
			}
		case 2:
			return nil
		}
		state[id] = 1
		path = append(path, id)
		for _, n := range w.byID[id].Needs {
			if c := visit(n); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		state[id] = 2
		return nil
	}
	for _, st := range w.Steps {
		if c := visit(st.ID); c != nil {
			return c
		}
	}
	return nil
}

type parser struct {
	file string
	err  error
}

func (p *parser) fail(line int, field, format string, a ...any) {
	if p.err == nil {
		p.err = &Error{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
}

func (p *parser) str(n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode {
		p.fail(n.Line, field, "want a string")
		return ""
	}
	return n.Value
}

func (p *parser) tmpl(n *yaml.Node, field string) *template.Template {
	s := p.str(n, field)
	if p.err != nil {
		return nil
	}
	t, err := template.New(field).Funcs(Funcs).Option("missingkey=error").Parse(s)
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "template: ") {
			msg = msg[i+2:]
		}
		p.fail(n.Line, field, "the template does not parse: %s", msg)
		return nil
	}
	return t
}

func (p *parser) inputs(n *yaml.Node) []Input {
	if n.Kind != yaml.MappingNode {
		p.fail(n.Line, "inputs", "want a mapping of input names")
		return nil
	}
	var out []Input
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		in := Input{Name: k.Value}
		if v.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(v.Content); j += 2 {
				f, x := v.Content[j], v.Content[j+1]
				switch f.Value {
				case "description":
					in.Description = p.str(x, "inputs."+k.Value+".description")
				case "default":
					in.Default = p.str(x, "inputs."+k.Value+".default")
				case "required":
					if x.Value != "true" && x.Value != "false" {
						p.fail(x.Line, "inputs."+k.Value+".required", "want true or false, got %q", x.Value)
					}
					in.Required = x.Value == "true"
				default:
					p.fail(f.Line, "inputs."+k.Value+"."+f.Value, "not a field of an input (description, default, required)")
				}
			}
		} else if v.Kind != yaml.ScalarNode || v.Value != "" {
			p.fail(v.Line, "inputs."+k.Value, "want {description, default, required}")
		}
		out = append(out, in)
	}
	return out
}

func (p *parser) step(n *yaml.Node, i int) *Step {
	st := &Step{Line: n.Line}
	if n.Kind != yaml.MappingNode {
		p.fail(n.Line, fmt.Sprintf("steps[%d]", i), "want a mapping")
		return st
	}
	field := func(f string) string { return fmt.Sprintf("steps[%d].%s", i, f) }
	var kinds []string
	var task, args *yaml.Node
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		switch k.Value {
		case "id":
			st.ID = p.str(v, field("id"))
		case "agent":
			st.Agent, kinds = p.str(v, field("agent")), append(kinds, "agent")
		case "tool":
			st.Tool, kinds = p.str(v, field("tool")), append(kinds, "tool")
		case "model":
			st.Model = p.str(v, field("model"))
		case "task":
			task = v
		case "args":
			args = v
		case "needs":
			st.Needs = []string{}
			switch v.Kind {
			case yaml.SequenceNode:
				for _, x := range v.Content {
					st.Needs = append(st.Needs, p.str(x, field("needs")))
				}
			case yaml.ScalarNode:
				st.Needs = append(st.Needs, v.Value)
			default:
				p.fail(v.Line, field("needs"), "want a list of step ids")
			}
		case "if":
			st.If = p.tmpl(v, field("if"))
		case "foreach":
			st.Foreach = p.foreach(v, field("foreach"))
		case "retry":
			if _, err := fmt.Sscan(v.Value, &st.Retry); err != nil || st.Retry < 0 || st.Retry > 10 {
				p.fail(v.Line, field("retry"), "want a number of retries from 0 to 10, got %q", v.Value)
			}
		default:
			p.fail(k.Line, field(k.Value), "not a field of a step (id, agent, tool, task, model, args, needs, if, foreach, retry)")
		}
	}
	if p.err != nil {
		return st
	}
	if !idRe.MatchString(st.ID) {
		p.fail(n.Line, field("id"), "want an id of letters, digits and _ (starting with a letter), got %q", st.ID)
		return st
	}
	switch {
	case len(kinds) > 1:
		p.fail(n.Line, field(kinds[1]), "a step is one of agent, tool or task (with model)")
	case len(kinds) == 1:
		st.Kind = kinds[0]
	case task != nil:
		st.Kind = "task"
	default:
		p.fail(n.Line, "steps."+st.ID, "an unknown kind of step: give agent (with task), tool (with args), or task (with model)")
	}
	switch st.Kind {
	case "agent", "task":
		if task == nil {
			p.fail(n.Line, "steps."+st.ID+".task", "required for an %s step", st.Kind)
			return st
		}
		if args != nil {
			p.fail(args.Line, "steps."+st.ID+".args", "only a tool step takes args")
		}
		st.Task = p.tmpl(task, "steps."+st.ID+".task")
	case "tool":
		if task != nil {
			p.fail(task.Line, "steps."+st.ID+".task", "a tool step takes args, not a task")
		}
		st.Args, st.argTmpl = map[string]any{}, map[string]*template.Template{}
		if args != nil {
			var v any
			if err := args.Decode(&v); err != nil {
				p.fail(args.Line, "steps."+st.ID+".args", "%v", err)
				return st
			}
			st.Args = v
			p.argTemplates(v, "", st, "steps."+st.ID+".args", args.Line)
		}
	}
	return st
}

// foreach parses a foreach template; one that is a single action is
// evaluated as JSON (so that a list is a list, not Go's printing of it).
func (p *parser) foreach(n *yaml.Node, field string) *template.Template {
	s := strings.TrimSpace(p.str(n, field))
	if m := regexp.MustCompile(`^\{\{-?\s*(.+?)\s*-?\}\}$`).FindStringSubmatch(s); m != nil && !strings.Contains(m[1], "}}") {
		s = "{{ json (" + m[1] + ") }}"
	}
	return p.tmpl(&yaml.Node{Kind: yaml.ScalarNode, Value: s, Line: n.Line}, field)
}

// argTemplates parses every string of a tool step's args as a template.
func (p *parser) argTemplates(v any, path string, st *Step, field string, line int) {
	switch x := v.(type) {
	case string:
		t, err := template.New(path).Funcs(Funcs).Option("missingkey=error").Parse(x)
		if err != nil {
			p.fail(line, field+path, "the template does not parse: %v", err)
			return
		}
		st.argTmpl[path] = t
	case map[string]any:
		for k, e := range x {
			p.argTemplates(e, path+"."+k, st, field, line)
		}
	case []any:
		for i, e := range x {
			p.argTemplates(e, fmt.Sprintf("%s[%d]", path, i), st, field, line)
		}
	}
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

func execute(t *template.Template, data any) (string, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "template: ") {
			msg = msg[i+2:]
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
