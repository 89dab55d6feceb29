package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentty/agentty/config"

	"golang.org/x/term"
)

// trustCmd runs `agentty trust [DIR] | --list | --revoke DIR`.
func trustCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlags("trust", stderr)
	list := fs.Bool("list", false, "list the trusted folders")
	revoke := fs.Bool("revoke", false, "stop trusting DIR")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "agentty trust: "+format+"\n", a...)
		return code
	}
	if fs.NArg() > 1 || (*list && (*revoke || fs.NArg() > 0)) {
		return fail(exitUsage, "usage: agentty trust [DIR] | --list | --revoke DIR")
	}
	store, err := config.LoadTrust(getenv)
	if err != nil {
		return fail(exitError, "%v", err)
	}
	if *list {
		if len(store.Folders) == 0 {
			fmt.Fprintln(stdout, "No folder is trusted.")
			return 0
		}
		for _, dir := range slices.Sorted(maps.Keys(store.Folders)) {
			f := store.Folders[dir]
			state := "trusted"
			switch w, err := config.ReadWorkspace(dir, &config.Settings{}); {
			case err != nil:
				state = "unreadable: " + err.Error()
			case w == nil && f.SHA256 != "":
				state = "its .agentty.json is gone"
			case w != nil && w.Sum != f.SHA256:
				state = "changed since trusted: trust it again to use it"
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", dir, f.TrustedAt.Local().Format("2006-01-02 15:04"), state)
		}
		return 0
	}
	dir, err := filepath.Abs(cmp.Or(fs.Arg(0), "."))
	if err != nil {
		return fail(exitError, "%v", err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if *revoke {
		if fs.NArg() != 1 {
			return fail(exitUsage, "--revoke needs the folder: agentty trust --revoke DIR")
		}
		ok, err := store.Revoke(dir)
		switch {
		case err != nil:
			return fail(exitError, "%v", err)
		case !ok:
			return fail(exitError, "%s was not trusted", dir)
		}
		fmt.Fprintf(stdout, "%s is no longer trusted.\n", dir)
		return 0
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fail(exitError, "%s is not a folder", dir)
	}
	user, err := config.LoadUser(getenv)
	if err != nil {
		return fail(exitError, "%v", err)
	}
	w, err := config.ReadWorkspace(dir, user)
	if err != nil {
		return fail(exitError, "%v", err)
	}
	switch {
	case w == nil:
		fmt.Fprintf(stdout, "%s has no .agentty.json; trusting it anyway (a config added later must be trusted again).\n", dir)
	case len(w.Risky) == 0:
		fmt.Fprintf(stdout, "%s asks for nothing risky; trusting it.\n", w.File)
	default:
		if changed := store.Changes(w); changed != nil && !store.Holds(w) {
			fmt.Fprintf(stdout, "%s changed since you trusted it: %s.\n", w.File, strings.Join(changed, ", "))
		}
		fmt.Fprintf(stdout, "Trusting %s: its .agentty.json may now\n%s", dir, config.DescribeRisky(w, termWidth(stdout)))
	}
	if err := store.Trust(dir, w); err != nil {
		return fail(exitError, "%v", err)
	}
	fmt.Fprintf(stdout, "Trusted (recorded in %s; undo: agentty trust --revoke %s).\n", store.Where(), config.ShellQuote(dir))
	return 0
}

// promptTrust asks the person, on a terminal, what to do with a workspace
// config that has risky keys and no trust. It reads one line from in.
func promptTrust(in io.Reader, out io.Writer) func(w *config.Workspace, changed []string) (trustChoice, error) {
	return func(w *config.Workspace, changed []string) (trustChoice, error) {
		if changed != nil {
			fmt.Fprintf(out, "%s changed since you trusted this folder (%s).\n", w.File, strings.Join(changed, ", "))
		}
		fmt.Fprintf(out, "%s asks for settings that can run programs, reach hosts or loosen approvals:\n%s", w.File, config.DescribeRisky(w, termWidth(out)))
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

// termWidth is the width of the terminal w writes to, or 100 when it is
// none (a pipe, a file, a test).
func termWidth(w any) int {
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

// isTerminal reports whether r is a terminal.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
