package ui

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// A table wider than the Chat is drawn here, not by glamour: glamour's
// tables cut what does not fit (a header to "sev…", a cell to "medi" and
// "um"). Here no cell loses a letter: the columns share the width, each at
// least as wide as its longest word (the longest words broken when they
// cannot all fit), and the cells wrap inside their columns at spaces, with
// a rule between the rows when some take several lines. A table with too
// many columns for that is shown a row at a time, "header: cell" a line.
// Cells are drawn as text (emphasis and code without their marks).

// table is a Markdown table's cells as text, the header first.
type table struct {
	rows  [][]string
	align []east.Alignment
}

// tableAt finds a table in lines, outside code blocks: its header's index
// and the index after its last row; ok is false when there is none.
func tableAt(lines []string) (from, to int, ok bool) {
	fence := ""
	for i, l := range lines {
		body := strings.TrimLeft(l, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(body, fence) && strings.Trim(body, fence[:1]+" ") == "" {
				fence = ""
			}
			continue
		case fenceOf(body) != "":
			fence = fenceOf(body)
			continue
		}
		if i+1 < len(lines) && strings.Contains(l, "|") && delimiterRow(lines[i+1]) {
			to = i + 2
			for to < len(lines) && strings.TrimSpace(lines[to]) != "" && strings.Contains(lines[to], "|") {
				to++
			}
			return i, to, true
		}
	}
	return 0, 0, false
}

// delimiterRow reports whether l is a table's delimiter row ("|---|:-:|").
func delimiterRow(l string) bool {
	l = strings.TrimSpace(l)
	return strings.Contains(l, "-") && strings.Trim(l, "|-: \t") == "" && (strings.Contains(l, "|") || strings.Trim(l, "-: ") == "")
}

var tableParser = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough))

// parseTable reads the lines of one table (as tableAt found them) into
// its cells' text; ok is false when Markdown does not read them as one.
func parseTable(src string) (t table, ok bool) {
	source := []byte(src)
	doc := tableParser.Parser().Parse(text.NewReader(source))
	tb, isTable := doc.FirstChild().(*east.Table)
	if !isTable || tb.NextSibling() != nil {
		return t, false
	}
	t.align = tb.Alignments
	for r := tb.FirstChild(); r != nil; r = r.NextSibling() {
		var row []string
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			var b bytes.Buffer
			inlineText(&b, c, source)
			row = append(row, strings.Join(strings.Fields(Sanitize(b.String())), " "))
		}
		for len(row) < len(t.align) {
			row = append(row, "")
		}
		t.rows = append(t.rows, row)
	}
	return t, len(t.rows) > 0 && len(t.align) > 0
}

// inlineText writes the text of n's inline children as a cell shows it:
// emphasis and code without their marks, a link's text and, when it says
// something else, its address.
func inlineText(b *bytes.Buffer, n gast.Node, src []byte) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *gast.Text:
			v := t.Segment.Value(src)
			if !t.IsRaw() {
				v = util.UnescapePunctuations(v)
			}
			b.Write(v)
			if t.SoftLineBreak() || t.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *gast.String:
			b.Write(t.Value)
		case *gast.CodeSpan:
			for s := t.FirstChild(); s != nil; s = s.NextSibling() {
				if tx, ok := s.(*gast.Text); ok {
					b.Write(tx.Segment.Value(src))
				}
			}
		case *gast.AutoLink:
			b.Write(t.URL(src))
		case *gast.Link:
			start := b.Len()
			inlineText(b, t, src)
			if dest := string(t.Destination); dest != "" && dest != b.String()[start:] {
				b.WriteString(" (" + dest + ")")
			}
		case *gast.RawHTML:
			for i := range t.Segments.Len() {
				seg := t.Segments.At(i)
				b.Write(seg.Value(src))
			}
		default:
			inlineText(b, c, src)
		}
	}
}

// naturalWidths returns each column's widest cell and its longest word.
func (t table) naturalWidths() (natural, word []int) {
	natural, word = make([]int, len(t.align)), make([]int, len(t.align))
	for _, row := range t.rows {
		for i, cell := range row[:len(t.align)] {
			natural[i] = max(natural[i], ansi.StringWidth(cell))
			for _, w := range strings.Fields(cell) {
				word[i] = max(word[i], ansi.StringWidth(w))
			}
		}
	}
	return natural, word
}

// fitsGlamour reports whether glamour draws t whole in width cells:
// its cells, a space on each side and a rule between columns, inside the
// margins (measured: one cell more cuts a cell).
func (t table) fitsGlamour(width int) bool {
	natural, _ := t.naturalWidths()
	sum := 0
	for _, n := range natural {
		sum += n
	}
	return sum+3*len(natural)+3 <= width
}

// columns shares room (the cells' own width, without the rules) between
// the columns: each its whole width when all fit; else each at least its
// longest word, the longest words cut to one length where they do not all
// fit (they are broken), and what is left in proportion to what each
// lacks. ok is false when that length would be under 6 cells.
func (t table) columns(room int) (widths []int, ok bool) {
	natural, word := t.naturalWidths()
	need := func(cut int) (int, int) { // the columns' width and what they lack, longest words cut to cut
		sum, lack := 0, 0
		for i := range natural {
			w := max(min(word[i], natural[i], cut), 1)
			sum, lack = sum+w, lack+natural[i]-w
		}
		return sum, lack
	}
	lo, hi := 6, max(slices.Max(word), 6) // the longest cut that fits, by halves: a hostile table has thousands of columns
	if sum, _ := need(lo); sum > room {
		return nil, false
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if sum, _ := need(mid); sum <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	widths = make([]int, len(natural))
	for i := range natural {
		widths[i] = max(min(word[i], natural[i], lo), 1)
	}
	sum, lack := need(lo)
	return share(widths, natural, room-sum, lack), true
}

// share gives left cells to the columns in proportion to what each lacks
// of its natural width (lack in all), all when it is enough.
func share(widths, natural []int, left, lack int) []int {
	n := len(widths)
	if lack <= left { // all fit
		copy(widths, natural)
		return widths
	}
	given := 0
	for i := range widths {
		add := left * (natural[i] - widths[i]) / lack
		widths[i] += add
		given += add
	}
	for i := 0; given < left; i = (i + 1) % n { // what rounding left
		if widths[i] < natural[i] {
			widths[i]++
			given++
		}
	}
	return widths
}

// draw draws t in width cells, inside the Chat's margins, with rules of
// ASCII when ascii is set (glamour's plain styles draw them so).
func (t table) draw(width int, ascii bool) []string {
	n := len(t.align)
	inner := width - 2*len(markdownMargin)
	widths, ok := t.columns(inner - 3*n + 2) // " a │ b": a space before, " │ " between
	if !ok {
		return t.records(inner)
	}
	bar, rule, cross := "│", "─", "┼"
	if ascii {
		bar, rule, cross = "|", "-", "|"
	}
	parts := make([]string, n)
	for i, w := range widths {
		parts[i] = strings.Repeat(rule, w+2) // a space on each side
	}
	parts[n-1] = strings.Repeat(rule, widths[n-1]+1) // but the last's right, cut
	sep := markdownMargin + strings.Join(parts, cross)
	between := t.wraps(widths) // rows of several lines are told apart by rules
	var out []string
	for r, row := range t.rows {
		if r > 1 && between {
			out = append(out, sep)
		}
		cells := make([][]string, n)
		height := 0
		for i, w := range widths {
			cells[i] = wrapRows(row[i], w)
			height = max(height, len(cells[i]))
		}
		for k := range height {
			var b strings.Builder
			b.WriteString(markdownMargin)
			for i, w := range widths {
				cell := ""
				if k < len(cells[i]) {
					cell = cells[i][k]
				}
				if i > 0 {
					b.WriteString(" " + bar)
				}
				b.WriteString(" " + alignCell(cell, w, t.align[i]))
			}
			out = append(out, strings.TrimRight(b.String(), " "))
		}
		if r == 0 {
			out = append(out, sep)
		}
	}
	return out
}

// wraps reports whether a row of t takes several lines at widths.
func (t table) wraps(widths []int) bool {
	for _, row := range t.rows[1:] {
		for i, w := range widths {
			if ansi.StringWidth(row[i]) > w {
				return true
			}
		}
	}
	return false
}

// alignCell pads a cell's line to w cells as its column is aligned.
func alignCell(s string, w int, a east.Alignment) string {
	gap := max(w-ansi.StringWidth(s), 0)
	switch a {
	case east.AlignRight:
		return strings.Repeat(" ", gap) + s
	case east.AlignCenter:
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	return s + strings.Repeat(" ", gap)
}

// records shows t a row at a time, each cell on a line of its own after
// its column's header, the rows apart: for a table whose columns cannot
// share width without breaking every word.
func (t table) records(inner int) []string {
	var out []string
	for r, row := range t.rows[1:] {
		if r > 0 {
			out = append(out, "")
		}
		for i, cell := range row[:len(t.align)] {
			label := t.rows[0][i]
			if label == "" {
				label = fmt.Sprintf("column %d", i+1)
			}
			for k, l := range wrapRows(label+": "+cell, inner-2) {
				if k > 0 {
					l = "  " + l
				}
				out = append(out, markdownMargin+l)
			}
		}
	}
	return out
}
