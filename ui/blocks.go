package ui

import "strings"

// An answer is rendered block by block: its Markdown is cut into blocks
// (paragraphs, lists, code blocks, tables, headings) where a new one
// begins, and each block is rendered on its own and kept. While the answer
// streams, the blocks that are complete are shown rendered and the open
// one, the last, raw; the finished answer is the same blocks rendered, so
// nothing that was drawn moves when the answer ends, and each token costs
// the open block's last row, not a render of the whole answer.
//
// The cut is a left-to-right scan of whole lines: where a block begins is
// decided by the lines before it and its own first line alone, so the
// blocks found in the text streamed so far are the blocks of the whole
// answer. It cuts only where a block cannot reach back: after a blank line
// at a line that starts at the margin (and does not go on a list the block
// holds), at a code fence that opens at the margin, after a fence that
// closes, and at and after a heading. Anywhere else (a list's items,
// indented text, a paragraph and the list or table it runs into) stays one
// block, rendered together.

// blockScan is the state of the scan: what the lines so far leave open.
type blockScan struct {
	started bool   // a line was read: the next may begin a block
	fence   string // the fence of the code block the lines are in ("": none)
	blank   bool   // the last line was blank
	closed  bool   // the last line was a heading or closed a fence
	list    bool   // the block so far has a list's item
}

// line reads the next whole line (without its "\n") and reports whether a
// new block begins with it.
func (s *blockScan) line(l string) bool {
	indent := len(l) - len(strings.TrimLeft(l, " "))
	body := l[indent:]
	blank := strings.TrimSpace(l) == ""
	if s.fence != "" { // in a code block: its lines are its own
		if indent <= 3 && strings.HasPrefix(body, s.fence) && strings.Trim(body, s.fence[:1]+" ") == "" {
			s.fence, s.closed = "", true
		}
		s.blank = false
		return false
	}
	margin := indent == 0 && !blank && l[0] != '\t'
	heading := margin && atxHeading(l)
	fence := ""
	if indent <= 3 {
		fence = opensFence(body)
	}
	begins := s.started && margin && (fence != "" || heading || s.closed || s.blank && !(s.list && listItem(l)))
	if begins {
		s.list = false
	}
	if !blank && indent <= 3 && listItem(body) {
		s.list = true
	}
	s.started = true
	s.fence, s.blank, s.closed = fence, blank, heading
	return begins
}

// opensFence returns the fence a line opens a code block with, or "": a
// line of backticks with a backtick after them ("```x``` y") is a code
// span.
func opensFence(body string) string {
	f := fenceOf(body)
	if f != "" && f[0] == '`' && strings.Contains(body[len(f):], "`") {
		return ""
	}
	return f
}

// atxHeading reports whether l is a heading of "#"s ("## Usage").
func atxHeading(l string) bool {
	n := len(l) - len(strings.TrimLeft(l, "#"))
	return n >= 1 && n <= 6 && (len(l) == n || l[n] == ' ' || l[n] == '\t')
}

// listItem reports whether l begins with a list's marker: "- ", "* ",
// "+ ", "1. " or "1) " (or the marker alone).
func listItem(l string) bool {
	if len(l) > 0 && strings.IndexByte("-*+", l[0]) >= 0 {
		return len(l) == 1 || l[1] == ' ' || l[1] == '\t'
	}
	n := len(l) - len(strings.TrimLeft(l, "0123456789"))
	if n < 1 || n > 9 || n == len(l) || l[n] != '.' && l[n] != ')' {
		return false
	}
	return n+1 == len(l) || l[n+1] == ' ' || l[n+1] == '\t'
}

// splitBlocks cuts a whole text into its blocks. Joined, they are the text.
func splitBlocks(text string) []string {
	var s blockScan
	var out []string
	start := 0
	for i := 0; i < len(text); {
		end := strings.IndexByte(text[i:], '\n')
		next := len(text)
		if end >= 0 {
			end += i
			next = end + 1
		} else {
			end = len(text)
		}
		if s.line(text[i:end]) {
			out = append(out, text[start:i])
			start = i
		}
		i = next
	}
	return append(out, text[start:])
}
