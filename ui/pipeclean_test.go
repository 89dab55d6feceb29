package ui

import "testing"

// TestCleaner: escapes and controls are made visible; tabs, line breaks
// and other characters stay; text cut at any byte cleans as it does whole.
func TestCleaner(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain\ttabbed\nline\r\n", "plain\ttabbed\nline\r\n"},
		{"title \x1b]0;pwned\x07 here", "title ␛]0;pwned^G here"},
		{"clip \x1b]52;c;ZXZpbA==\x1b\\", "clip ␛]52;c;ZXZpbA==␛\\"},
		{"\x1b[2Jcleared", "␛[2Jcleared"},
		{"c1 \u009b31m", "c1 ␛[31m"},
		{"lone\rreturn", "lone^Mreturn"},
		{"ends\r", "ends^M"},
		{"bidi \u202eevil", "bidi ⟨RLO⟩evil"},
		{"héllo 👍🏽 wide 漢字", "héllo 👍🏽 wide 漢字"},
		{"bad \xff byte", "bad \uFFFD byte"},
	} {
		var c Cleaner
		if got := c.Clean(tc.in) + c.Flush(); got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for cut := range len(tc.in) {
			var c Cleaner
			if got := c.Clean(tc.in[:cut]) + c.Clean(tc.in[cut:]) + c.Flush(); got != tc.want {
				t.Errorf("Clean(%q) cut at %d = %q, want %q", tc.in, cut, got, tc.want)
			}
		}
	}
}

// FuzzCleaner: whatever comes in, nothing that starts an escape or moves
// the cursor comes out, and text cut in two cleans as it does whole.
func FuzzCleaner(f *testing.F) {
	f.Add("\x1b]52;c;eA==\x07 \r\n\t\u009b\u202e", 3)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		var whole Cleaner
		out := whole.Clean(s) + whole.Flush()
		for i := 0; i < len(out); i++ {
			if c := out[i]; c < 0x20 && c != '\t' && c != '\n' && !(c == '\r' && i+1 < len(out) && out[i+1] == '\n') || c == 0x7f {
				t.Fatalf("Clean(%q) = %q: control %#x at %d", s, out, c, i)
			}
		}
		if cut = max(cut, 0) % (len(s) + 1); true {
			var c Cleaner
			if got := c.Clean(s[:cut]) + c.Clean(s[cut:]) + c.Flush(); got != out {
				t.Fatalf("Clean(%q) cut at %d = %q, whole %q", s, cut, got, out)
			}
		}
	})
}
