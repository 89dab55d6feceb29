package engine

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTruncateAtEveryByte caps multi-byte text at every byte count: the
// kept part is a prefix of s of at most n bytes, cut between runes (valid
// UTF-8 where s was), at most 3 bytes short of n, and the note says so.
func TestTruncateAtEveryByte(t *testing.T) {
	for _, s := range []string{
		"你好，世界！这是一个很长的中文句子",
		"emoji 😀🎉👍 and a flag 🇫🇷 and é ✓",
		"not utf-8: \xff\xfe\x80\x80\x80\x80 and \xe4\xbd then 你",
		strings.Repeat("\x80", 10),
	} {
		for n := 0; n <= len(s)+1; n++ {
			got, cut := truncate(s, n)
			if !cut {
				if len(s) > n || got != s {
					t.Errorf("truncate(%q, %d) = %q, %v", s, n, got, cut)
				}
				continue
			}
			kept, note, ok := strings.Cut(got, "\n[truncated: ")
			switch {
			case !ok || !strings.HasPrefix(s, kept) || len(kept) > n || len(kept) < n-3:
				t.Errorf("truncate(%q, %d) kept %q", s, n, kept)
			case utf8.ValidString(s) && !utf8.ValidString(kept):
				t.Errorf("truncate(%q, %d) split a rune: %q", s, n, kept)
			case utf8.ValidString(s[:n]) && len(kept) != n:
				t.Errorf("truncate(%q, %d) kept %d bytes, want %d: the cut was on a boundary", s, n, len(kept), n)
			case note != fmt.Sprintf("%d of %d bytes of this result shown]", len(kept), len(s)):
				t.Errorf("truncate(%q, %d) note %q", s, n, note)
			}
			if utf8.ValidString(s) {
				if r, _ := utf8.DecodeLastRuneInString(kept); r == utf8.RuneError && kept != "" {
					t.Errorf("truncate(%q, %d) ends in a broken rune: %q", s, n, kept)
				}
			}
		}
	}
}
