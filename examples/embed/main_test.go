package main

import (
	"strings"
	"testing"
)

// TestEmbedAnswersOffline: the example program runs its three tasks on the
// offline model, calls the calculator and the memory tools, and answers
// from the memory it journaled.
func TestEmbedAnswersOffline(t *testing.T) {
	var out strings.Builder
	if err := run(&out, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"17*23 = 391", "remember {", "release is on Friday", "journaled as session"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output has no %q:\n%s", want, out.String())
		}
	}
}
