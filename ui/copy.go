package ui

// Text out of the console: /copy puts an answer, or a code block, on the
// clipboard through the terminal (OSC 52); ctrl+g and /mouse give the mouse
// back to the terminal, so that its own selection works; on quit, the last
// answer is left in the terminal's scrollback (LastAnswer).

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	gtext "github.com/yuin/goldmark/text"

	"github.com/agentty/agentty/engine"
)

// copyOut is what the console keeps for text going out: where an OSC 52
// is written (the terminal, through the program's own output; nil: no
// terminal, /copy says so) and whether the mouse is given back to it.
type copyOut struct {
	clip     io.Writer
	mouseOff bool
	hinted   bool // what to do when nothing arrives was said
}

// maxCopy is the most /copy puts on the clipboard: tmux takes an escape
// sequence of up to 1 MiB, and the text grows by a third in base64.
const maxCopy = 512 << 10

// osc52 is the sequence that asks the terminal to put text on the
// clipboard: ESC ] 52 ; c ; base64 BEL.
func osc52(text string) string {
	return "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(text)) + "\a"
}

// clipDoneMsg says that the OSC 52 of a /copy was written (err: it was not).
type clipDoneMsg struct{ err error }

// keepRaw keeps on the message a decision added its text as the model wrote
// it (secrets already taken out by the engine, as in the journal, but not
// sanitized for the screen), so that /copy copies it with its tabs.
func (c *chat) keepRaw(data any) {
	d, ok := data.(*engine.Decided)
	if !ok || d.Text == "" {
		return
	}
	for i := len(c.items) - 1; i >= 0; i-- {
		if it := c.items[i]; it.kind == itemAssistant && !it.streaming {
			it.raw = d.Text
			return
		}
	}
}

// answers are the agent's messages the chat shows, the last first: what
// /copy N counts (a message being streamed is not one yet; the output of
// the person's own !command is theirs).
func (c *chat) answers() []*chatItem {
	var out []*chatItem
	for i := len(c.items) - 1; i >= 0; i-- {
		if it := c.items[i]; it.kind == itemAssistant && !it.streaming && !it.yours && strings.TrimSpace(it.text) != "" {
			out = append(out, it)
		}
	}
	return out
}

// copySource is the text of a message for the clipboard: as written, made
// harmless to paste.
func copySource(it *chatItem) string {
	s := it.raw
	if s == "" { // a cut-off answer: its text is what the chat keeps
		s = it.text
	}
	return strings.TrimRight(clipText(s), "\n")
}

// clipText is s made safe to paste: tabs and line breaks are kept ("\r\n"
// becomes "\n"), and every other control character (ESC, a "\r", a C1
// control) and bidirectional control is replaced by what Sanitize shows
// for it, so that a paste cannot end a terminal's bracketed paste, send
// keys or reorder code.
func clipText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	for _, r := range s { // a byte that is not UTF-8 comes as U+FFFD
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || bidiName(r) != "":
			b.WriteString(Sanitize(string(r)))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// lastCodeBlock returns the last code block of Markdown src as written:
// its lines without the fences and the block's indentation, unwrapped, and
// its language; ok is false when src has none.
func lastCodeBlock(src string) (code, lang string, ok bool) {
	b := []byte(src)
	var last ast.Node
	ast.Walk(goldmark.DefaultParser().Parse(gtext.NewReader(b)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			if entering {
				last = n
			}
		}
		return ast.WalkContinue, nil
	})
	if last == nil {
		return "", "", false
	}
	var sb strings.Builder
	lines := last.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		sb.Write(seg.Value(b))
	}
	if f, isFenced := last.(*ast.FencedCodeBlock); isFenced {
		lang = string(f.Language(b))
	}
	return strings.TrimSuffix(sb.String(), "\n"), lang, true
}

// copyCommand runs /copy [N|code].
func (m *Model) copyCommand(arg string) tea.Cmd {
	answers := m.chat.answers()
	if arg == "code" {
		for _, it := range answers {
			if code, lang, ok := lastCodeBlock(copySource(it)); ok {
				what := "the last code block"
				if lang = flatten(Sanitize(lang)); lang != "" {
					what += " (" + lang + ")"
				}
				return m.copyOut(what, code)
			}
		}
		m.notify("/copy code: there is no code block in the agent's answers yet.")
		return nil
	}
	n := 1
	if arg != "" {
		var err error
		if n, err = strconv.Atoi(arg); err != nil || n < 1 {
			m.notify(fmt.Sprintf("/copy takes N (1 is the agent's last answer, 2 the one before…) or code, not %q.", flatten(Sanitize(arg))))
			return nil
		}
	}
	switch {
	case len(answers) == 0:
		m.notify("/copy: nothing to copy yet: the agent has not answered in this session.")
		return nil
	case n > len(answers):
		m.notify(fmt.Sprintf("/copy %d: the chat has %s of the agent (/copy 1 is the last, /copy %d the first).", n, count(len(answers), "answer"), len(answers)))
		return nil
	}
	what := "the agent's last answer"
	if n > 1 {
		what = fmt.Sprintf("the agent's answer %d back from the last (/copy %d)", n, n)
	}
	return m.copyOut(what, copySource(answers[n-1]))
}

// copyOut puts text on the clipboard: the OSC 52 is written by a command,
// on the program's output, and the Chat says what was copied.
func (m *Model) copyOut(what, text string) tea.Cmd {
	size := fmt.Sprintf("%s, %s", count(strings.Count(text, "\n")+1, "line"), count(len(text), "byte"))
	switch {
	case m.out.clip == nil:
		m.notify("/copy: this console has no terminal to copy through.")
		return nil
	case len(text) > maxCopy:
		m.notify(fmt.Sprintf("/copy: %s is %s, more than a terminal takes at once (%d KiB): /export writes the session to a file.", what, size, maxCopy>>10))
		return nil
	}
	note := fmt.Sprintf("Copied %s to the clipboard (%s), through the terminal (OSC 52).", what, size)
	if !m.out.hinted { // once: the console cannot know whether the terminal took it
		m.out.hinted = true
		note += " Nothing there? The terminal does not take OSC 52 (in tmux: set -s set-clipboard on): ctrl+g releases the mouse to select with it."
	}
	m.notify(note)
	w, seq := m.out.clip, osc52(text)
	return func() tea.Msg {
		_, err := io.WriteString(w, seq)
		return clipDoneMsg{err: err}
	}
}

// clipDone says when the OSC 52 could not be written.
func (m *Model) clipDone(msg clipDoneMsg) {
	if msg.err != nil {
		m.notify("/copy: the terminal could not be written to: " + msg.err.Error())
	}
}

// toggleMouse gives the mouse to the terminal (its selection works, the
// wheel no longer scrolls the Chat), or takes it back (ctrl+g, /mouse).
func (m *Model) toggleMouse() tea.Cmd {
	m.out.mouseOff = !m.out.mouseOff
	if m.out.mouseOff { // the status line says so until it is taken back
		return tea.DisableMouse
	}
	m.note = "mouse back: the wheel scrolls the chat"
	return tea.EnableMouseCellMotion
}

// LastAnswer is the agent's last answer in the Chat, as plain text wrapped
// at width (at most 100 columns) for the terminal's scrollback on quit: as
// the chat shows it (secrets out, escapes made visible), code blocks and
// tables left unwrapped; "" when there is none.
func (m *Model) LastAnswer(width int) string {
	answers := m.chat.answers()
	if len(answers) == 0 {
		return ""
	}
	return plainWrap(strings.TrimSpace(answers[0].text), min(max(width, 20), 100))
}

// plainWrap wraps Markdown source at width as plain text: the lines of a
// fenced block and of a table as they are, the others on spaces, a list
// item's rows hung under its text.
func plainWrap(text string, width int) string {
	var out []string
	fence := ""
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimLeft(l, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			out = append(out, l)
			continue
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
			out = append(out, l)
			continue
		case strings.HasPrefix(t, "|"):
			out = append(out, l)
			continue
		}
		hang := len(l) - len(t) + listMarker(t)
		if hang*2 > width {
			hang = 0
		}
		for i, r := range wrapRows(l[hang:], width-hang) {
			if i == 0 {
				out = append(out, strings.TrimRight(l[:hang]+r, " "))
			} else {
				out = append(out, strings.Repeat(" ", hang)+strings.TrimRight(r, " "))
			}
		}
	}
	return strings.Join(out, "\n")
}

// listMarker is the length of the list marker t begins with ("- ", "12. "),
// or 0.
func listMarker(t string) int {
	for _, p := range []string{"- ", "* ", "+ "} {
		if strings.HasPrefix(t, p) {
			return len(p)
		}
	}
	d := len(t) - len(strings.TrimLeft(t, "0123456789"))
	if d > 0 && d < 10 && (strings.HasPrefix(t[d:], ". ") || strings.HasPrefix(t[d:], ") ")) {
		return d + 2
	}
	return 0
}

// termOut is the program's output, the terminal, taking one write at a
// time: an OSC 52 written by a command never lands inside a frame the
// renderer writes. It is a term.File, so that Bubble Tea still sees the
// terminal (its size, its modes).
type termOut struct {
	f  *os.File
	mu sync.Mutex
}

func (t *termOut) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.f.Write(p)
}

func (t *termOut) Read(p []byte) (int, error) { return t.f.Read(p) }
func (t *termOut) Close() error               { return t.f.Close() }
func (t *termOut) Fd() uintptr                { return t.f.Fd() }
