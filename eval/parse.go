package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentty/agentty/internal/yamlx"

	"github.com/agentty/agentty/engine"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// suiteParser collects a suite's errors as it reads it.
type suiteParser struct {
	file string
	dir  string // the suite's folder, absolute: what its files are read from
	errs SuiteErrors
}

func (p *suiteParser) fail(n *yaml.Node, field, format string, a ...any) {
	line := 1
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	p.errs = append(p.errs, fileError{p.file, line, field, fmt.Sprintf(format, a...)})
}

// parseSuite reads a suite from b, read from file.
func parseSuite(file string, b []byte) (*Suite, error) {
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	p := &suiteParser{file: file, dir: dir}
	s := &Suite{File: file, Dir: dir, Name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		line, msg := yamlx.ErrorLine(err)
		return nil, SuiteErrors{{file, line, "", msg}}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, SuiteErrors{{file, 1, "", "the file is empty: a suite has cases (see agentty eval -h)"}}
	}
	top := yamlx.Deref(doc.Content[0])
	if top.Kind != yaml.MappingNode {
		return nil, SuiteErrors{{file, top.Line, "", fmt.Sprintf("want a suite (description, model, cases: …), got %s", yamlx.KindName(top))}}
	}
	var casesNode *yaml.Node
	p.fields(top, "", append(append([]string{"description"}, settingKeys...), "cases"), func(k string, kn, v *yaml.Node) {
		switch k {
		case "description":
			s.Description, _ = p.str(v, k)
		case "cases":
			casesNode = v
		default:
			p.setting(&s.Defaults, k, v, k)
		}
	})
	s.Model, s.Agent, s.AgentLine, s.MaxSteps = s.Defaults.Model, s.Defaults.Agent, s.Defaults.Lines["agent"], s.Defaults.MaxSteps
	switch {
	case casesNode == nil:
		p.fail(top, "cases", "missing: a suite needs a list of cases")
	case casesNode.Kind != yaml.SequenceNode:
		p.fail(casesNode, "cases", "want a list of cases, got %s", yamlx.KindName(casesNode))
	case len(casesNode.Content) == 0:
		p.fail(casesNode, "cases", "the list is empty")
	default:
		names := map[string]int{}
		for i, cn := range casesNode.Content {
			c := p.parseCase(yamlx.Deref(cn), fmt.Sprintf("cases[%d]", i))
			if c == nil {
				continue
			}
			if first, dup := names[c.Name]; dup {
				p.fail(cn, fmt.Sprintf("cases[%d].name", i), "%q is the name of another case (line %d): names must be unique", c.Name, first)
				continue
			}
			names[c.Name] = c.Line
			s.Cases = append(s.Cases, c)
		}
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return s, nil
}

// fields calls each for each key of mapping m, in order, after refusing
// keys not in known and keys given twice.
func (p *suiteParser) fields(m *yaml.Node, at string, known []string, each func(key string, k, v *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := yamlx.Deref(m.Content[i]), yamlx.Deref(m.Content[i+1])
		field := join(at, k.Value)
		if !slices.Contains(known, k.Value) {
			p.fail(k, field, "unknown field (known: %s)", strings.Join(known, ", "))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			p.fail(k, field, "given twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		each(k.Value, k, v)
	}
}

func join(at, field string) string {
	if at == "" {
		return field
	}
	return at + "." + field
}

func (p *suiteParser) str(v *yaml.Node, field string) (string, bool) {
	s, ok := yamlx.Scalar(v)
	if !ok || v.ShortTag() == "!!null" {
		p.fail(v, field, "want a string, got %s", yamlx.KindName(v))
		return "", false
	}
	return s, true
}

func (p *suiteParser) posInt(v *yaml.Node, field string) (int, bool) {
	n, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || n < 1 {
		p.fail(v, field, "want a whole number of at least 1, got %s", yamlx.KindName(v))
		return 0, false
	}
	return n, true
}

func (p *suiteParser) parseCase(n *yaml.Node, at string) *Case {
	if n.Kind != yaml.MappingNode {
		p.fail(n, at, "want a case (name, task, assert: …), got %s", yamlx.KindName(n))
		return nil
	}
	before := len(p.errs)
	c := &Case{Line: n.Line, at: at, Repeat: 1, MinPass: 1}
	var task, turns, name *yaml.Node
	p.fields(n, at, append([]string{"name", "task", "turns", "memory", "assert", "repeat", "min_pass"}, settingKeys...), func(k string, kn, v *yaml.Node) {
		field := join(at, k)
		switch k {
		default:
			p.setting(&c.Settings, k, v, field)
		case "name":
			name = v
			c.Name, _ = p.str(v, field)
		case "task":
			task = kn
			if s, ok := p.str(v, field); ok {
				if strings.TrimSpace(s) == "" {
					p.fail(v, field, "the task is empty")
				}
				c.Turns = []string{s}
			}
		case "turns":
			turns = kn
			if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				p.fail(v, field, "want a list of tasks, run one after another in one session, got %s", yamlx.KindName(v))
				return
			}
			for i, t := range v.Content {
				if s, ok := p.str(yamlx.Deref(t), fmt.Sprintf("%s[%d]", field, i)); ok {
					c.Turns = append(c.Turns, s)
				}
			}
		case "memory":
			c.Memory = p.facts(v, field)
		case "assert":
			if v.Kind != yaml.SequenceNode {
				p.fail(v, field, "want a list of assertions, got %s", yamlx.KindName(v))
				return
			}
			for i, an := range v.Content {
				if a := p.parseAssertion(yamlx.Deref(an), fmt.Sprintf("%s[%d]", field, i)); a != nil {
					c.Asserts = append(c.Asserts, a)
				}
			}
		case "repeat":
			c.Repeat, _ = p.posInt(v, field)
		case "min_pass":
			f, err := strconv.ParseFloat(v.Value, 64)
			if v.Kind != yaml.ScalarNode || err != nil || f <= 0 || f > 1 {
				p.fail(v, field, "want a fraction of the runs above 0 and at most 1 (0.8 for 80 %%), got %s", yamlx.KindName(v))
				return
			}
			c.MinPass = f
		}
	})
	switch {
	case name == nil:
		p.fail(n, join(at, "name"), "missing: every case has a name")
	case c.Name == "" && len(p.errs) == before:
		p.fail(name, join(at, "name"), "the name is empty")
	}
	switch {
	case task == nil && turns == nil:
		p.fail(n, join(at, "task"), "missing: a case has a task, or turns (several tasks in one session)")
	case task != nil && turns != nil:
		p.fail(turns, join(at, "turns"), "a case has a task or turns, not both")
	}
	c.stopAsserted = c.assertsStop()
	if len(p.errs) > before {
		return nil
	}
	return c
}

// assertsStop reports whether an assertion of c (or one negated) looks
// at the stop reason: a guardrail asserted is a stop asserted.
func (c *Case) assertsStop() bool {
	for _, a := range c.Asserts {
		for x := a; x != nil; x = x.not {
			if x.Kind == "stop_reason" || x.Kind == "guardrail" {
				return true
			}
		}
	}
	return false
}

// facts reads a mapping of memory facts.
func (p *suiteParser) facts(v *yaml.Node, field string) []kv {
	if v.Kind != yaml.MappingNode {
		p.fail(v, field, "want facts (key: value), got %s", yamlx.KindName(v))
		return nil
	}
	var out []kv
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := yamlx.Deref(v.Content[i]), yamlx.Deref(v.Content[i+1])
		if k.Value == "" {
			p.fail(k, field, "a fact with no key")
			continue
		}
		s, ok := p.str(val, field+"."+k.Value)
		if ok {
			out = append(out, kv{k.Value, s})
		}
	}
	return out
}

// limit reads the value of a cost_below (US dollars) or max_duration
// assertion a.
func (p *suiteParser) limit(a *assertion, v *yaml.Node, field string) {
	s, ok := p.str(v, field)
	if !ok {
		return
	}
	if a.Kind == "cost_below" {
		usd, err := strconv.ParseFloat(strings.TrimPrefix(s, "$"), 64)
		if err != nil || usd <= 0 {
			p.fail(v, field, "want a cost in US dollars such as 0.05, got %q", s)
		}
		a.usd = usd
		return
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		p.fail(v, field, "want a duration such as 30s or 2m, got %q", s)
	}
	a.dur = d
}

// parseAssertion reads one assertion: a mapping of one key, its kind.
func (p *suiteParser) parseAssertion(n *yaml.Node, at string) *assertion {
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		what := yamlx.KindName(n)
		if n.Kind == yaml.MappingNode {
			var keys []string
			for i := 0; i < len(n.Content); i += 2 {
				keys = append(keys, n.Content[i].Value)
			}
			what = fmt.Sprintf("%d keys (%s)", len(keys), strings.Join(keys, ", "))
		}
		p.fail(n, at, "an assertion is one key and its value (answer_contains: \"391\"), got %s", what)
		return nil
	}
	k, v := yamlx.Deref(n.Content[0]), yamlx.Deref(n.Content[1])
	field := join(at, k.Value)
	a := &assertion{Kind: k.Value, Line: k.Line, Field: field, Text: yamlOneLine(n)}
	before := len(p.errs)
	switch k.Value {
	case "answer_contains", "answer_equals", "judge":
		a.str, _ = p.str(v, field)
		if k.Value == "judge" && strings.TrimSpace(a.str) == "" && len(p.errs) == before {
			p.fail(v, field, "the rubric is empty")
		}
	case "answer_matches":
		if s, ok := p.str(v, field); ok {
			re, err := regexp.Compile(s)
			if err != nil {
				p.fail(v, field, "bad regexp: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
			a.re = re
		}
	case "answer_json_schema":
		a.schema = p.schema(v, field)
	case "tool_called", "tool_not_called":
		a.tool = p.toolMatch(v, field, k.Value == "tool_called")
	case "tool_order":
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			p.fail(v, field, "want a list of tool names, got %s", yamlx.KindName(v))
			break
		}
		for i, t := range v.Content {
			if s, ok := p.str(yamlx.Deref(t), fmt.Sprintf("%s[%d]", field, i)); ok {
				a.names = append(a.names, s)
			}
		}
	case "max_steps", "max_tokens":
		a.n, _ = p.posInt(v, field)
	case "stop_reason":
		if s, ok := p.str(v, field); ok {
			reasons := []string{string(engine.StopAnswered), string(engine.StopStepLimit), string(engine.StopCancelled), string(engine.StopError),
				string(engine.StopGuardrail), string(engine.StopBudget)}
			if !slices.Contains(reasons, s) {
				p.fail(v, field, "want one of %s, got %q", strings.Join(reasons, ", "), s)
			}
			a.str = s
		}
	case "guardrail":
		if s, ok := p.str(v, field); ok {
			a.str = s
		}
	case "memory":
		a.facts = p.facts(v, field)
		if len(a.facts) == 0 && len(p.errs) == before {
			p.fail(v, field, "no facts given")
		}
	case "cost_below", "max_duration":
		p.limit(a, v, field)
	case "not":
		a.not = p.parseAssertion(v, field)
	default:
		p.fail(k, field, "unknown assertion (known: %s)", strings.Join(assertKinds, ", "))
	}
	if len(p.errs) > before {
		return nil
	}
	return a
}

// toolMatch reads a tool name, or {name, args, times}.
func (p *suiteParser) toolMatch(v *yaml.Node, field string, times bool) toolMatch {
	m := toolMatch{Times: -1}
	if v.Kind == yaml.ScalarNode {
		m.Name, _ = p.str(v, field)
		return m
	}
	if v.Kind != yaml.MappingNode {
		p.fail(v, field, "want a tool name, or {name: …, args: {…}}, got %s", yamlx.KindName(v))
		return m
	}
	known := []string{"name", "args"}
	if times {
		known = append(known, "times")
	}
	var hasName bool
	p.fields(v, field, known, func(k string, kn, val *yaml.Node) {
		switch k {
		case "name":
			hasName = true
			m.Name, _ = p.str(val, field+".name")
		case "args":
			if val.Kind != yaml.MappingNode {
				p.fail(val, field+".args", "want the arguments to look for (a mapping), got %s", yamlx.KindName(val))
				return
			}
			var raw any
			if err := val.Decode(&raw); err != nil {
				p.fail(val, field+".args", "%v", err)
				return
			}
			m.Args, _ = normalizeJSON(raw).(map[string]any)
		case "times":
			n, err := strconv.Atoi(val.Value)
			if val.Kind != yaml.ScalarNode || err != nil || n < 0 {
				p.fail(val, field+".times", "want a whole number of calls, got %s", yamlx.KindName(val))
				return
			}
			m.Times = n
		}
	})
	if !hasName {
		p.fail(v, field+".name", "missing: the tool's name")
	}
	return m
}

// schema compiles a JSON Schema given as YAML, or as JSON text.
func (p *suiteParser) schema(v *yaml.Node, field string) *jsonschema.Schema {
	var raw any
	if v.Kind == yaml.ScalarNode { // JSON text, or YAML text (a block scalar)
		var m map[string]any
		if err := json.Unmarshal([]byte(v.Value), &raw); err != nil {
			if yerr := yaml.Unmarshal([]byte(v.Value), &m); yerr != nil || m == nil {
				p.fail(v, field, "want a JSON Schema (a mapping, or JSON or YAML text): %v", err)
				return nil
			}
			raw = m
		}
	} else if err := v.Decode(&raw); err != nil {
		p.fail(v, field, "%v", err)
		return nil
	}
	b, err := json.Marshal(normalizeJSON(raw))
	if err != nil {
		p.fail(v, field, "%v", err)
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		p.fail(v, field, "bad JSON schema: %v", err)
		return nil
	}
	c := engine.NewSchemaCompiler()
	url := fmt.Sprintf("eval:%s:%d", p.file, v.Line)
	if err := c.AddResource(url, doc); err != nil {
		p.fail(v, field, "bad JSON schema: %v", err)
		return nil
	}
	sch, err := c.Compile(url)
	if err != nil {
		p.fail(v, field, "bad JSON schema: %s", oneLineErr(err))
		return nil
	}
	return sch
}
