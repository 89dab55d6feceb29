package ui

import (
	"slices"
	"strings"
	"testing"
)

// TestSplitBlocks: an answer is cut where a block begins that cannot
// reach back into the one before, and nowhere else.
func TestSplitBlocks(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"paragraphs", "one\ntwo\n\nthree", []string{"one\ntwo\n\n", "three"}},
		{"a loose list is one block", "- a\n\n- b\n\n  more of b\n\nafter", []string{"- a\n\n- b\n\n  more of b\n\n", "after"}},
		{"a list after a paragraph, and an item after it", "para\n\n- a\n- b\n\n1. c\n\nd", []string{"para\n\n", "- a\n- b\n\n1. c\n\n", "d"}},
		{"a code block keeps its blank lines", "```go\nfunc a() {}\n\nfunc b() {}\n```\nnext", []string{"```go\nfunc a() {}\n\nfunc b() {}\n```\n", "next"}},
		{"a fence interrupts a paragraph", "Like so:\n~~~\nx\n~~~", []string{"Like so:\n", "~~~\nx\n~~~"}},
		{"headings stand alone", "# Title\ntext\n## Next\nmore", []string{"# Title\n", "text\n", "## Next\n", "more"}},
		{"a setext heading is one block", "Title\n---\ntext", []string{"Title\n---\ntext"}},
		{"indented text goes on", "- a\n\n    code in a\n\nb", []string{"- a\n\n    code in a\n\n", "b"}},
		{"a table, then a paragraph", "| a | b |\n|---|---|\n| 1 | 2 |\n\nBye.", []string{"| a | b |\n|---|---|\n| 1 | 2 |\n\n", "Bye."}},
		{"a fence indented in a list is the list's", "- a\n  ```\n\nx\n  ```\n\nb", []string{"- a\n  ```\n\nx\n  ```\n\n", "b"}},
		{"a backtick line with backticks after is no fence", "para\n```x``` y\n\nz", []string{"para\n```x``` y\n\n", "z"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := splitBlocks(tc.text)
			if !slices.Equal(got, tc.want) {
				t.Errorf("splitBlocks(%q)\n got %q\nwant %q", tc.text, got, tc.want)
			}
		})
	}
}

// TestSplitBlocksIsPrefixStable: the blocks found in any part of an
// answer streamed so far (up to a line's end) are the whole answer's
// first blocks, but the last, which may go on: what the stream renders is
// what the finished answer shows.
func TestSplitBlocksIsPrefixStable(t *testing.T) {
	for _, text := range []string{longAnswer, mdMessage, "# T\ntext\n```\ncode\n\n```\n- a\n\n- b\n\nend\n"} {
		whole := splitBlocks(text)
		if strings.Join(whole, "") != text {
			t.Fatalf("the blocks are not the text: %q", whole)
		}
		for i := range len(text) {
			if text[i] != '\n' {
				continue
			}
			part := splitBlocks(text[:i+1])
			done := part[:len(part)-1]
			if !slices.Equal(done, whole[:len(done)]) {
				t.Fatalf("after %q the complete blocks are\n%q\nnot the whole answer's\n%q", text[:i+1], done, whole[:len(done)])
			}
		}
	}
}

// longAnswer is an answer of every kind of block, a table wider than the
// Chat at 160 columns among them.
const longAnswer = "# Review of the branch\n" +
	"I read the diff and ran the tests. Here is what I found, from the most to the least urgent.\n\n" +
	"## Findings\n\n" +
	"1. The step limit is not checked before a retried decision.\n" +
	"2. Tables wider than the pane lose the end of their cells.\n\n" +
	"   This one is what people see first.\n" +
	"3. A failed command shows a green mark.\n\n" +
	"| check | file | severity | finding | suggested fix |\n" +
	"|---|---|---|---|---|\n" +
	"| C1 | engine/loop.go | high | the step limit is not checked before a retried decision | check it before every decision |\n" +
	"| C2 | ui/markdown.go | medium | tables wider than the pane lose the end of their cells | wrap the cells inside their columns |\n" +
	"| C3 | tools/shell.go | low | a failed command shows a green mark in the chat | show the exit status in red |\n\n" +
	"The fix for the second:\n" +
	"```go\n" +
	"func (t table) draw(width int) []string {\n" +
	"\treturn nil\n" +
	"\n" +
	"}\n" +
	"```\n" +
	"> Quoted from the issue: the chat is 74 columns\n> and nothing gives it the width.\n\n" +
	"- first, the zoom\n- then the tables\n\n" +
	"That is all; the rest of the branch reads well and the tests pass with the race detector on."
