package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Reading a file of someone else's folder (a workspace's agent files,
// skills, workflows): the file is opened through an os.Root of the folder,
// so no .., no symlink (the file's own included) and no folder on the way
// leads out of it; with O_NONBLOCK, so a FIFO cannot make the open wait;
// judged on the opened file's Stat, not on a name that could be swapped
// between a look and the open; regular files only, and bounded while
// reading (no more than the bound and one byte is read). tools/regular.go's
// readRegular is the same for the file tools.

// ReadIn reads the regular file path of the folder root, at most max
// bytes (a larger one is an error). path is absolute, or relative to root;
// root is absolute.
func ReadIn(root, path string, max int) ([]byte, error) {
	b, more, err := ReadAtMostIn(root, path, max)
	if err == nil && more {
		err = fmt.Errorf("larger than %d bytes", max)
	}
	return b, err
}

// ReadAtMostIn reads the first n bytes of the regular file path of the
// folder root, as ReadIn does, and says whether there was more.
func ReadAtMostIn(root, path string, n int) ([]byte, bool, error) {
	rel, err := relIn(root, path)
	if err != nil {
		return nil, false, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false, whyNotOpened(root, path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !st.Mode().IsRegular() {
		return nil, false, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	return readBounded(f, n)
}

// relIn is path relative to root. An absolute path is taken lexically
// first, then with its folder's and root's symlinks resolved (root is
// often the workspace with its own resolved, the path not); either way
// the open goes through root, which nothing leaves.
func relIn(root, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return path, nil
	}
	if rel, ok := under(root, path); ok {
		return rel, nil
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, filepath.Base(path))
	if rel, ok := under(resolved(root), p); ok {
		return rel, nil
	}
	return "", outside(p, root)
}

// resolved is p with its symlinks resolved, or p when they cannot be.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// under is p relative to root when p is in root.
func under(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// whyNotOpened explains an open through root that failed: a link leading
// out is said to, with where it leads.
func whyNotOpened(root, path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, path)
	}
	if real, rerr := filepath.EvalSymlinks(abs); rerr == nil {
		if _, ok := under(resolved(root), real); !ok {
			return outside(real, root)
		}
	}
	return err
}

// outside says that a path leads out of root: where to (the caller names
// the path).
func outside(target, root string) error {
	return fmt.Errorf("leads to %s, outside %s; refusing to read it", target, root)
}

// NotRegularError is a file that is not a regular file (a FIFO, a socket,
// a device, a folder): refused at once, never waited on.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

// Error says what the file is instead, in the words of the file tools.
func (e *NotRegularError) Error() string {
	what := "not a regular file"
	switch m := e.Mode; {
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m.IsDir():
		what = "a folder"
	}
	return fmt.Sprintf("refused: %s is %s, not a regular file", e.Path, what)
}
