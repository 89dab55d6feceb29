package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentty/agentty/engine"
)

// maxDiffLines bounds each part of a prompt's diff.
const maxDiffLines = 12

// diffPrompt says what changed from the recorded prompt old to the
// request's: the system prompt's and the instructions' lines removed and
// added, the tools added and removed, and of each tool kept its
// description or the parameters that changed.
func diffPrompt(old *engine.Prompt, req *engine.Request) string {
	var b strings.Builder
	diffLines(&b, "the system prompt", old.System, req.System)
	diffLines(&b, "the project instructions", old.Instructions, req.Instructions)
	diffTools(&b, old.Tools, req.Tools)
	if b.Len() == 0 {
		return "\n  the tools' order changed"
	}
	return b.String()
}

// diffLines writes the lines of a that b lacks (-) and those b adds (+),
// each counted, in their order.
func diffLines(b *strings.Builder, what, a, c string) {
	if a == c {
		return
	}
	was, now := strings.Split(a, "\n"), strings.Split(c, "\n")
	removed, added := missing(was, now), missing(now, was)
	fmt.Fprintf(b, "\n  %s (%d lines, %d when recorded):", what, len(now), len(was))
	if len(removed)+len(added) == 0 {
		b.WriteString(" the same lines in another order, or spaces changed")
	}
	for i, l := range removed {
		if i == maxDiffLines {
			fmt.Fprintf(b, "\n    - … %d more", len(removed)-i)
			break
		}
		fmt.Fprintf(b, "\n    - %s", printable(l))
	}
	for i, l := range added {
		if i == maxDiffLines {
			fmt.Fprintf(b, "\n    + … %d more", len(added)-i)
			break
		}
		fmt.Fprintf(b, "\n    + %s", printable(l))
	}
}

// missing is the lines of a that b has fewer of, in a's order.
func missing(a, b []string) []string {
	left := map[string]int{}
	for _, l := range b {
		left[l]++
	}
	var out []string
	for _, l := range a {
		if left[l] > 0 {
			left[l]--
			continue
		}
		out = append(out, l)
	}
	return out
}

func diffTools(b *strings.Builder, was, now []engine.ToolSchema) {
	byName := func(ts []engine.ToolSchema) map[string]engine.ToolSchema {
		m := make(map[string]engine.ToolSchema, len(ts))
		for _, t := range ts {
			m[t.Name] = t
		}
		return m
	}
	old, cur := byName(was), byName(now)
	var added, removed []string
	for _, t := range now {
		if _, ok := old[t.Name]; !ok {
			added = append(added, t.Name)
		}
	}
	for _, t := range was {
		if _, ok := cur[t.Name]; !ok {
			removed = append(removed, t.Name)
		}
	}
	if len(added) > 0 {
		fmt.Fprintf(b, "\n  tools added: %s", printable(strings.Join(added, ", ")))
	}
	if len(removed) > 0 {
		fmt.Fprintf(b, "\n  tools removed: %s", printable(strings.Join(removed, ", ")))
	}
	lines := 0
	for _, t := range now {
		o, ok := old[t.Name]
		if !ok {
			continue
		}
		if o.Description != t.Description {
			lines++
			if lines <= maxDiffLines {
				fmt.Fprintf(b, "\n  tool %s: its description changed: %q, was %q", printable(t.Name), printable(t.Description), printable(o.Description))
			}
		}
		if !bytes.Equal(o.Parameters, t.Parameters) {
			lines++
			if lines <= maxDiffLines {
				fmt.Fprintf(b, "\n  tool %s: its parameters changed (+ added, - removed, ~ changed): %s", printable(t.Name), diffParams(o.Parameters, t.Parameters))
			}
		}
	}
	if lines > maxDiffLines {
		fmt.Fprintf(b, "\n  … %d more changes of tools", lines-maxDiffLines)
	}
}

// diffParams names the parameters (a JSON schema's properties) added,
// removed and changed, and a change of which are required.
func diffParams(was, now json.RawMessage) string {
	type schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	var o, n schema
	if json.Unmarshal(was, &o) != nil || json.Unmarshal(now, &n) != nil {
		return "not a JSON schema of an object"
	}
	var parts []string
	for _, k := range sortedKeys(n.Properties) {
		if p, ok := o.Properties[k]; !ok {
			parts = append(parts, "+"+k)
		} else if !sameJSON(p, n.Properties[k]) {
			parts = append(parts, "~"+k)
		}
	}
	for _, k := range sortedKeys(o.Properties) {
		if _, ok := n.Properties[k]; !ok {
			parts = append(parts, "-"+k)
		}
	}
	slices.Sort(o.Required)
	slices.Sort(n.Required)
	if !slices.Equal(o.Required, n.Required) {
		parts = append(parts, fmt.Sprintf("required [%s], was [%s]", strings.Join(n.Required, " "), strings.Join(o.Required, " ")))
	}
	if len(parts) == 0 {
		return "the same fields, written otherwise"
	}
	return printable(strings.Join(parts, " ")) // a recording's names: clipped, no control character
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sameJSON compares two JSON values as values.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// printable is a recorded text on one line, clipped, with control
// characters (a recording is a file anyone may have written) shown as '?'.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, engine.OneLine(s, 120))
}
