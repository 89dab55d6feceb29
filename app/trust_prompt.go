package app

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// RealDir is dir made absolute, its links resolved where it exists.
func RealDir(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir, nil
}

// TrustFolder trusts the folder arg and its .agentty.json as it is now,
// saying on stdout what that lets it do.
func TrustFolder(store *config.TrustStore, arg string, stdout io.Writer, getenv func(string) string) error {
	dir, err := RealDir(arg)
	if err != nil {
		return err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	user, err := config.LoadUser(getenv)
	if err != nil {
		return err
	}
	w, err := config.ReadWorkspace(dir, user)
	if err != nil {
		return err
	}
	switch {
	case w == nil:
		fmt.Fprintf(stdout, "%s has no .agentty.json or .mcp.json; trusting it anyway (a config added later must be trusted again).\n", dir)
	case len(w.Risky) == 0:
		fmt.Fprintf(stdout, "%s asks for nothing risky; trusting it.\n", w.File)
	default:
		if changed := store.Changes(w); changed != nil && !store.Holds(w) {
			fmt.Fprintf(stdout, "%s (%s) changed since you trusted it: %s.\n", w.Dir, w.Names(), strings.Join(changed, ", "))
		}
		fmt.Fprintf(stdout, "Trusting %s: its %s may now\n%s", dir, w.Names(), config.DescribeRisky(w, TermWidth(stdout)))
	}
	if err := store.Trust(dir, w); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Trusted (recorded in %s; undo: agentty trust --revoke %s).\n", store.Where(), config.ShellQuote(dir))
	return nil
}
