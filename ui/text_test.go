package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/script"
	"github.com/agentty/agentty/tools"
)

func init() {
	lipgloss.SetColorProfile(termenv.Ascii) // frames without colour, as in ui_test.go
}

func TestSanitize(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"plain", "plain text\nsecond line", "plain text\nsecond line"},
		{"unicode", "é ü 日本語 😀 ␛", "é ü 日本語 😀 ␛"},
		{"tab at start", "\tx", "        x"},
		{"tab mid-line", "a\tb", "a       b"},
		{"tab on a stop", "12345678\tx", "12345678        x"},
		{"tabs per line", "ab\tc\n\td", "ab      c\n        d"},
		{"tab after wide", "中\tx", "中      x"},
		{"go code", "func f() {\n\tif x {\n\t\treturn\n\t}\n}", "func f() {\n        if x {\n                return\n        }\n}"},
		{"crlf", "a\r\nb\r\n", "a\nb\n"},
		{"lone cr", "abc\rX", "abc^MX"},
		{"cr at end", "abc\r", "abc^M"},
		{"osc 0 title", "\x1b]0;pwned\x07", "␛]0;pwned^G"},
		{"osc 52 clipboard", "\x1b]52;c;aGVsbG8=\x1b\\", "␛]52;c;aGVsbG8=␛\\"},
		{"osc 8 link", "\x1b]8;;http://x.example\x1b\\click\x1b]8;;\x1b\\", "␛]8;;http://x.example␛\\click␛]8;;␛\\"},
		{"csi clear", "\x1b[2J\x1b[H", "␛[2J␛[H"},
		{"sgr", "\x1b[31mred\x1b[0m", "␛[31mred␛[0m"},
		{"dcs apc", "\x1bPq#0\x1b\\\x1b_G\x1b\\", "␛Pq#0␛\\␛_G␛\\"},
		{"c0", "\x00\x01\x07\x08\x0b\x0c\x1f", "^@^A^G^H^K^L^_"},
		{"del", "a\x7fb", "a^?b"},
		{"c1 csi", "\u009b31m", "␛[31m"},
		{"c1 nel st", "\u0085\u009c", "␛E␛\\"},
		{"bad utf-8", "bad \xff\xfe byte", "bad \uFFFD\uFFFD byte"},
		{"cut rune at end", "ok \xe4\xb8", "ok \uFFFD\uFFFD"},
		{"rlo", "abc\u202Edef", "abc⟨RLO⟩def"},
		{"every bidi control", "\u061C\u200E\u200F\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069",
			"⟨ALM⟩⟨LRM⟩⟨RLM⟩⟨LRE⟩⟨RLE⟩⟨PDF⟩⟨LRO⟩⟨RLO⟩⟨LRI⟩⟨RLI⟩⟨FSI⟩⟨PDI⟩"},
		{"trojan source", "if access != \"user\u202E \u2066// admin\u2069 \u2066\" {",
			"if access != \"user⟨RLO⟩ ⟨LRI⟩// admin⟨PDI⟩ ⟨LRI⟩\" {"},
		{"next to bidi", "\u202F\u2065\u206A\u200C\u061B", "\u202F\u2065\u206A\u200C\u061B"},
		{"mark at start", "\u0301x", "◌\u0301x"},
		{"mark at a line's start", "a\n\u0301b\r\n\u20DDc", "a\n◌\u0301b\n◌\u20DDc"},
		{"joiner and selector at start", "\u200Cx\n\uFE0Ey", "◌\u200Cx\n◌\uFE0Ey"},
		// What terminals draw at different widths is left out: measured
		// as drawn everywhere.
		{"skin tone", "👍🏽 ok", "👍 ok"},
		{"zero-width joiner", "👨\u200D👩\u200D👧", "👨👩👧"},
		{"emoji selector", "❤\uFE0F and \u200Dx", "❤ and x"},
		{"marks after a base", "e\u0301\u0302 a\u20DD", "e\u0301\u0302 a\u20DD"},
		{"mark after a tab", "\t\u0301", "        \u0301"},
		{"mark after a control", "\x07\u0301", "^G\u0301"},
		{"two marks at start", "\u0301\u0302", "◌\u0301\u0302"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Sanitize(tt.in)
			if got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := Sanitize(got); again != got {
				t.Errorf("Sanitize is not idempotent on %q: %q", got, again)
			}
			checkSafe(t, got)
		})
	}
}

// checkSafe fails when s holds anything a terminal would act on: a
// control, a bidirectional control, or a line that begins with a mark of no
// width (which joins what is drawn before it).
func checkSafe(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("%q is not UTF-8", s)
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f || bidiName(r) != "" {
			t.Errorf("%q still holds control %U", s, r)
		}
	}
	for _, l := range strings.Split(s, "\n") {
		if r, n := utf8.DecodeRuneInString(l); n > 0 && ansi.StringWidth(l[:n]) == 0 {
			t.Errorf("a line of %q begins with %U, of no width", s, r)
		}
	}
}

// TestSanitizeCleanTextAllocatesNothing: the fast path returns the text as
// it is.
func TestSanitizeCleanTextAllocatesNothing(t *testing.T) {
	for _, s := range []string{"", "plain ASCII text\nwith lines", "日本語 and emoji 😀, accents é", "e\u0301 and ⟨RLO⟩ shown\n◌\u0301"} {
		if n := testing.AllocsPerRun(100, func() { _ = Sanitize(s) }); n != 0 {
			t.Errorf("Sanitize(%q) allocates %v times, want 0", s, n)
		}
		if got := Sanitize(s); unsafe.StringData(got) != unsafe.StringData(s) || len(got) != len(s) {
			t.Errorf("Sanitize(%q) = %q, not the same string", s, got)
		}
	}
}

// TestSanitizeInPieces: a stream sanitized delta by delta, cut anywhere,
// reads as the whole text sanitized at once (a tab's column, "\r\n" and a
// rune cut across two deltas included).
func TestSanitizeInPieces(t *testing.T) {
	texts := []string{
		"```go\nfunc main() {\n\tfmt.Println(\"中文\")\t// hi\r\n}\n```",
		"a\rb\r\n\x1b]0;t\x07\u009b2J日本\tx",
		"tail\r",
		"a\u202Eb\n\u0301c\u2066d\n\n\u200D\te\u0301",
	}
	for _, text := range texts {
		want := Sanitize(text)
		for i := 0; i <= len(text); i++ {
			for j := i; j <= len(text); j++ {
				var z Sanitizer
				got := z.Sanitize(text[:i]) + z.Sanitize(text[i:j]) + z.Sanitize(text[j:]) + z.Flush()
				if got != want {
					t.Fatalf("%q cut at %d and %d: got %q, want %q", text, i, j, got, want)
				}
			}
		}
	}
}

// TestEventCleanerCopies: an event's payload is sanitized in a copy; the
// engine's payload, which the journal and others share, is left alone.
func TestEventCleanerCopies(t *testing.T) {
	call := engine.ToolCall{ID: "c1", Name: "read\x1b[2J", Args: json.RawMessage("{\"path\":\t\"x\"}")}
	payloads := []any{
		&engine.RunStarted{Task: "hi\x07"},
		&engine.Decided{Text: "a\tb", ToolCalls: []engine.ToolCall{call}},
		&engine.ToolStarted{ID: "c1", Name: "x\x1b", Args: call.Args},
		&engine.ToolFinished{ID: "c1", Name: "x", Result: "\x1b]0;t\x07", Error: "\r"},
		&engine.MemoryChanged{Key: "k\x1b", Value: "v\t"},
		&engine.GatePaused{At: engine.Act, ToolCall: &call},
		&engine.GateResumed{Action: engine.Proceed, Args: call.Args},
		&engine.RetryScheduled{Op: "model", Cause: "\x1b[31m"},
		&engine.RunFinished{Error: "\x1b[H"},
		&engine.TextDelta{Text: "\tx"},
	}
	var c eventCleaner
	for _, p := range payloads {
		before, _ := json.Marshal(p)
		got := c.event(engine.Event{Data: p})
		after, _ := json.Marshal(p)
		if string(before) != string(after) {
			t.Errorf("%T was modified: %s became %s", p, before, after)
		}
		out, _ := json.Marshal(got.Data)
		var text any
		_ = json.Unmarshal(out, &text)
		checkSafe(t, fmt.Sprint(text))
		if strings.Contains(string(out), `\u001b`) || strings.Contains(string(out), `\t`) {
			t.Errorf("%T still holds a control after cleaning: %s", p, out)
		}
	}
	clean := &engine.ToolFinished{ID: "c1", Name: "x", Result: "fine"}
	if got := c.event(engine.Event{Data: clean}); got.Data != any(clean) {
		t.Error("a clean payload was copied")
	}
}

func TestWrapWide(t *testing.T) {
	url := "https://example.com/" + strings.Repeat("abcdefghij", 18)
	tests := []struct {
		name  string
		line  string
		width int
		want  []string
	}{
		{"fits", "  short line", 20, []string{"  short line"}},
		{"long word", "  see " + url[:40], 20, []string{"  see", "  https://example.co", "  m/abcdefghijabcdef", "  ghij"}},
		{"cjk", "  这是一个很长的中文句子没有空格", 12, []string{"  这是一个很", "  长的中文句", "  子没有空格"}},
		{"cjk odd width", "中文中文中文", 5, []string{"中文", "中文", "中文"}},
		{"emoji", "😀😀😀😀😀", 4, []string{"😀😀", "😀😀", "😀"}},
		{"words", "one two three four five six", 10, []string{"one two", "three four", "five six"}},
		{"padding past the width", "\x1b[1m中文中文\x1b[0m" + strings.Repeat("\x1b[2m \x1b[0m", 6), 10,
			[]string{"\x1b[1m中文中文\x1b[0m" + strings.Repeat("\x1b[2m \x1b[0m", 2) + strings.Repeat("\x1b[2m\x1b[0m", 4)}},
		{"padding after a break", "\x1b[1mlonglonglong\x1b[0m" + strings.Repeat("\x1b[2m \x1b[0m", 12), 8,
			[]string{"\x1b[1mlonglong\x1b[0m", "\x1b[1mlong\x1b[0m" + strings.Repeat("\x1b[2m \x1b[0m", 4) + "\x1b[2m\x1b[0m"}},
		{"styles carried", "\x1b[4mlonglonglong\x1b[0m", 4, []string{"\x1b[4mlong\x1b[0m", "\x1b[4mlong\x1b[0m", "\x1b[4mlong\x1b[0m"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wrapWide([]string{tt.line}, tt.width)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("wrapWide(%q, %d) =\n%q\nwant\n%q", tt.line, tt.width, got, tt.want)
			}
			var plain strings.Builder
			for _, l := range got {
				if w := ansi.StringWidth(l); w > tt.width {
					t.Errorf("row %q is %d cells, wider than %d", l, w, tt.width)
				}
				plain.WriteString(strings.TrimSpace(ansi.Strip(l)))
			}
			if want := strings.ReplaceAll(ansi.Strip(tt.line), " ", ""); strings.ReplaceAll(plain.String(), " ", "") != want {
				t.Errorf("text was lost: %q, want %q", plain.String(), want)
			}
		})
	}
	lines := []string{"a", "b"}
	if got := wrapWide(lines, 10); &got[0] != &lines[0] {
		t.Error("lines that fit were copied")
	}
}

// The frames below are what the console shows of foreign text: a Go code
// block streamed with tabs, a Go source file read with read_file, a file
// full of escape sequences, and an answer in Chinese with emoji and a
// 200-character URL. Each is driven by the real engine with a scripted
// model, its events' times pinned.

var textFixed = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

const goAnswer = "Here it is:\n\n```go\npackage main\n\nimport \"fmt\"\n\nfunc main() {\n\tfor i := 0; i < 3; i++ {\n\t\tfmt.Println(\"hello\", i)\t// count\n\t}\n}\n```\n\nRun it with `go run .`"

var escapeFile = "title: \x1b]0;PWNED\x07\n" +
	"clipboard: \x1b]52;c;cm0gLXJmIH4=\x07\n" +
	"link: \x1b]8;;https://evil.example\x1b\\click me\x1b]8;;\x1b\\\n" +
	"clear: \x1b[2J\x1b[H\n" +
	"cursor: \x1b[10;10H\x1b[5A\x1b7\x1b8\n" +
	"overwrite: secret\rpublic\n" +
	"bell: \x07\x07 C1: \u009b31m \u009d0;x\u009c\n" +
	"colour: \x1b[31;1mred\x1b[0m tab:\tend\n"

var chineseAnswer = "这是一个很长的中文句子，没有任何空格，用来检查聊天窗格是否会把它完整地换行显示出来，而不是在窗格的边缘截断并加上省略号。🎉😀👍 文档在这里：https://example.com/docs/" +
	strings.Repeat("a1b2c3d4e5", 17) + "?q=1 以及更多的文字。"

// textEvents runs task on the real engine with a scripted model over a
// workspace holding files, and returns every event with pinned times.
func textEvents(t *testing.T, files map[string]string, turns string, task string) []engine.Event {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := tools.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	model, err := script.Parse("test", []byte(turns))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.NewRegistry(ws.ReadFile())
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Config{Model: model, ModelName: "script", Tools: reg})
	var evs []engine.Event
	for ev := range e.Start(context.Background(), engine.NewSession("0mx2text0001"), task, nil) {
		ev.Time = textFixed
		if d, ok := ev.Data.(*engine.ToolFinished); ok {
			d.DurationMS = 0
		}
		evs = append(evs, ev)
	}
	return evs
}

// checkFrame fails when a frame is not exactly h lines of at most w cells,
// or holds anything a terminal would act on (the ASCII profile draws no
// colour, so there is no escape sequence in a frame at all).
func checkFrame(t *testing.T, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) != h {
		t.Errorf("the frame has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d cells wide, more than %d: %q", i+1, n, w, l)
		}
	}
	checkSafe(t, frame)
}

func TestSanitizedFrames(t *testing.T) {
	goFile, err := os.ReadFile("testdata/sanitize/gate.go")
	if err != nil {
		t.Fatal(err)
	}
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	scenes := []struct {
		name  string
		files map[string]string
		turns string
		task  string
		// upTo cuts the events before the first of this kind (a frame
		// in the middle of a run); keys are pressed after the events.
		upTo engine.Kind
		keys []tea.KeyMsg
	}{
		{name: "go-stream", task: "show me a Go loop", upTo: engine.KindDecision,
			turns: `{"turns":[{"answer":` + quote(goAnswer) + `,"stream":true}]}`},
		{name: "go-answer", task: "show me a Go loop",
			turns: `{"turns":[{"answer":` + quote(goAnswer) + `,"stream":true}]}`},
		{name: "read-go-file", task: "read gate.go", files: map[string]string{"gate.go": string(goFile)},
			turns: `{"turns":[{"tool_calls":[{"name":"read_file","arguments":{"path":"gate.go"}}]},{"answer":"It declares the Gate."}]}`,
			keys:  []tea.KeyMsg{{Type: tea.KeyCtrlX}}},
		{name: "read-go-file-details", task: "read gate.go", files: map[string]string{"gate.go": string(goFile)},
			turns: `{"turns":[{"tool_calls":[{"name":"read_file","arguments":{"path":"gate.go"}}]},{"answer":"It declares the Gate."}]}`,
			keys:  []tea.KeyMsg{{Type: tea.KeyTab}, {Type: tea.KeyTab}, {Type: tea.KeyHome}, {Type: tea.KeyUp}, {Type: tea.KeyUp}, {Type: tea.KeyUp}, {Type: tea.KeyUp}, {Type: tea.KeyUp}, {Type: tea.KeyUp}, {Type: tea.KeyEnter}}},
		{name: "escapes", task: "read \x1b]0;task title\x07escapes.txt", files: map[string]string{"escapes.txt": escapeFile},
			turns: `{"turns":[{"tool_calls":[{"name":"read_file","arguments":{"path":"escapes.txt"}}]},{"answer":` + quote("Done: \x1b[2J\x1b]0;answer title\x07 and a \ttab") + `}]}`,
			keys:  []tea.KeyMsg{{Type: tea.KeyCtrlX}}},
		{name: "chinese", task: "用中文回答，并给我一个链接 😀",
			turns: `{"turns":[{"answer":` + quote(chineseAnswer) + `}]}`},
	}
	for _, sz := range []struct{ w, h int }{{120, 40}, {80, 24}} {
		for _, sc := range scenes {
			t.Run(fmt.Sprintf("%s-%dx%d", sc.name, sz.w, sz.h), func(t *testing.T) {
				evs := textEvents(t, sc.files, sc.turns, sc.task)
				m := New(Config{Model: "script", Style: "notty", Backend: textBackend{}})
				m.Update(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
				for _, ev := range evs {
					if ev.Kind == sc.upTo {
						break
					}
					m.Update(engineEventMsg{ev})
				}
				for _, k := range sc.keys {
					m.Update(k)
				}
				frame := m.View()
				checkFrame(t, frame, sz.w, sz.h)
				golden.RequireEqual(t, []byte(frame)) // go test ./ui -run TestSanitizedFrames -update rewrites testdata
			})
		}
	}
}

// textBackend is a session that is only looked at.
type textBackend struct{}

func (textBackend) Start(context.Context, string) <-chan engine.Event { return nil }
func (textBackend) Continue(context.Context) <-chan engine.Event      { return nil }
func (textBackend) ChangeMemory(engine.MemoryChanged) (engine.Event, error) {
	return engine.Event{}, nil
}
func (textBackend) SessionID() string { return "0mx2text0001" }
func (textBackend) Close() error      { return nil }

// FuzzSanitize: whatever the text, what Sanitize returns holds nothing a
// terminal would act on (no control, no bidirectional control, no line that
// begins with a mark of no width), is Sanitize's own fixed point, and says
// the same lines when the text comes in two pieces.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "plain", "a\tb\r\n\x1b]0;t\x07", "\u009b2J中\t😀", "x\r", "\xe4\xb8", escapeFile, goAnswer, chineseAnswer,
		"if a != \"user\u202E \u2066// admin\u2069 \u2066\"", "\u0301x\n\u200Dy\r\n\uFE0F"} {
		f.Add(s, uint(len(s)/2))
	}
	f.Fuzz(func(t *testing.T, s string, cut uint) {
		got := Sanitize(s)
		checkSafe(t, got)
		if strings.Contains(got, "\t") {
			t.Errorf("Sanitize(%q) = %q holds a tab", s, got)
		}
		if again := Sanitize(got); again != got {
			t.Errorf("Sanitize(%q) = %q, but Sanitize of that is %q", s, got, again)
		}
		i := int(cut % uint(len(s)+1))
		var z Sanitizer
		pieces := z.Sanitize(s[:i]) + z.Sanitize(s[i:]) + z.Flush()
		checkSafe(t, pieces)
		if strings.Count(pieces, "\n") != strings.Count(got, "\n") {
			t.Errorf("%q cut at %d: %q has other lines than %q", s, i, pieces, got)
		}
	})
}

// TestMarkdownFillsRows: an answer with code spans and hyphens is filled as
// any paragraph is: no row runs past the width, and no row could have taken
// the next row's first word (glamour's wrapper did not count hyphens, and a
// word was left alone on a row). Hyphens in a URL are glamour's still (its
// autolink needs them), so a paragraph with one is only checked for width.
func TestMarkdownFillsRows(t *testing.T) {
	const help = "(I am the offline model; run with `--model` or `OPENAI_API_KEY` for a real one.)"
	texts := []string{
		"I cannot work out \"the meaning of life\".\n\n" + help,
		"A well-known, state-of-the-art, built-in, step-by-step, run-of-the-mill, co-operative re-entry of " +
			"`--base-url` and `--max-steps` and `-v` flags: x-y-z, 1-2-3, e-mail, up-to-date, so-called.",
		"- a list item with a hyphen-ated word and a `--flag` that goes on for long enough to wrap twice over\n" +
			"- another\n\n---\n\nAnd a well-known, long-winded, hyphen-rich sentence after a rule, long enough to wrap.",
		"```sh\nagentty --model x --max-steps 3\n```\n\nSee https://my-site.example/some-long-path or www.other-site.example.",
	}
	for _, style := range []string{"notty", "dark"} {
		for _, text := range texts {
			for w := 20; w <= 100; w++ {
				c := newChat(style)
				var plain []string
				for _, r := range c.markdown(text, w) {
					plain = append(plain, strings.TrimRight(ansi.Strip(r), " "))
				}
				joined := strings.Join(plain, "\n")
				for i, r := range plain {
					if n := ansi.StringWidth(r); n > w {
						t.Errorf("%s, width %d: row %q is %d cells", style, w, r, n)
					}
					if i == 0 || r == "" || plain[i-1] == "" || strings.HasPrefix(strings.TrimSpace(r), "•") || strings.Contains(text, "://") {
						continue
					}
					// Glamour fills rows to the width less its margins of 2
					// (and counts the space the dark style pads a code span
					// with at each end).
					first, _, _ := strings.Cut(strings.TrimSpace(r), " ")
					if ansi.StringWidth(plain[i-1])+1+ansi.StringWidth(first)+2 <= w-2 {
						t.Errorf("%s, width %d: %q would fit after %q:\n%s", style, w, first, plain[i-1], joined)
					}
				}
				if strings.Contains(joined, heldHyphen) {
					t.Errorf("%s, width %d: a held hyphen was drawn:\n%s", style, w, joined)
				}
				for _, want := range []string{"agentty --model x --max-steps 3", "--------", "https://my-site.example/some-long-path", "http://www.other-site.example"} {
					if strings.Contains(text, want[:8]) && !strings.Contains(strings.ReplaceAll(joined, "\n  ", ""), want) && w >= 60 {
						t.Errorf("%s, width %d: %q is not drawn whole:\n%s", style, w, want, joined)
					}
				}
			}
		}
	}
	// The tester's frame: the chat of a 160-column console.
	c := newChat("notty")
	got := strings.Join(c.markdown(texts[0], 72), "\n")
	if want := "  (I am the offline model; run with --model or OPENAI_API_KEY for a\n  real one.)"; !strings.Contains(got, want) {
		t.Errorf("at 72:\n%s\nwant\n%s", got, want)
	}
}

// TestHangRows: the rows a long line of a result wraps to start under its
// text, after a read_file line's number, so that they do not read as
// numbered lines of their own.
func TestHangRows(t *testing.T) {
	tests := []struct {
		line  string
		width int
		want  []string
	}{
		{"short", 10, []string{"short"}},
		{"     1  abc def ghi jkl", 16, []string{"     1  abc def", "        ghi jkl"}},
		{"    44          // Args replaces it", 24, []string{"    44          // Args", "        replaces it"}},
		{"1234567 text text text", 20, []string{"1234567 text text", "        text"}},
		{"1234567 text text text", 14, []string{"1234567 text", "text text"}},
		{"    result: a b c d e f", 12, []string{"    result:", "    a b c d", "    e f"}},
		{"abc def ghi", 5, []string{"abc", "def", "ghi"}},
		{"2024 was a long year", 10, []string{"2024 was a", "long year"}},
		{"          deep text here", 12, []string{"      deep", "      text", "      here"}},
	}
	for _, tt := range tests {
		got := hangRows(tt.line, tt.width)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("hangRows(%q, %d) = %q, want %q", tt.line, tt.width, got, tt.want)
		}
	}
}

// TestQuotedFileHangs: a file the offline model quotes in a plain code
// block ("read README.md") wraps its long lines under their text, after the
// line number, not at the margin where they would read as lines of their
// own; a block with a language is glamour's to wrap.
func TestQuotedFileHangs(t *testing.T) {
	file := "README.md (lines 1-3 of 3):\n\n```\n" +
		"     1  A folder you open is not trusted until you say so: risky keys in its `agentty.json` are not yours.\n" +
		"     2  short\n" +
		"     3  \"system_prompt\": \"You are a careful agent working in this repository, and more besides.\",\n```"
	numbered := regexp.MustCompile(`^ +[0-9]+  `)
	for _, style := range []string{"notty", "dark"} {
		for w := 40; w <= 100; w += 3 {
			c := newChat(style)
			rows := c.markdown(file, w)
			for _, r := range rows[1:] {
				p := ansi.Strip(r)
				if ansi.StringWidth(p) > w {
					t.Errorf("%s, width %d: %q is wider", style, w, p)
				}
				if strings.TrimSpace(p) == "" || numbered.MatchString(p) {
					continue
				}
				if lead := len(p) - len(strings.TrimLeft(p, " ")); lead < 2+2+8 {
					t.Errorf("%s, width %d: %q starts at column %d, not under the text:\n%s", style, w, p, lead, ansi.Strip(strings.Join(rows, "\n")))
				}
			}
		}
	}
	code := "```go\nfunc f() { return \"a long string that is longer than the width of the pane\" }\n```"
	if got := hangCode(code, 30); got != code {
		t.Errorf("a Go block was wrapped here:\n%s", got)
	}
}

// Rows break between words, not inside a flag or a path that fits on the
// next row; a word longer than a row is still broken.
func TestWrapKeepsTokensWhole(t *testing.T) {
	for _, tt := range []struct {
		in   string
		w    int
		want []string
	}{
		{"run agentty --base-url http://x", 16, []string{"run agentty", "--base-url", "http://x"}},
		{"in /home/me/proj-a/untrusted now", 24, []string{"in", "/home/me/proj-a/untruste", "d now"}},
		{"see /home/me/proj-a/x", 18, []string{"see", "/home/me/proj-a/x"}},
		{"well-known words", 8, []string{"well-kno", "wn words"}},
	} {
		got := wrapRows(tt.in, tt.w)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("wrapRows(%q, %d) = %q, want %q", tt.in, tt.w, got, tt.want)
		}
	}
}
