package search

import (
	"fmt"
	"strings"
	"testing"
)

func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestChunkBoundaries(t *testing.T) {
	for _, c := range []struct {
		name                     string
		text                     string
		lines, maxBytes, overlap int
		want                     string // start-end of each piece
	}{
		{"empty", "", 10, 1000, 2, ""},
		{"blank lines only", "\n\n  \n", 10, 1000, 2, ""},
		{"one short piece", lines(3), 10, 1000, 2, "1-3"},
		{"exactly one chunk", lines(10), 10, 1000, 2, "1-10"},
		{"one line over", lines(11), 10, 1000, 2, "1-10 9-11"},
		{"overlapping pieces", lines(100), 40, 10000, 5, "1-40 36-75 71-100"},
		{"no overlap", lines(25), 10, 1000, 0, "1-10 11-20 21-25"},
		{"overlap as large as the chunk still moves on", lines(5), 2, 1000, 9, "1-2 2-3 3-4 4-5"},
		// "line N\n" is 7 bytes for N < 10: 3 lines fit in 21 bytes.
		{"cut by bytes", lines(7), 100, 21, 1, "1-3 3-5 5-7"},
		{"no trailing newline", "a\nb\nc", 2, 1000, 0, "1-2 3-3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, p := range chunk(c.text, c.lines, c.maxBytes, c.overlap) {
				got = append(got, fmt.Sprintf("%d-%d", p.Start, p.End))
				want := strings.Join(strings.Split(strings.TrimRight(c.text, "\n"), "\n")[p.Start-1:p.End], "\n")
				if p.Text != want {
					t.Errorf("piece %d-%d text %q, want the lines %q", p.Start, p.End, p.Text, want)
				}
			}
			if g := strings.Join(got, " "); g != c.want {
				t.Fatalf("chunk(%d lines, %d, %d, %d) = %q, want %q", strings.Count(c.text, "\n"), c.lines, c.maxBytes, c.overlap, g, c.want)
			}
		})
	}
}

func TestChunkLongLine(t *testing.T) {
	long := strings.Repeat("é", 600) // 1200 bytes
	ps := chunk("short\n"+long+"\nafter", 10, 100, 0)
	if len(ps) < 3 || ps[0].Text != "short" || ps[len(ps)-1].Text != "after" {
		t.Fatalf("pieces %+v, want short, the long line's pieces, after", ps)
	}
	var whole strings.Builder
	for _, p := range ps[1 : len(ps)-1] {
		if p.Start != 2 || p.End != 2 || len(p.Text) > 100 || len(p.Text)%2 != 0 {
			t.Fatalf("a piece of the long line: lines %d-%d, %d bytes: want line 2, at most 100 bytes on a rune boundary", p.Start, p.End, len(p.Text))
		}
		whole.WriteString(p.Text)
	}
	if whole.String() != long {
		t.Fatalf("the long line's pieces do not make it up whole: %d of %d bytes", whole.Len(), len(long))
	}
}
