package commands

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Expansion is a command made the prompt of a run.
type Expansion struct {
	Prompt string
	// Attach are the paths the prompt names with @path (outside code),
	// for the caller to attach as the console's @ does.
	Attach []string
	// Notes say what was left as it is (a !`shell` line, not run).
	Notes []string
}

// Split reads a line typed as a command: "/name args" gives name and args;
// ok is false for a line that is not one ("//" escapes a message that
// starts with /, and "/" alone names nothing).
func Split(line string) (name, args string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "/")
	if !ok || rest == "" || strings.HasPrefix(rest, "/") {
		return "", "", false
	}
	name, args, _ = strings.Cut(rest, " ")
	if i := strings.IndexAny(name, "\t\n"); i >= 0 {
		name, args = name[:i], rest[i+1:]
	}
	return name, strings.TrimSpace(args), name != ""
}

// placeholder is $ARGUMENTS or $1…$9 (not $10: a digit after it leaves it).
var placeholder = regexp.MustCompile(`\$\$|\$(ARGUMENTS|[1-9])`)

// shellLine is Claude Code's !`command`: its output in the prompt.
var shellLine = regexp.MustCompile("!`([^`\n]+)`")

// Expand makes c's body the prompt for args: $ARGUMENTS is args as
// typed, $1…$9 its words (double quotes keep spaces in one), a missing one
// empty; $$ stays as written. A body that uses no placeholder gets the
// arguments after it, as "ARGUMENTS: …", as Claude Code does. !`command`
// lines are not run (a command is a prompt, never a program): they stay
// as text, and a note says so.
func (c *Command) Expand(args string) Expansion {
	words := splitArgs(args)
	used := false
	body := placeholder.ReplaceAllStringFunc(c.Body, func(m string) string {
		if m == "$$" {
			return m
		}
		used = true
		if m == "$ARGUMENTS" {
			return args
		}
		if i := int(m[1] - '1'); i < len(words) {
			return words[i]
		}
		return ""
	})
	if !used && args != "" {
		body += "\n\nARGUMENTS: " + args
	}
	x := Expansion{Prompt: body, Attach: mentions(body)}
	if n := len(shellLine.FindAllString(c.Body, -1)); n > 0 {
		x.Notes = append(x.Notes, fmt.Sprintf("/%s: %d !`command` %s left as text, not run: agentty runs nothing a command file says (the model may run them with run_shell, with its approvals)",
			c.Name, n, map[bool]string{true: "line", false: "lines"}[n == 1]))
	}
	return x
}

// splitArgs splits args into words at spaces; double quotes keep a word's
// spaces (and are dropped).
func splitArgs(args string) []string {
	var out []string
	var b strings.Builder
	quoted, in := false, false
	for _, r := range args {
		switch {
		case r == '"':
			quoted, in = !quoted, true
		case (r == ' ' || r == '\t' || r == '\n') && !quoted:
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// mentions are the paths text names with @ at a word's start, as the
// console's @ reads them, outside fenced code blocks and `code`: a
// decorator in an example is not a file.
func mentions(text string) []string {
	var out []string
	fenced := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for i, part := range strings.Split(line, "`") {
			if i%2 == 1 {
				continue // inside `code`
			}
			for _, w := range strings.Fields(part) {
				p, ok := strings.CutPrefix(w, "@")
				if p = strings.TrimRight(p, ",.;:!?)\"'"); ok && p != "" && !strings.HasPrefix(p, "@") && !slices.Contains(out, p) {
					out = append(out, p)
				}
			}
		}
	}
	return out
}
