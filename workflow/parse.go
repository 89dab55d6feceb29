package workflow

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/agentty/agentty/engine"
	"go.yaml.in/yaml/v3"
)

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
	if err := checkRanges(t); err != nil {
		p.fail(n.Line, field, "%v", err)
		return nil
	}
	return t
}

// maxRangeWork bounds the iterations of a template's ranges over numbers,
// nested ones multiplied: {{range 1000000000}}{{end}} writes nothing (the
// output cap does not stop it) and holds a core for minutes.
const maxRangeWork = 1_000_000

// checkRanges refuses a template whose ranges over number literals, nested,
// would run more than maxRangeWork times.
func checkRanges(t *template.Template) error {
	var walk func(n parse.Node, work float64) error
	walk = func(n parse.Node, work float64) error {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return nil
			}
			for _, c := range n.Nodes {
				if err := walk(c, work); err != nil {
					return err
				}
			}
		case *parse.RangeNode:
			if len(n.Pipe.Cmds) == 1 && len(n.Pipe.Cmds[0].Args) == 1 {
				if num, ok := n.Pipe.Cmds[0].Args[0].(*parse.NumberNode); ok && num.IsInt {
					work *= float64(max(num.Int64, 1))
				}
			}
			if work > maxRangeWork {
				return fmt.Errorf("the template's ranges over numbers would run %.0f times; at most %d", work, maxRangeWork)
			}
			if err := walk(n.List, work); err != nil {
				return err
			}
			return walk(n.ElseList, work)
		case *parse.IfNode:
			if err := walk(n.List, work); err != nil {
				return err
			}
			return walk(n.ElseList, work)
		case *parse.WithNode:
			if err := walk(n.List, work); err != nil {
				return err
			}
			return walk(n.ElseList, work)
		}
		return nil
	}
	return walk(t.Tree.Root, 1)
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
		case "tools":
			st.Tools = p.names(v, field("tools"))
		case "task":
			task = v
		case "args":
			args = v
		case "needs":
			st.Needs = p.needs(v, field("needs"))
		case "if":
			st.If = p.tmpl(v, field("if"))
		case "foreach":
			st.Foreach = p.foreach(v, field("foreach"))
		case "output_schema":
			st.OutputCheck, st.OutputSchema = p.schema(v, field("output_schema"))
		case "max_parallel":
			if _, err := fmt.Sscan(v.Value, &st.MaxParallel); err != nil || st.MaxParallel < 1 || st.MaxParallel > MaxItems {
				p.fail(v.Line, field("max_parallel"), "want how many items run at once, from 1 to %d, got %q", MaxItems, v.Value)
			}
		case "retry":
			if _, err := fmt.Sscan(v.Value, &st.Retry); err != nil || st.Retry < 0 || st.Retry > 10 {
				p.fail(v.Line, field("retry"), "want a number of retries from 0 to 10, got %q", v.Value)
			}
		default:
			p.fail(k.Line, field(k.Value), "not a field of a step (id, agent, tool, task, model, tools, args, needs, if, foreach, max_parallel, retry, output_schema)")
		}
	}
	if p.err != nil {
		return st
	}
	if st.MaxParallel > 0 && st.Foreach == nil {
		p.fail(n.Line, field("max_parallel"), "only a step with foreach takes max_parallel")
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
	if st.Tools != nil && st.Kind != "task" {
		p.fail(n.Line, field("tools"), "only a task step (a task with no agent) takes tools: an agent's tools are in its file")
		return st
	}
	p.stepBody(st, n, task, args)
	return st
}

// names parses a list of names (a task step's tools).
func (p *parser) names(v *yaml.Node, field string) []string {
	if v.Kind != yaml.SequenceNode {
		p.fail(v.Line, field, "want a list of tool names, as [read_file, list_dir]")
		return nil
	}
	out := []string{}
	for _, x := range v.Content {
		out = append(out, p.str(x, field))
	}
	return out
}

// needs parses a step's needs: a step id or a list of them.
func (p *parser) needs(v *yaml.Node, field string) []string {
	needs := []string{}
	switch v.Kind {
	case yaml.SequenceNode:
		for _, x := range v.Content {
			needs = append(needs, p.str(x, field))
		}
	case yaml.ScalarNode:
		needs = append(needs, v.Value)
	default:
		p.fail(v.Line, field, "want a list of step ids")
	}
	return needs
}

// stepBody parses what step st does, as its kind says: an agent's or a
// model's task, or a tool's arguments (templates, each).
func (p *parser) stepBody(st *Step, n, task, args *yaml.Node) {
	switch st.Kind {
	case "agent", "task":
		if task == nil {
			p.fail(n.Line, "steps."+st.ID+".task", "required for an %s step", st.Kind)
			return
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
				return
			}
			st.Args = v
			p.argTemplates(v, "", st, "steps."+st.ID+".args", args.Line)
		}
	}
}

// foreach parses a foreach template; one that is a single action is
// evaluated as JSON (so that a list is a list, not Go's printing of it),
// and a text it gives (an input, a step's output) is taken as the JSON
// it holds.
func (p *parser) foreach(n *yaml.Node, field string) *template.Template {
	s := strings.TrimSpace(p.str(n, field))
	if m := regexp.MustCompile(`^\{\{-?\s*(.+?)\s*-?\}\}$`).FindStringSubmatch(s); m != nil && !strings.Contains(m[1], "}}") {
		s = "{{ jsonList (" + m[1] + ") }}"
	}
	return p.tmpl(&yaml.Node{Kind: yaml.ScalarNode, Value: s, Line: n.Line}, field)
}

// argTemplates parses every string of a tool step's args as a template.
func (p *parser) argTemplates(v any, path string, st *Step, field string, line int) {
	switch x := v.(type) {
	case string:
		t, err := template.New(path).Funcs(Funcs).Option("missingkey=error").Parse(x)
		if err == nil {
			err = checkRanges(t)
		}
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

// schema reads a step's output_schema (a JSON Schema, written in YAML):
// its check, and it as JSON.
func (p *parser) schema(v *yaml.Node, field string) (func(string) (bool, string), json.RawMessage) {
	var x any
	if err := v.Decode(&x); err != nil {
		p.fail(v.Line, field, "%v", err)
		return nil, nil
	}
	raw, err := json.Marshal(x)
	if err == nil {
		var check func(string) (bool, string)
		if check, err = engine.SchemaCheck(raw); err == nil {
			return check, raw
		}
	}
	p.fail(v.Line, field, "%v", err)
	return nil, nil
}
