package ui

import "strings"

// Cleaner makes text safe to pass on where a terminal may show it later
// (a pipe into less or head, a Markdown file, a diff): every escape and
// control character is made visible, as Sanitize does (ESC as ␛, a C1
// control as ␛ and its letter, others as ^X, a lone \r as ^M, a bidi control
// named), but tabs, line breaks and every other character stay as they
// are, so a diff still applies and a table still lines up. Like Sanitizer
// it takes text in pieces, holding back a "\r" or a rune cut at a piece's
// end until the next one. Its zero value is ready; not safe for concurrent
// use.
type Cleaner struct{ held string }

// Clean returns the next piece made safe, less what it holds back.
func (c *Cleaner) Clean(piece string) string { return c.write(piece, false) }

// Flush returns what the last piece held back; call it when nothing more
// comes.
func (c *Cleaner) Flush() string { return c.write("", true) }

func (c *Cleaner) write(s string, final bool) string {
	if c.held != "" {
		s, c.held = c.held+s, ""
	}
	i := 0
	for i < len(s) && (byteClass[s[i]] == 0 || s[i] == '\t') {
		i++
	}
	if i == len(s) {
		return s // nothing to clean: the common case, no copy
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		ch := s[i]
		switch {
		case byteClass[ch] == 0 || ch == '\t':
			b.WriteByte(ch)
			i++
		case ch == '\r' && i+1 == len(s) && !final:
			c.held = "\r"
			return b.String()
		case ch == '\r' && i+1 < len(s) && s[i+1] == '\n':
			b.WriteByte('\r')
			i++
		case ch < 0x80:
			var z Sanitizer
			col, seg := 0, 0
			z.control(&b, s, i, true, &col, &seg)
			i++
		default:
			size, written := visibleRune(&b, s[i:], final)
			if size == 0 {
				c.held = s[i:]
				return b.String()
			}
			if !written {
				b.WriteString(s[i : i+size])
			}
			i += size
		}
	}
	return b.String()
}
