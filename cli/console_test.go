package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// What agentty run prints reaches a terminal sanitized, and a pipe raw.
func TestRunOutputIsSafeOnATerminal(t *testing.T) {
	sc := writeScript(t, `{"turns":[{"answer":"\u001b]0;pwned\u0007evil\u001b[2J\tcolumn\rover"}]}`)
	home := t.TempDir()
	_, out, _ := runCLI(t, context.Background(), map[string]string{"AGENTTY_HOME": home}, "run", "--model", "script:"+sc, "hi")
	if !strings.Contains(out, "\x1b]0;pwned\x07") {
		t.Errorf("piped output is not raw: %q", out)
	}
	tm := newTmux(t)
	cmd := fmt.Sprintf("AGENTTY_HOME=%s AGENTTY_CONFIG=%s/none.json %s run --model script:%s hi; echo DONE; sleep 30", home, home, binary, sc)
	tm.run("new-session", "-d", "-s", tm.name, "-x", "100", "-y", "10", cmd)
	s := tm.wait("the answer", func(s string) bool { return strings.Contains(s, "DONE") })
	if !strings.Contains(s, "␛]0;pwned^Gevil␛[2J     column^Mover") {
		t.Errorf("the answer is not shown sanitized:\n%s", s)
	}
	if title := tm.run("display-message", "-p", "-t", tm.name, "#{pane_title}"); strings.Contains(title, "pwned") {
		t.Errorf("the answer retitled the terminal: %q", title)
	}
}
