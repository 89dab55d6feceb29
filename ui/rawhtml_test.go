package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// htmlish is an answer full of what Markdown could take for HTML, with a
// table, long code lines and an emoji.
const htmlish = "Use Vec<String> and Option<T> here; wrap it in a <div> tag, or <b>bold</b>. In Java: List<Integer> xs, Map<K, V>.\n\n" +
	"| type | in Rust | in Java |\n|---|---|---|\n| list | Vec<T> | List<T> |\n| maybe | Option<T> | Optional<T> |\n\n" +
	"Inline `Vec<u8>` stays, and so does this:\n\n```rust\nfn parse(input: &str) -> Result<Vec<HashMap<String, Vec<Option<u64>>>>, Box<dyn std::error::Error + Send + Sync + 'static>> { todo!() }\n```\n\n" +
	"<!-- a comment --> and <https://example.com/a> and a < b > c, 🦀 done."

// TestHTMLLookingTextIsShown: at 80 and 160 columns every word of an
// answer full of generics, HTML tags, a table, a long line of code and an
// emoji is in the chat as written (the rows joined: long lines break).
func TestHTMLLookingTextIsShown(t *testing.T) {
	c := newChat("notty")
	for _, w := range []int{80, 160} {
		out := strings.Join(c.markdown(htmlish, w), "\n")
		flat := strings.Join(strings.Fields(ansi.Strip(out)), "")
		for _, word := range strings.Fields(htmlish) {
			if strings.HasPrefix(word, "```") { // a fence and its language
				continue
			}
			if word = strings.Trim(word, "|`*"); word == "" || strings.Trim(word, "-|") == "" {
				continue
			}
			if !strings.Contains(flat, word) {
				t.Errorf("%d columns: %q is not shown:\n%s", w, word, ansi.Strip(out))
			}
		}
		if strings.Contains(out, `\<`) {
			t.Errorf("%d columns: an escape shows:\n%s", w, ansi.Strip(out))
		}
	}
}

func TestEscapeHTML(t *testing.T) {
	for in, want := range map[string]string{
		"Vec<String>":              `Vec\<String>`,
		"a < b and <3":             "a < b and <3",
		"`Vec<u8>` and Vec<u8>":    "`Vec<u8>` and Vec\\<u8>",
		"``a ` <b>`` <b>":          "``a ` <b>`` \\<b>",
		"```\nVec<T>\n```\nVec<T>": "```\nVec<T>\n```\nVec\\<T>",
		"    code <b>":             "    code <b>",
		`already \<b>`:             `already \<b>`,
		"<!-- c --> </i> <?x":      `\<!-- c --> \</i> \<?x`,
	} {
		if got := escapeHTML(in); got != want {
			t.Errorf("escapeHTML(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestToolCallLine: a call's line shows its arguments as written (not
// JSON-escaped), in the schema's order (the path before the content),
// using the width there is, with one ellipsis where it ends.
func TestToolCallLine(t *testing.T) {
	content := strings.Repeat("lorem ipsum ", 40)
	write := &chatItem{kind: itemTool, name: "write_file", status: "ok", result: "wrote",
		args: `{"content":"` + content + `","path":"notes/today.md"}`, order: []string{"path", "content"}}
	for _, w := range []int{80, 120, 200} {
		l := ansi.Strip(toolLines(write, w, false)[0])
		if !strings.HasPrefix(l, `⚙ write_file path="notes/today.md" content="lorem ipsum`) || strings.Count(l, "…") != 1 || ansi.StringWidth(l) > w {
			t.Errorf("%d columns: %q", w, l)
		}
		if w == 200 && ansi.StringWidth(l) < 190 {
			t.Errorf("200 columns: the line does not use the width there is: %d cells, %q", ansi.StringWidth(l), l)
		}
	}
	shell := &chatItem{kind: itemTool, name: "run_shell", status: "ok", args: `{"command":"echo run \u003e\u003e count.txt \u0026\u0026 echo AT\u0026T \u003cma"}`}
	l := ansi.Strip(toolLines(shell, 120, false)[0])
	if !strings.Contains(l, `command="echo run >> count.txt && echo AT&T <ma"`) || strings.Contains(l, `\u00`) || strings.Contains(l, "…") {
		t.Errorf("run_shell: %q", l)
	}
}
