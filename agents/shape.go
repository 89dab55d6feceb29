package agents

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/internal/yamlx"
)

// parseShape reads an agent file's tools, disallowedTools,
// output_schema (a JSON Schema, written in YAML) or guardrails (input and
// output lists, each {name, pattern} or {name, schema}) into def; line is
// the field's.
func parseShape(def *Def, field string, v *yaml.Node, line int) *Problem {
	switch field {
	case "tools", "disallowedTools", "disallowed_tools":
		pats, prob := toolPatterns(v, line)
		if prob != nil {
			prob.Field = field
			return prob
		}
		if field == "tools" {
			def.Tools, def.ToolsLine = pats, line
			def.claudeTools = v.Kind == yaml.ScalarNode
		} else {
			def.Deny = append(def.Deny, pats...)
		}
		return nil
	case "output_schema":
		raw, err := yamlJSON(v)
		if err == nil {
			err = engine.CheckOutputSchema(raw)
		}
		if err != nil {
			return &Problem{Line: line, Field: field, Message: err.Error()}
		}
		def.OutputSchema = raw
		return nil
	}
	if v.Kind != yaml.MappingNode {
		return &Problem{Line: line, Field: field, Message: "want input: and output: lists, got " + yamlx.KindName(v)}
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, list := yamlx.Deref(v.Content[i]), yamlx.Deref(v.Content[i+1])
		var into *[]engine.Guardrail
		switch k.Value {
		case "input":
			into = &def.Guardrails.Input
		case "output":
			into = &def.Guardrails.Output
		default:
			return &Problem{Line: k.Line + 1, Field: field, Message: fmt.Sprintf("%s: want input or output", k.Value)}
		}
		if list.Kind != yaml.SequenceNode {
			return &Problem{Line: k.Line + 1, Field: field + "." + k.Value, Message: "want a list, got " + yamlx.KindName(list)}
		}
		for _, n := range list.Content {
			g, prob := guardrail(yamlx.Deref(n))
			if prob != nil {
				prob.Field = field + "." + k.Value
				return prob
			}
			*into = append(*into, g)
		}
	}
	return nil
}

// guardrail reads one guardrail: {name, pattern}, {name, schema} or {name,
// agent}.
func guardrail(n *yaml.Node) (engine.Guardrail, *Problem) {
	var g struct {
		Name    string    `yaml:"name"`
		Pattern string    `yaml:"pattern"`
		Schema  yaml.Node `yaml:"schema"`
		Agent   string    `yaml:"agent"`
	}
	fail := func(format string, a ...any) (engine.Guardrail, *Problem) {
		return engine.Guardrail{}, &Problem{Line: n.Line + 1, Message: fmt.Sprintf(format, a...)}
	}
	if err := n.Decode(&g); err != nil {
		_, msg := yamlx.ErrorLine(err)
		return fail("%s", msg)
	}
	out := engine.Guardrail{Name: g.Name}
	kinds := 0
	for _, set := range []bool{g.Agent != "", g.Pattern != "", g.Schema.Kind != 0} {
		if set {
			kinds++
		}
	}
	switch {
	case kinds > 1:
		return fail("%s: give one of pattern, schema or agent", g.Name)
	case g.Name == "":
		return fail("a guardrail needs a name")
	case g.Agent != "":
		out.Agent = g.Agent
	case g.Pattern != "":
		re, err := regexp.Compile(g.Pattern)
		if err != nil {
			return fail("%s: pattern: %v", g.Name, err)
		}
		out.Pattern = re
	case g.Schema.Kind != 0:
		raw, err := yamlJSON(&g.Schema)
		if err == nil {
			out.Check, err = engine.SchemaCheck(raw)
		}
		if err != nil {
			return fail("%s: schema: %v", g.Name, err)
		}
	default:
		return fail("%s: give a pattern (a regular expression), a schema or an agent", g.Name)
	}
	return out, nil
}

// yamlJSON is the YAML value v as JSON.
func yamlJSON(v *yaml.Node) (json.RawMessage, error) {
	var x any
	if err := v.Decode(&x); err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// CheckGuardrails says what is wrong with def's guardrails that ask an
// agent: the agent must be one of names, and not def's own.
func (def *Def) CheckGuardrails(names map[string]bool) *Problem {
	for _, g := range append(slices.Clone(def.Guardrails.Input), def.Guardrails.Output...) {
		switch {
		case g.Agent == "":
		case g.Agent == def.Name:
			return &Problem{File: def.File, Field: "guardrails", Message: fmt.Sprintf("%s: an agent cannot judge its own text; name another", g.Name)}
		case !names[g.Agent]:
			return &Problem{File: def.File, Field: "guardrails", Message: fmt.Sprintf("%s: no agent %q is defined", g.Name, g.Agent)}
		}
	}
	return nil
}

// GuardCycles finds the agents of defs whose guardrail judges lead back to
// them, directly or through other judges (alpha judged by beta, beta by
// alpha): asking one would ask the other without end. It returns, for each
// agent in such a cycle or whose judges reach one, why it cannot be used.
func GuardCycles(defs []Def) map[string]string {
	judges := map[string][]string{}
	for i := range defs {
		d := &defs[i]
		for _, g := range append(slices.Clone(d.Guardrails.Input), d.Guardrails.Output...) {
			if g.Agent != "" && g.Agent != d.Name && !slices.Contains(judges[d.Name], g.Agent) {
				judges[d.Name] = append(judges[d.Name], g.Agent)
			}
		}
	}
	next := func(n string) []string { return judges[n] }
	out := map[string]string{}
	for i := range defs {
		name := defs[i].Name
		switch c := engine.FindCycle([]string{name}, next); {
		case c == nil:
		case slices.Contains(c, name):
			out[name] = "guardrail judges form a cycle: " + strings.Join(c, " → ")
		default:
			out[name] = "its guardrail judges reach a cycle: " + strings.Join(c, " → ")
		}
	}
	return out
}
