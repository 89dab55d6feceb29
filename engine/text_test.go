package engine_test

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentty/agentty/engine"
)

// clipTexts are cut at every position by the tests below.
var clipTexts = []string{
	"",
	"plain ascii",
	"你好，世界！这是一个很长的中文句子",
	"emoji 😀🎉👍 and a flag 🇫🇷 and a family 👨‍👩‍👧",
	"mixed é ✓ 中 😀 a",
	"not utf-8: \xff\xfe and \xe4\xbd (a torn 你)",
}

// TestClip cuts multi-byte text at every position and checks the result
// against its definition: s when it fits, else the first n-1 runes and
// "…"; never more than n runes, valid UTF-8 where s was.
func TestClip(t *testing.T) {
	for _, s := range clipTexts {
		runes := []rune(s)
		for n := -1; n <= len(runes)+2; n++ {
			got := engine.Clip(s, n)
			var want string
			switch {
			case n < 1:
				want = ""
			case utf8.RuneCountInString(s) <= n:
				want = s
			default:
				// The first n-1 runes of s, as bytes of s (a byte that is
				// not UTF-8 is kept as it is).
				cut := 0
				for i := 0; i < n-1; i++ {
					_, size := utf8.DecodeRuneInString(s[cut:])
					cut += size
				}
				want = s[:cut] + "…"
			}
			if got != want {
				t.Errorf("Clip(%q, %d) = %q, want %q", s, n, got, want)
			}
			if c := utf8.RuneCountInString(got); n >= 0 && c > n {
				t.Errorf("Clip(%q, %d) has %d runes", s, n, c)
			}
			if utf8.ValidString(s) && !utf8.ValidString(got) {
				t.Errorf("Clip(%q, %d) = %q is not valid UTF-8", s, n, got)
			}
		}
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"  two\n\tlines  ", 20, "two lines"},
		{"第一行\n第二行", 5, "第一行 …"},
		{"a\r\nb   c", 3, "a …"},
		{"😀 😀 😀", 5, "😀 😀 😀"},
		{"😀 😀 😀", 4, "😀 😀…"},
	}
	for _, tt := range tests {
		if got := engine.OneLine(tt.in, tt.n); got != tt.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
	if got := engine.OneLine(strings.Repeat("字 ", 500), 300); utf8.RuneCountInString(got) != 300 || !strings.HasSuffix(got, "…") {
		t.Errorf("OneLine of 500 words: %d runes %q…", utf8.RuneCountInString(got), got[:20])
	}
}

func BenchmarkClip(b *testing.B) {
	s := strings.Repeat("中文 and ascii 😀 ", 40)
	b.ReportAllocs()
	for b.Loop() {
		engine.Clip(s, 200)
		engine.Clip("short", 200)
	}
}

func TestWrapAndShowSpaces(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"hello world", 20, []string{"hello world"}},
		{"hello world", 7, []string{"hello ", "world"}},
		{`["a","b","c"]`, 8, []string{`["a",`, `"b","c"]`}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"one\ntwo", 10, []string{"one", "two"}},
	} {
		if got := engine.Wrap(tc.in, tc.width); !slices.Equal(got, tc.want) {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
	for in, want := range map[string]string{
		"echo hi": "echo hi",
		"a   b":   "a   b",
		"echo hello" + strings.Repeat(" ", 300) + "; touch ~/pwned": "echo hello⟨300 spaces⟩; touch ~/pwned",
		"a\tb\r": "a⟨tab⟩b⟨CR⟩",
	} {
		if got := engine.ShowSpaces(in); got != want {
			t.Errorf("ShowSpaces(%q) = %q, want %q", in, got, want)
		}
	}
}
