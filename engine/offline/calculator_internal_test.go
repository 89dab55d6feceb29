package offline

import (
	"strings"
	"testing"

	"github.com/agentty/agentty/tools"
)

// asciiDigits returns the digits 0-9 of s, in order.
func asciiDigits(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// isSubsequence says whether the bytes of sub appear in s in order.
func isSubsequence(sub, s string) bool {
	for i := 0; i < len(s) && sub != ""; i++ {
		if s[i] == sub[0] {
			sub = sub[1:]
		}
	}
	return sub == ""
}

// FuzzArithmetic checks that the planner never hands the calculator a part
// of what was asked: every digit of the message is in the expression, in
// order (words may add some: "squared" is ^2). It answers one way at most,
// and the calculator can read what it is given or says why not.
func FuzzArithmetic(f *testing.F) {
	for _, s := range []string{
		"what is (17*23)+sqrt(16)?", "what is 1e3 + 1", "what is 1,000 + 1?", "how much is 15% of 80?",
		"what is the square root of 16 plus 9?", "what is 3x4?", "what is 0x10 + 1", "what is 5kg + 3kg?",
		"my phone number is 555-123-4567", "what is 2024-01-15", "what is 3 + 3!", "2 + 2 = ?", "what is 6 × 7?",
		"what is negative 5 plus 3", "what's 6*7 equal to?", "what is my age plus 5?",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		expr, refusal := arithmetic(text)
		if expr != "" && refusal != "" {
			t.Fatalf("arithmetic(%q) = %q and refuses %q", text, expr, refusal)
		}
		if expr == "" {
			return
		}
		if want := asciiDigits(text); !isSubsequence(want, asciiDigits(expr)) {
			t.Fatalf("arithmetic(%q) = %q, which drops some of the digits %s", text, expr, want)
		}
		if _, err := tools.Evaluate(expr); err != nil && !strings.HasPrefix(err.Error(), "calculator: ") {
			t.Fatalf("arithmetic(%q) = %q: %v", text, expr, err)
		}
	})
}
