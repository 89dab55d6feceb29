package agents

import (
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// topKey is a line that starts a top-level field: a key at the line's
// start, a colon, then a space or the line's end.
var topKey = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*)|[ \t]*)$`)

// lenientFields reads front matter that is not valid YAML the way Claude
// Code does: each top-level `key: value` line of a field agent files have
// is a field, its value the rest of the line and the lines up to the next
// such key (a description that holds ": " unquoted, or example lines that
// begin "user: ", as many agent files have). A field whose own text is
// valid YAML (a list of tools) is read as YAML. It returns nil when the
// lines are no such fields (no key at all, or text before the first).
func lenientFields(lines []string) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	var key string
	var val []string
	line := 0
	flush := func() {
		if key == "" {
			return
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key, Line: line}, fieldValue(key, val, line))
	}
	for i, l := range lines {
		l = strings.TrimRight(l, "\r\n")
		if g := topKey.FindStringSubmatch(l); g != nil && (key == "" || lenientKeys[g[1]]) {
			flush()
			key, val, line = g[1], []string{g[2]}, i+1 // as the YAML parser counts
			continue
		}
		if key == "" {
			if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			return nil
		}
		val = append(val, l)
	}
	flush()
	if len(m.Content) == 0 {
		return nil
	}
	return m
}

// lenientKeys are the fields that start a field in a lenient reading: an
// agent's (agentty's and Claude Code's); any other "word: " line goes on
// the field before it.
var lenientKeys = map[string]bool{"name": true, "description": true, "tools": true, "model": true, "mode": true,
	"max_steps": true, "maxTurns": true, "max_tokens": true, "max_cost": true, "color": true, "disallowedTools": true,
	"mcpServers": true, "mcp_servers": true, "permissionMode": true, "allow_shell": true, "policies": true}

// fieldValue is a lenient field's value: the rest of its line (unquoted
// when it is quoted whole); for a field of several lines, its YAML when
// "key: text" is a valid mapping of one key (a list of tools), else the
// lines as text.
func fieldValue(key string, val []string, line int) *yaml.Node {
	for len(val) > 1 && strings.TrimSpace(val[len(val)-1]) == "" {
		val = val[:len(val)-1]
	}
	text := strings.Join(val, "\n")
	if len(val) == 1 {
		v := strings.TrimSpace(text)
		var doc yaml.Node // a number stays a number, if YAML reads the whole of it
		if yaml.Unmarshal([]byte(v), &doc) == nil && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Value == v {
			n := doc.Content[0]
			n.Line = line
			return n
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: line}
	}
	var doc yaml.Node
	if yaml.Unmarshal([]byte(key+": "+text+"\n"), &doc) == nil && len(doc.Content) == 1 {
		if mm := doc.Content[0]; mm.Kind == yaml.MappingNode && len(mm.Content) == 2 {
			v := mm.Content[1]
			v.Line = line
			return v
		}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.TrimSpace(text), Line: line}
}
