package search

import (
	"strings"
	"unicode/utf8"
)

// Chunking defaults: a chunk is at most ChunkLines lines and about
// ChunkBytes bytes, and starts Overlap lines before the previous one ended,
// so that a passage cut at a boundary is whole in one of the two.
const (
	DefaultChunkLines = 40
	DefaultChunkBytes = 2000
	DefaultOverlap    = 5
)

// piece is one chunk of a text: lines Start to End (1-based, inclusive).
type piece struct {
	Start, End int
	Text       string
}

// chunk cuts text into pieces on line boundaries: at most lines lines and
// about maxBytes bytes each (a single longer line is cut into pieces of
// maxBytes on rune boundaries, all of it indexed), each after the first
// beginning overlap lines (at most half of its predecessor) before its
// predecessor ended. Blank pieces are left out.
func chunk(text string, lines, maxBytes, overlap int) []piece {
	if lines <= 0 {
		lines = DefaultChunkLines
	}
	if maxBytes <= 0 {
		maxBytes = DefaultChunkBytes
	}
	overlap = max(0, min(overlap, lines-1))
	ls := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var out []piece
	for start := 0; start < len(ls); {
		end, size := start, 0
		for end < len(ls) && end-start < lines {
			n := len(ls[end]) + 1
			if end > start && size+n > maxBytes {
				break
			}
			size += n
			end++
		}
		body := strings.Join(ls[start:end], "\n")
		if len(body) > maxBytes { // one long line: every part of it, each a piece of that line
			for rest := body; rest != ""; {
				part := cut(rest, maxBytes)
				if part == "" { // a rune longer than maxBytes: impossible, but never loop
					part = rest
				}
				if strings.TrimSpace(part) != "" {
					out = append(out, piece{Start: start + 1, End: end, Text: part})
				}
				rest = rest[len(part):]
			}
		} else if strings.TrimSpace(body) != "" {
			out = append(out, piece{Start: start + 1, End: end, Text: body})
		}
		if end >= len(ls) {
			break
		}
		// The next chunk overlaps this one by overlap lines, but by no more
		// than half of it: long lines make short chunks, and an overlap as
		// big as the chunk would index every line many times.
		next := max(end-overlap, start+(end-start+1)/2)
		if next <= start {
			next = start + 1
		}
		start = next
	}
	return out
}

// cut returns s's first n bytes or fewer, ending on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
