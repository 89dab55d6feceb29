package gates

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
)

// A line of standard input past MaxAnswerLine is not held whole: it is an
// error, and the next line is the next answer.
func TestAnswerLineIsBounded(t *testing.T) {
	huge := strings.Repeat("x", 3<<20)
	in := `{"answer":"` + huge + `"}` + "\n" + `{"answer":"fine"}` + "\n"
	r := bufio.NewReader(strings.NewReader(in))
	if _, err := boundedLine(r, 1<<20); !errors.Is(err, errLongLine) {
		t.Fatalf("a 3 MB line: %v, want errLongLine", err)
	}
	if l, err := boundedLine(r, 1<<20); err != nil || l != `{"answer":"fine"}`+"\n" {
		t.Fatalf("the next line: %q, %v", l, err)
	}
	if l, err := boundedLine(r, 1<<20); !errors.Is(err, io.EOF) || l != "" {
		t.Fatalf("the end: %q, %v", l, err)
	}
	a := NewAsker(strings.NewReader(strings.Repeat("y", MaxAnswerLine+10)+"\n"+`{"answer":"ok"}`+"\n"), io.Discard, false)
	if _, err := a.Ask(context.Background(), &engine.Question{Question: "which?"}); !errors.Is(err, errLongLine) {
		t.Errorf("a line past MaxAnswerLine: %v", err)
	}
	if v, err := a.Ask(context.Background(), &engine.Question{Question: "which?"}); err != nil || v.Answer != "ok" {
		t.Errorf("the next question: %+v, %v", v, err)
	}
}
