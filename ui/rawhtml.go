package ui

import "strings"

// Text that looks like HTML is shown as text. Glamour drops the raw HTML
// of Markdown (a tag, a comment, an autolink's brackets), so a model's
// "Vec<String>", "Option<T>" or "wrap it in a <div>" would lose what it
// wrote. Before rendering, each "<" that could open such HTML, outside a
// code block and a code span (where Markdown shows it as it is), is
// escaped with a backslash, which Markdown turns back into "<".

// escapeHTML returns text with the "<"s that Markdown would read as HTML
// escaped, outside fenced and indented code and code spans.
func escapeHTML(text string) string {
	if !strings.Contains(text, "<") {
		return text
	}
	lines := strings.Split(text, "\n")
	outsideFences(lines, func(i int) {
		l := lines[i]
		if !strings.HasPrefix(l, "    ") && !strings.HasPrefix(l, "\t") && strings.Contains(l, "<") { // an indented code block shows "<" as it is
			lines[i] = escapeLine(l)
		}
	})
	return strings.Join(lines, "\n")
}

// escapeLine escapes the "<"s of one line of Markdown that begin a tag, a
// comment, a declaration or an autolink, outside code spans (a run of
// backticks up to the next run of as many).
func escapeLine(l string) string {
	var b strings.Builder
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c == '`':
			n := len(l[i:]) - len(strings.TrimLeft(l[i:], "`"))
			run := l[i : i+n]
			if end := strings.Index(l[i+n:], run); end >= 0 && !strings.HasPrefix(l[i+n+end+n:], "`") {
				b.WriteString(l[i : i+n+end+n]) // the span, as it is
				i += n + end + n - 1
				continue
			}
			b.WriteString(run)
			i += n - 1
			continue
		case c == '\\' && i+1 < len(l):
			b.WriteString(l[i : i+2]) // an escape of the writer's own
			i++
			continue
		case c == '<' && i+1 < len(l) && opensHTML(l[i+1]):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// opensHTML reports whether a "<" followed by c may begin raw HTML or an
// autolink in Markdown.
func opensHTML(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '!' || c == '?'
}
