// Package yamlx holds what agentty's YAML readers (agent files, eval
// suites) share: errors with their line, and reading yaml.v3 nodes.
package yamlx

import (
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// errLine is how yaml.v3 starts an error that has a line.
var errLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// ErrorLine splits a yaml.v3 error into its line (of the YAML text,
// 1 when it names none) and the rest.
func ErrorLine(err error) (int, string) {
	msg := err.Error()
	if m := errLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 1, strings.TrimPrefix(msg, "yaml: ")
}

// Deref follows n through aliases to what they stand for.
func Deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// Scalar is n's text when n is a scalar.
func Scalar(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		return "", false
	}
	return n.Value, true
}

// KindName says what a node is, for an error.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "nothing"
}
