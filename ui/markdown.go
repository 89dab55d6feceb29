package ui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/x/ansi"
)

// How the Chat lays text out: Markdown through glamour, plain text wrapped
// on cell boundaries, code and tool results hung under their first row.

func (c *chat) renderer(width int) *glamour.TermRenderer {
	if r, ok := c.renderers[width]; ok {
		return r
	}
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(c.style), glamour.WithWordWrap(width), glamour.WithEmoji())
	if err != nil {
		r = nil
	}
	c.renderers[width] = r
	return r
}

// markdown renders text as Markdown at width, a block at a time (see
// blocks.go): the blocks' lines, a blank line between blocks.
func (c *chat) markdown(text string, width int) []string {
	var lines []string
	n := 0
	for _, b := range splitBlocks(text) {
		lines, n = addBlock(lines, n, c.block(b, width))
	}
	return lines
}

// addBlock appends a block's lines to lines, after a blank line when n
// blocks come before it, and returns them and the number of blocks. A
// block with no lines (a link's definition) adds nothing.
func addBlock(lines []string, n int, block []string) ([]string, int) {
	if len(block) == 0 {
		return lines, n
	}
	if n > 0 {
		lines = append(lines, "")
	}
	return append(lines, block...), n + 1
}

// block renders one block of Markdown at width, with no blank line at
// either end. Glamour renders it, but for a table wider than width, which
// is drawn with its cells wrapped (table.go).
func (c *chat) block(text string, width int) []string {
	lines := strings.Split(text, "\n")
	if from, to, ok := tableAt(lines); ok {
		if t, ok := parseTable(strings.Join(lines[from:to], "\n")); ok && !t.fitsGlamour(width) {
			var out []string
			n := 0
			out, n = addBlock(out, n, c.block(strings.Join(lines[:from], "\n"), width))
			out, n = addBlock(out, n, t.draw(width, c.asciiRules()))
			out, _ = addBlock(out, n, c.block(strings.Join(lines[to:], "\n"), width))
			return out
		}
	}
	lines = c.glamourLines(text, width)
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// glamourLines renders text as Markdown through glamour at width, falling
// back to plain wrapping.
func (c *chat) glamourLines(text string, width int) []string {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if r := c.renderer(width); r != nil {
		md, held := holdHyphens(hangCode(escapeHTML(text), width-codeMargins))
		if out, err := r.Render(md); err == nil {
			if held {
				out = strings.ReplaceAll(out, heldHyphen, "-")
			}
			lines := strings.Split(strings.Trim(out, "\n"), "\n")
			for i, l := range lines {
				lines[i] = strings.TrimRight(l, " ")
			}
			for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[0])) == "" {
				lines = lines[1:]
			}
			// Glamour does not break a word longer than the width (a URL,
			// a hash, a sentence in Chinese) or a line of code: they are
			// broken here, never cut.
			return wrapWide(lines, width)
		}
	}
	return wrapRows(text, width)
}

// tail keeps the last n bytes of s, on a rune boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// plainLines shows what the person typed as typed (not as Markdown, whose
// emphasis would eat the stars of "17*23 and 6*7"), wrapped at width
// under the same margin as an answer.
func plainLines(text string, width int) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		for _, r := range wrapWide(wrapRows(l, width-len(markdownMargin)), width-len(markdownMargin)) {
			out = append(out, strings.TrimRight(markdownMargin+r, " "))
		}
	}
	return out
}

// wrapRows wraps s at width on spaces: a word that fits on the next row
// (a flag, a path with a hyphen) is moved there whole; a longer one is
// broken where the width ends.
func wrapRows(s string, width int) []string {
	if width < 1 {
		width = 1
	}
	held := strings.Contains(s, "-") && !strings.Contains(s, heldHyphen)
	if held { // ansi.Wrap breaks after every hyphen
		s = strings.ReplaceAll(s, "-", heldHyphen)
	}
	out := ansi.Wrap(s, width, " ")
	if held {
		out = strings.ReplaceAll(out, heldHyphen, "-")
	}
	return strings.Split(out, "\n")
}

// codeMargins is what glamour's styles put around a code block's text:
// the document's margin on each side, and the block's own margin.
const codeMargins = 2*len(markdownMargin) + 2

// hangCode wraps the long lines of the plain code blocks of text (fenced
// with no language: a file the offline model quotes) at width with a
// hanging indent, as hangRows does, so that a row that continues a
// numbered line does not start at the margin and read as a line of its
// own. Glamour would wrap them after the margin. A block with a language
// is left to glamour: breaking its lines here would change how they are
// highlighted.
func hangCode(text string, width int) string {
	if !strings.Contains(text, "```") && !strings.Contains(text, "~~~") {
		return text
	}
	lines := strings.Split(text, "\n")
	out := lines[:0:0]
	fence, plain := "", false
	for _, l := range lines {
		body := strings.TrimLeft(l, " ")
		switch {
		case fence == "" && len(l)-len(body) <= 3:
			if fence = fenceOf(body); fence != "" {
				plain = strings.TrimSpace(body[len(fence):]) == ""
			}
		case fence != "" && strings.HasPrefix(body, fence) && strings.Trim(body, fence[:1]+" ") == "":
			fence = ""
		case fence != "" && plain && ansi.StringWidth(l) > width:
			out = append(out, hangRows(l, width)...)
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// heldHyphen stands in for a hyphen while glamour wraps text: U+2011, the
// non-breaking hyphen, one cell wide like the hyphen it holds.
const heldHyphen = "\u2011"

// holdHyphens hands glamour the hyphens of text as heldHyphen, and reports
// whether it did. Glamour wraps paragraphs with reflow's wordwrap, which
// may break a line after a hyphen but does not count the hyphen in the
// line's width: a row with k hyphens ran k cells past the width, and
// breaking it again at the width left a word alone on a row ("--model or
// OPENAI_API_KEY for a" / "real" / "one.)"). Held, a hyphen is counted, and
// words are broken only at spaces.
//
// Hyphens that are Markdown stay: a list's marker, a rule or a heading's
// underline, a table's delimiter row, an HTML comment, and everything in a
// fenced code block (its highlighter reads them). So do those in a URL, for
// the autolink that finds it. Text that holds a U+2011 of its own is left
// as it is.
func holdHyphens(text string) (string, bool) {
	if !strings.Contains(text, "-") || strings.Contains(text, heldHyphen) {
		return text, false
	}
	lines := strings.Split(text, "\n")
	held := false
	outsideFences(lines, func(i int) {
		l := lines[i]
		body := strings.TrimLeft(l, " >")
		if !strings.Contains(l, "-") || strings.Trim(body, "-|: ") == "" || strings.Contains(l, "<!--") || strings.Contains(l, "-->") {
			return
		}
		lead := len(l) - len(body)
		if strings.HasPrefix(body, "- ") || body == "-" {
			lead++ // a list's marker
		}
		words := strings.SplitAfter(l[lead:], " ")
		for j, w := range words {
			if strings.Contains(w, "-") && !strings.Contains(w, "://") && !strings.HasPrefix(w, "www.") {
				words[j] = strings.ReplaceAll(w, "-", heldHyphen)
				held = true
			}
		}
		lines[i] = l[:lead] + strings.Join(words, "")
	})
	if !held {
		return text, false
	}
	return strings.Join(lines, "\n"), true
}

// outsideFences calls f with the index of each of lines that is prose:
// not in a fenced code block, and not a fence.
func outsideFences(lines []string, f func(i int)) {
	fence := ""
	for i, l := range lines {
		body := strings.TrimLeft(l, " >")
		switch {
		case fence != "":
			if strings.HasPrefix(body, fence) && strings.Trim(body, fence[:1]+" ") == "" {
				fence = ""
			}
		case fenceOf(body) != "":
			fence = fenceOf(body)
		default:
			f(i)
		}
	}
}

// fenceOf returns the fence a line opens a code block with ("```", "~~~~"),
// or "".
func fenceOf(body string) string {
	for _, c := range []string{"`", "~"} {
		n := len(body) - len(strings.TrimLeft(body, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// hangRows wraps one line of plain text (a tool's result, a detail) with a
// hanging indent: the rows after the first start under its text, after its
// indentation or, on a numbered line (read_file's "    12\ttext", its tab
// made spaces), at the tab stop after the number, so that they do not read
// as lines of their own. Indentation past half the width is cut to half.
func hangRows(l string, width int) []string {
	width = max(width, 1)
	if ansi.StringWidth(l) <= width {
		return []string{l}
	}
	lead := len(l) - len(strings.TrimLeft(l, " "))
	hang := lead
	if n := len(l[hang:]) - len(strings.TrimLeft(l[hang:], "0123456789")); n > 0 {
		sp := len(l[hang+n:]) - len(strings.TrimLeft(l[hang+n:], " "))
		if stop := (hang + n + tabWidth) / tabWidth * tabWidth; hang+n+sp >= stop && sp > 0 { // a number, then a tab
			hang = stop
		}
	}
	text := l[hang:]
	if hang*2 > width { // indentation past half the width is cut to half
		hang = min(lead, width/2)
		text = strings.TrimLeft(l, " ")
	}
	rows := wrapRows(text, width-hang)
	for i := range rows {
		if i == 0 {
			rows[i] = l[:hang] + rows[i] // spaces, or spaces and a number
		} else {
			rows[i] = strings.Repeat(" ", hang) + rows[i]
		}
	}
	return rows
}

// asciiRules reports whether the style draws tables with ASCII rules.
func (c *chat) asciiRules() bool { return c.style == "notty" || c.style == "ascii" }
