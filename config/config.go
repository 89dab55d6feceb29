// Package config holds what agentty reads of the person's and the
// workspace's settings: the config file (Settings: where it is, parsing
// with errors that name file, line and field, merging), the trust of a
// workspace's .agentty.json (its risky keys, the safe part, the trust
// file), models' context windows and compaction settings, the project
// instructions (AGENTS.md and the like) given to the model, and reading
// files that may be someone else's (bounded, regular files only).
package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Path returns the user's config file: $AGENTTY_CONFIG, else
// $XDG_CONFIG_HOME/agentty/config.json, else ~/.config/agentty/config.json.
func Path(getenv func(string) string) string {
	if p := getenv("AGENTTY_CONFIG"); p != "" {
		return p
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "agentty", "config.json")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".config", "agentty", "config.json")
}

// MaxFile bounds a workspace config file: it is someone else's.
const MaxFile = 1 << 20

// ReadSmall reads a regular file of at most MaxFile bytes: a FIFO or a
// device would hang or never end.
func ReadSmall(path string) ([]byte, error) {
	b, more, err := ReadAtMost(path, MaxFile)
	if err == nil && more {
		err = fmt.Errorf("larger than %d bytes", MaxFile)
	}
	return b, err
}

// ReadAtMost reads the first n bytes of a regular file, and says whether
// there was more; a FIFO or a device is an error (it would hang or never
// end).
func ReadAtMost(path string, n int) ([]byte, bool, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	return readBounded(f, n)
}

// OpenRegular opens a regular file to read; a FIFO or a device is an
// error, and opening one does not wait (O_NONBLOCK: a FIFO's open would
// wait for a writer).
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = errors.New("not a regular file")
		}
		return nil, err
	}
	return f, nil
}

// readBounded reads the first n bytes of f, and says whether there was
// more.
func readBounded(f io.Reader, n int) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(f, int64(n)+1))
	if err != nil {
		return nil, false, err
	}
	if len(b) > n {
		return b[:n], true, nil
	}
	return b, false, nil
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+,:@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
