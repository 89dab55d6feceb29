package bus

import (
	"strings"
	"testing"
)

// TestLongTokensAreBounded: a run id of any length (a model's call ids are
// in it) makes a subject the server accepts, different ids stay apart.
func TestLongTokensAreBounded(t *testing.T) {
	long := strings.Repeat("call.x", 1000)
	a, b := Token(long), Token(long+"y")
	if len(a) > maxToken+1 || a == b || strings.ContainsAny(a, ".*> ") {
		t.Errorf("tokens %d bytes %q… and %q…", len(a), a[:40], b[:40])
	}
	if got := string(appendToken(nil, long)); got != a {
		t.Errorf("appendToken and Token differ")
	}
}
