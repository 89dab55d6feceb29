package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

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
// saying on stdout (cols wide) what that lets it do.
func TrustFolder(store *TrustStore, arg string, stdout io.Writer, cols int, getenv func(string) string) error {
	dir, err := RealDir(arg)
	if err != nil {
		return err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	user, err := LoadUser(getenv)
	if err != nil {
		return err
	}
	w, err := ReadWorkspace(dir, user)
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
		fmt.Fprintf(stdout, "Trusting %s: its %s may now\n%s", dir, w.Names(), DescribeRisky(w, cols))
	}
	if err := store.Trust(dir, w); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Trusted (recorded in %s; undo: agentty trust --revoke %s).\n", store.Where(), ShellQuote(dir))
	return nil
}
