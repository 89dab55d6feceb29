package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadIn: a file of the folder is read; a symlink out (the file's own
// or a folder's on the way), .., a FIFO, a folder and a file over the
// bound are refused, a FIFO at once.
func TestReadIn(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	away := t.TempDir()
	secret := filepath.Join(away, "secret.md")
	readinOK(t, os.WriteFile(secret, []byte("outside"), 0o600))
	readinOK(t, os.WriteFile(filepath.Join(root, "ok.md"), []byte("inside"), 0o600))
	readinOK(t, os.WriteFile(filepath.Join(root, "big.md"), []byte(strings.Repeat("x", 100)), 0o600))
	readinOK(t, os.Mkdir(filepath.Join(root, "sub"), 0o700))
	readinOK(t, os.Symlink(secret, filepath.Join(root, "out.md")))
	readinOK(t, os.Symlink("ok.md", filepath.Join(root, "in.md")))
	readinOK(t, os.Symlink(away, filepath.Join(root, "awaydir")))
	if err := syscall.Mkfifo(filepath.Join(root, "fifo.md"), 0o600); err != nil {
		t.Skip(err)
	}
	// The workspace as named by a path through a symlink to it.
	alias := filepath.Join(t.TempDir(), "alias")
	readinOK(t, os.Symlink(root, alias))

	for _, tc := range []struct {
		path, want, err string
	}{
		{"ok.md", "inside", ""},
		{filepath.Join(root, "ok.md"), "inside", ""},
		{filepath.Join(alias, "ok.md"), "inside", ""},
		{"in.md", "inside", ""},
		{"out.md", "", "leads to " + secret + ", outside " + root + "; refusing to read it"},
		{filepath.Join(alias, "out.md"), "", "leads to " + secret + ", outside " + root + "; refusing to read it"},
		{"awaydir/secret.md", "", "leads to " + secret + ", outside " + root},
		{filepath.Join(root, "awaydir", "secret.md"), "", "leads to " + secret + ", outside " + root},
		{"../" + filepath.Base(away) + "/secret.md", "", "refusing to read it"},
		{secret, "", "outside " + root},
		{"fifo.md", "", "refused: fifo.md is a named pipe (FIFO), not a regular file"},
		{"sub", "", "refused: sub is a folder, not a regular file"},
		{"big.md", "", "larger than 50 bytes"},
		{"none.md", "", "no such file"},
	} {
		done := make(chan struct{})
		var b []byte
		var err error
		go func() {
			defer close(done)
			b, err = ReadIn(root, tc.path, 50)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("ReadIn(%s) is still waiting", tc.path)
		}
		if tc.err == "" && (err != nil || string(b) != tc.want) {
			t.Errorf("ReadIn(%s) = %q, %v; want %q", tc.path, b, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ReadIn(%s) = %q, %v; want an error with %q", tc.path, b, err, tc.err)
		}
	}
}

func readinOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
