package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentty/agentty/engine"
)

// wideTableCells are the cells of the table in longAnswer: a row of it is
// about 100 columns as written.
var wideTableCells = [][]string{
	{"check", "file", "severity", "finding", "suggested fix"},
	{"C1", "engine/loop.go", "high", "the step limit is not checked before a retried decision", "check it before every decision"},
	{"C2", "ui/markdown.go", "medium", "tables wider than the pane lose the end of their cells", "wrap the cells inside their columns"},
	{"C3", "tools/shell.go", "low", "a failed command shows a green mark in the chat", "show the exit status in red"},
}

// tableCells reads a drawn table back from lines (styles stripped): the
// lines with the columns' rules, a row at a time (the rows apart by rules
// when there are rules between them, else a line each), each cell's
// pieces joined.
func tableCells(lines []string, cols int) [][]string {
	var rows [][]string
	var group [][]string // the current row's lines, split at the rules
	rules := 0
	isRule := func(l string) bool {
		return strings.Trim(l, " ─┼-|") == "" && strings.ContainsAny(l, "─-")
	}
	var table []string
	for _, l := range lines {
		l = strings.TrimRight(ansi.Strip(l), " ")
		bar := "│"
		if !strings.Contains(l, bar) {
			bar = "|"
		}
		if isRule(l) || strings.Count(l, bar) == cols-1 {
			table = append(table, l)
			if isRule(l) {
				rules++
			}
		}
	}
	flush := func() {
		if group == nil {
			return
		}
		row := make([]string, cols)
		for _, g := range group {
			for i := range row {
				row[i] = strings.TrimSpace(row[i] + " " + strings.TrimSpace(g[i]))
			}
		}
		rows, group = append(rows, row), nil
	}
	for _, l := range table {
		if isRule(l) {
			flush()
			continue
		}
		bar := "│"
		if !strings.Contains(l, bar) {
			bar = "|"
		}
		group = append(group, strings.Split(l, bar))
		if rules == 1 && len(rows) > 0 { // one line a row
			flush()
		}
	}
	flush()
	return rows
}

// sameText reports whether two cells hold the same text, wherever a line
// broke it.
func sameText(got, want string) bool {
	return strings.ReplaceAll(got, " ", "") == strings.ReplaceAll(want, " ", "")
}

// TestWideTableKeepsEveryCell: a table of about 100 columns keeps every
// cell's text whole at 80 columns, at 160 (a Chat of 74) and zoomed at
// 160: wrapped inside its columns where it is too wide for the pane,
// drawn by glamour where it fits; never cut.
func TestWideTableKeepsEveryCell(t *testing.T) {
	if w := ansi.StringWidth("| C2 | ui/markdown.go | medium | tables wider than the pane lose the end of their cells | wrap the cells inside their columns |"); w < 100 {
		t.Fatalf("the table's rows are %d columns, not 100", w)
	}
	for _, style := range []string{"notty", "dark"} {
		for _, c := range []struct {
			w, h int
			zoom bool
		}{{80, 24, false}, {160, 48, false}, {160, 48, true}} {
			t.Run(fmt.Sprintf("%s-%dx%d-zoom=%v", style, c.w, c.h, c.zoom), func(t *testing.T) {
				m := New(Config{Style: style, Backend: &memBackend{s: engine.NewSession("s")}})
				m.Update(tea.WindowSizeMsg{Width: c.w, Height: c.h})
				if c.zoom {
					m.Update(tea.KeyMsg{Type: tea.KeyCtrlZ})
				}
				m.Update(ev(engine.KindRunStarted, &engine.RunStarted{Task: "review"}))
				m.Update(ev(engine.KindDecision, &engine.Decided{Text: longAnswer}))
				lines := m.chat.linesOf(m.chat.items[len(m.chat.items)-1])
				text := ansi.Strip(strings.Join(lines, "\n"))
				got := tableCells(lines, 5)
				ok := len(got) == len(wideTableCells) && !strings.Contains(text, "…")
				for r := range min(len(got), len(wideTableCells)) {
					for i, want := range wideTableCells[r] {
						ok = ok && sameText(got[r][i], want)
					}
				}
				if !ok {
					t.Fatalf("the table lost text (chat %d wide): read back %q from\n%s", m.chat.width, got, text)
				}
				if c.zoom && !slices.ContainsFunc(strings.Split(text, "\n"), func(l string) bool {
					return strings.Contains(l, "tables wider than the pane lose the end of their cells")
				}) {
					t.Errorf("zoomed, the table does not have its cells on one line:\n%s", text)
				}
			})
		}
	}
}

// TestNarrowTableAsRecords: a table whose columns cannot share the width
// without breaking every word is shown a row at a time, each cell after
// its header.
func TestNarrowTableAsRecords(t *testing.T) {
	c := newChat("notty")
	var head, delim, row []string
	for i := range 12 {
		head = append(head, fmt.Sprintf("header%d", i))
		delim = append(delim, "---")
		row = append(row, fmt.Sprintf("value%d", i))
	}
	md := "| " + strings.Join(head, " | ") + " |\n|" + strings.Join(delim, "|") + "|\n| " + strings.Join(row, " | ") + " |\n"
	text := strings.Join(c.markdown(md, 76), "\n")
	for i := range 12 {
		if !strings.Contains(text, fmt.Sprintf("header%d: value%d", i, i)) {
			t.Fatalf("cell %d is not shown after its header:\n%s", i, text)
		}
	}
}

// TestTableCellsAsText: a cell's Markdown is shown as text: emphasis and
// code without their marks, an escaped pipe as a pipe, a link with its
// address.
func TestTableCellsAsText(t *testing.T) {
	tb, ok := parseTable("| a | b | c | d |\n|---|---|---|---|\n| **bold** and _it_ | `x \\| y` | [the docs](https://example.com/d) | a \\| b |")
	want := []string{"bold and it", "x | y", "the docs (https://example.com/d)", "a | b"}
	if !ok || len(tb.rows) != 2 || !slices.Equal(tb.rows[1], want) {
		t.Errorf("cells %q, want %q", tb.rows, want)
	}
}

// TestHostileTables: what a model may write to make the Chat slow or lose
// text: thousands of columns (shown a row at a time), a word longer than
// the pane (broken, every letter kept), thousands of rows.
func TestHostileTables(t *testing.T) {
	c := newChat("notty")
	var head, delim, row []string
	for i := range 3000 {
		head, delim, row = append(head, fmt.Sprint("h", i)), append(delim, "-"), append(row, fmt.Sprint("v", i))
	}
	many := strings.Join(c.markdown("|"+strings.Join(head, "|")+"|\n|"+strings.Join(delim, "|")+"|\n|"+strings.Join(row, "|")+"|", 76), "\n")
	if !strings.Contains(many, "h0: v0") || !strings.Contains(many, "h2999: v2999") {
		t.Errorf("a table of 3,000 columns is not shown a row at a time")
	}
	long := strings.Repeat("x", 5000)
	md := "| a | b |\n|---|---|\n| " + long + " | short |\n" + strings.Repeat("| 1 | 2 |\n", 3000)
	lines := c.markdown(md, 76)
	got := tableCells(lines, 2)
	if len(got) != 3002 || !sameText(got[1][0], long) || got[1][1] != "short" {
		t.Errorf("a 5,000-letter cell or 3,000 rows lost text: %d rows", len(got))
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 76 {
			t.Fatalf("a line is wider than the pane: %d cells", ansi.StringWidth(l))
		}
	}
}
