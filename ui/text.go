package ui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Everything the console draws that it did not write itself (a model's
// answer, a tool's result, a file, an MCP server, a journal) is made safe at
// one boundary, before anything measures or draws it: Sanitize, applied to
// each event as it enters the console's state (live and on resume), to
// notices and to the picker's titles. Glamour and lipgloss then only ever see
// clean text, and their own styling is the only escape sequence that reaches
// the terminal.

// tabWidth is the distance between tab stops.
const tabWidth = 8

// Sanitize returns s made safe to measure and draw in a terminal: nothing in
// it can move the cursor, change the terminal's state or make a line wider
// than its measured width. One rule, applied rune by rune:
//
//   - "\n" is kept; "\r\n" becomes "\n".
//   - A tab becomes spaces up to the next multiple of 8 columns of its line
//     (columns counted in cells, so after wide characters too).
//   - ESC becomes "␛", so the escape sequence it began (a title, a clipboard
//     write, a hyperlink, a cursor move, a colour) shows as the text it is:
//     ESC ] 0 ; t BEL is drawn "␛]0;t^G".
//   - Every other C0 control, and DEL, is shown in caret notation: "\r" is
//     "^M", BEL "^G", NUL "^@", DEL "^?".
//   - A C1 control (U+0080–U+009F) is shown as its 7-bit form: U+009B (CSI)
//     is "␛[".
//   - A bidirectional control, which would reorder what is drawn after it
//     (a "Trojan Source" spoof), is shown as its abbreviation in angle
//     brackets: U+202E (right-to-left override) is "⟨RLO⟩". These are
//     U+061C ALM, U+200E LRM, U+200F RLM, U+202A LRE, U+202B RLE, U+202C PDF,
//     U+202D LRO, U+202E RLO, U+2066 LRI, U+2067 RLI, U+2068 FSI and U+2069
//     PDI.
//   - A character of no width of its own (a combining accent, a joiner, a
//     variation selector) that begins a line is put on a dotted circle,
//     "◌", as such a mark is shown alone: otherwise it joins whatever is
//     drawn before the line (a pane's border) into one character.
//   - An emoji skin-tone modifier (U+1F3FB–U+1F3FF), the zero-width joiner
//     (U+200D) and the emoji variation selector (U+FE0F) are left out:
//     terminals draw what they join at different widths (👍🏽 is two cells
//     in one, four in tmux 3.3), and a line measured otherwise than drawn
//     shifts the borders after it.
//   - A byte that is not UTF-8 becomes U+FFFD.
//
// Text with none of these is returned as it is, without allocating. It is
// safe for concurrent use.
func Sanitize(s string) string {
	if isClean(s) {
		return s
	}
	var z Sanitizer
	return z.write(s, true)
}

// sanitized is Sanitize that also says whether s changed.
func sanitized(s string) (string, bool) {
	if isClean(s) {
		return s, false
	}
	var z Sanitizer
	return z.write(s, true), true
}

// byteClass sorts bytes for isClean: 0 printable ASCII or "\n", 1 a control,
// 2 the start of a multi-byte rune (or a stray byte).
var byteClass = func() (t [256]uint8) {
	for i := range t {
		switch {
		case i >= 0x80:
			t[i] = 2
		case i < 0x20 && i != '\n', i == 0x7f:
			t[i] = 1
		}
	}
	return t
}()

// isClean reports whether Sanitize would leave s as it is.
func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		switch byteClass[s[i]] {
		case 0:
			continue
		case 1:
			return false
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if size == 1 || r <= 0x9f || bidiName(r) != "" || unsteady(r) { // a stray byte, a C1 control, a bidi control, a joiner
			return false
		}
		if (i == 0 || s[i-1] == '\n') && ansi.StringWidth(s[i:i+size]) == 0 {
			return false // a mark that would begin its line
		}
		i += size - 1
	}
	return true
}

// unsteady reports whether r joins characters into one that terminals
// draw at different widths: an emoji skin-tone modifier (👍🏽 is two cells
// in one terminal, four in tmux), the zero-width joiner (👨‍👩‍👧), the
// emoji variation selector (❤️). Sanitize leaves them out, so that what is
// measured is what every terminal draws.
func unsteady(r rune) bool {
	return r >= 0x1f3fb && r <= 0x1f3ff || r == 0x200d || r == 0xfe0f
}

// bidiName returns the abbreviation of a bidirectional control, or "".
func bidiName(r rune) string {
	switch {
	case r == 0x061c:
		return "ALM"
	case r < 0x200e || r > 0x2069:
		return ""
	case r == 0x200e:
		return "LRM"
	case r == 0x200f:
		return "RLM"
	case r >= 0x202a && r <= 0x202e:
		return [...]string{"LRE", "RLE", "PDF", "LRO", "RLO"}[r-0x202a]
	case r >= 0x2066:
		return [...]string{"LRI", "RLI", "FSI", "PDI"}[r-0x2066]
	}
	return ""
}

// Sanitizer applies Sanitize's rule to text that comes in pieces (the text
// deltas of a streamed answer, the writes to a terminal): it carries the
// column of the current line from piece to piece, for tabs, and holds back
// what a piece may end in the middle of (a "\r" that may be half of "\r\n",
// a rune cut in two) until the next piece. The pieces' results joined are
// Sanitize of the pieces joined. Its zero value is ready to use; it is not
// safe for concurrent use.
type Sanitizer struct {
	col  int    // cells of the current line written so far
	held string // the end of the last piece, not yet written
}

// Sanitize returns the next piece made safe, less what it holds back.
func (z *Sanitizer) Sanitize(piece string) string { return z.write(piece, false) }

// Flush returns what the last piece held back, made safe; call it when
// nothing more comes.
func (z *Sanitizer) Flush() string { return z.write("", true) }

// write sanitizes the next piece. final says that nothing follows, so
// nothing is held back.
func (z *Sanitizer) write(s string, final bool) string {
	if z.held != "" {
		s, z.held = z.held+s, ""
	}
	if !final && isClean(s) {
		if i := strings.LastIndexByte(s, '\n'); i >= 0 {
			z.col = ansi.StringWidth(s[i+1:])
		} else {
			z.col += ansi.StringWidth(s)
		}
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	col := z.col // cells of the line before seg
	seg := 0     // where the part of the line since its last tab begins in b
	i := 0
loop:
	for i < len(s) {
		c := s[i]
		if c == '\n' {
			b.WriteByte('\n')
			col, seg = 0, b.Len()
			i++
			continue
		}
		if byteClass[c] == 0 {
			j := i + 1
			for j < len(s) && byteClass[s[j]] == 0 && s[j] != '\n' {
				j++
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		if c < 0x80 {
			if !z.control(&b, s, i, final, &col, &seg) {
				break loop
			}
			i++
			continue
		}
		size := z.nonASCII(&b, s[i:], final, col == 0 && b.Len() == seg)
		if size == 0 {
			break loop
		}
		i += size
	}
	out := b.String()
	z.col = col + ansi.StringWidth(out[seg:])
	return out
}

// control writes the ASCII control character s[i] as it is shown, keeping
// col (the cells before seg) and seg (where the text since the last tab
// begins in b) for tabs. It says false when s[i] is a "\r" that ends a
// piece that is not the last: it is held back.
func (z *Sanitizer) control(b *strings.Builder, s string, i int, final bool, col, seg *int) bool {
	switch c := s[i]; c {
	case '\t':
		*col += ansi.StringWidth(b.String()[*seg:])
		n := tabWidth - *col%tabWidth
		b.WriteString("        "[:n])
		*col += n
		*seg = b.Len()
	case '\r':
		switch {
		case i+1 < len(s) && s[i+1] == '\n':
			// "\r\n" is a line break: the "\n" is written next.
		case i+1 == len(s) && !final:
			z.held = "\r"
			return false
		default:
			b.WriteString("^M")
		}
	case 0x1b:
		b.WriteString("␛")
	case 0x7f:
		b.WriteString("^?")
	default:
		b.WriteByte('^')
		b.WriteByte(c + 0x40)
	}
	return true
}

// nonASCII writes the rune s begins with as it is shown and returns its
// size, or 0 when it is cut at the end of a piece that is not the last: it
// is held back. lineStart says that nothing of its line is written yet (a
// combining mark there is drawn on a dotted circle).
func (z *Sanitizer) nonASCII(b *strings.Builder, s string, final, lineStart bool) int {
	size, written := visibleRune(b, s, final)
	switch r, _ := utf8.DecodeRuneInString(s); {
	case size == 0:
		z.held = s // a rune cut at the end of the piece
	case written:
	case unsteady(r):
		// Left out: what it would join is drawn as separate characters,
		// as wide as they are measured.
	default:
		if lineStart && ansi.StringWidth(s[:size]) == 0 {
			b.WriteString("◌") // a mark that begins its line
		}
		b.WriteString(s[:size])
	}
	return size
}

// visibleRune writes the rune s begins with when it is one that Sanitize
// and Clean both make visible (a stray byte, a C1 control, a bidi control)
// and returns its size and true; for any other rune it writes nothing and
// returns false, for the caller to write. Size 0: the rune is cut at the
// end of a piece that is not the last (final false), to be held back.
func visibleRune(b *strings.Builder, s string, final bool) (size int, written bool) {
	r, size := utf8.DecodeRuneInString(s)
	switch name := bidiName(r); {
	case size == 1 && !final && !utf8.FullRuneInString(s):
		return 0, false
	case size == 1:
		b.WriteString("\uFFFD")
	case r <= 0x9f:
		b.WriteString("␛")
		b.WriteByte(byte(r - 0x40))
	case name != "":
		b.WriteString("⟨" + name + "⟩")
	default:
		return size, false
	}
	return size, true
}

// flatten makes sanitized text one line: each run of line breaks and
// spaces becomes one space. Text that is one line already is returned as it
// is.
func flatten(s string) string {
	if strings.IndexByte(s, '\n') < 0 {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// wrapWide breaks every line wider than width at the width, by cells (a
// double-width character or an emoji is never split), and returns the lines
// unchanged when none is wider. The rows after the first keep the line's
// indentation (glamour's margin, a list's), unless it would leave less than
// half the width, and the colours of the text they continue.
func wrapWide(lines []string, width int) []string {
	width = max(width, 1)
	var out []string
	for i, l := range lines {
		if ansi.StringWidth(l) <= width {
			if out != nil {
				out = append(out, l)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(lines)+4), lines[:i]...)
		}
		if ansi.StringWidth(strings.TrimRight(ansi.Strip(l), " ")) <= width {
			// Only padding overflows (glamour pads wide characters as if
			// they were one cell): cut the spaces, nothing else.
			out = append(out, ansi.Truncate(l, width, ""))
			continue
		}
		out = append(out, breakLine(l, width)...)
	}
	if out == nil {
		return lines
	}
	return out
}

// trackSGR is the SGR sequences in force, sgr, after seq: a reset clears
// them, another SGR sequence is added, anything else changes nothing.
func trackSGR(sgr []string, seq string) []string {
	if !strings.HasPrefix(seq, "\x1b[") || !strings.HasSuffix(seq, "m") {
		return sgr
	}
	if seq == "\x1b[m" || seq == "\x1b[0m" {
		return sgr[:0]
	}
	return append(sgr, seq)
}

// breakLine cuts one styled line into rows of at most width cells: between
// words where it can, inside a word that is longer than a row (text without
// spaces, a URL, CJK). Styles (SGR sequences) open where a row ends are
// closed at its end and opened again at the start of the next row, so that
// no colour runs into the pane's border.
func breakLine(l string, width int) []string {
	plain := ansi.Strip(l)
	indent := len(plain) - len(strings.TrimLeft(plain, " "))
	if indent*2 > width {
		indent = 0
	}
	var (
		rows      []string
		row, word strings.Builder
		sgr       []string // the SGR sequences in force since the last reset
		wordSGR   []string // sgr when the word began
		w, ww     int      // cells in row (with its indent) and in word
		content   bool     // row holds a word
		state     byte
	)
	// next ends the row, closing the styles open in it, and starts the
	// next one with them.
	next := func(open []string) {
		s := strings.TrimRight(row.String(), " ")
		if len(open) > 0 {
			s += "\x1b[0m"
		}
		rows = append(rows, s)
		row.Reset()
		row.WriteString(strings.Repeat(" ", indent))
		for _, q := range open {
			row.WriteString(q)
		}
		w, content = indent, false
	}
	for len(l) > 0 {
		seq, sw, n, newState := ansi.DecodeSequence(l, state, nil)
		state, l = newState, l[n:]
		switch {
		case sw == 0:
			if word.Len() == 0 {
				wordSGR = append(wordSGR[:0], sgr...)
			}
			sgr = trackSGR(sgr, seq)
			word.WriteString(seq)
		case seq == " ":
			row.WriteString(word.String())
			w += ww
			content = content || ww > 0
			word.Reset()
			ww = 0
			if w+1 > width {
				next(sgr) // the row breaks at this space, which is dropped
				continue
			}
			row.WriteString(" ")
			w++
		default:
			if word.Len() == 0 {
				wordSGR = append(wordSGR[:0], sgr...)
			}
			if w+ww+sw > width && content {
				next(wordSGR) // the word goes on the next row
			}
			if w+ww+sw > width && ww > 0 {
				row.WriteString(word.String()) // longer than a row: cut it
				word.Reset()
				ww = 0
				next(sgr)
				wordSGR = append(wordSGR[:0], sgr...)
			}
			word.WriteString(seq)
			ww += sw
		}
	}
	row.WriteString(word.String())
	rows = append(rows, strings.TrimRight(row.String(), " "))
	for len(rows) > 1 && strings.TrimSpace(ansi.Strip(rows[len(rows)-1])) == "" {
		rows = rows[:len(rows)-1] // padding that ran past the width
	}
	return rows
}
