package app

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentty/agentty/config"
	"golang.org/x/term"
)

// PromptTrust asks the person, on a terminal, what to do with a workspace
// config that has risky keys and no trust. It reads one line from in.
func PromptTrust(in io.Reader, out io.Writer) func(w *config.Workspace, changed []string) (trustChoice, error) {
	return func(w *config.Workspace, changed []string) (trustChoice, error) {
		if changed != nil {
			fmt.Fprintf(out, "%s (%s) changed since you trusted this folder (%s).\n", w.Dir, w.Names(), strings.Join(changed, ", "))
		}
		fmt.Fprintf(out, "%s asks for settings that can run programs, reach hosts or loosen approvals:\n%s", w.File, config.DescribeRisky(w, TermWidth(out)))
		r := byteReader{in} // no read-ahead: the console reads what follows
		for {
			fmt.Fprint(out, "Trust this folder? t = trust it, c = continue without these settings (the default), q = quit; then Enter: ")
			line, err := readLine(r)
			if err != nil {
				fmt.Fprintln(out)
				return trustQuit, nil
			}
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "t", "trust", "y", "yes":
				return trustRecord, nil
			case "c", "continue", "n", "no", "":
				return trustIgnore, nil
			case "q", "quit":
				return trustQuit, nil
			}
			fmt.Fprintf(out, "%q is not one of the answers.\n", strings.TrimSpace(line))
		}
	}
}

// byteReader reads one byte at a time.
type byteReader struct{ io.Reader }

func (r byteReader) ReadByte() (byte, error) {
	var b [1]byte
	if _, err := io.ReadFull(r.Reader, b[:]); err != nil {
		return 0, err
	}
	return b[0], nil
}

// readLine reads up to a newline one byte at a time.
func readLine(r io.ByteReader) (string, error) {
	var b strings.Builder
	for {
		c, err := r.ReadByte()
		if err != nil {
			return b.String(), err
		}
		if c == '\n' {
			return b.String(), nil
		}
		b.WriteByte(c)
	}
}

// TermWidth is the width of the terminal w writes to, or 100 when it is
// none (a pipe, a file, a test).
func TermWidth(w any) int {
	if s, ok := w.(*safeWriter); ok {
		w = s.w
	}
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 100
}

// IsTerminal reports whether r is a terminal.
func IsTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
