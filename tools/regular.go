package tools

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// The file tools touch regular files only. A FIFO, a socket or a device in
// someone's workspace would hang a read (opening a FIFO waits for a
// writer; reading a device may never end) or swallow a write; each is
// opened without blocking and refused, judged on the file opened, not on
// a name that could be swapped between a look and the open.

// errNotRegular says what the file at p is instead.
func errNotRegular(p string, m fs.FileMode) error {
	what := "not a regular file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Errorf("refused: %s is %s, not a regular file", p, what)
}

// readRegular reads the regular file rel, at most max bytes of it (a
// larger one is an error).
func (w *Workspace) readRegular(p, rel string, max int64) ([]byte, fs.FileInfo, error) {
	f, err := w.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, w.explain(p, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, w.explain(p, err)
	}
	if st.IsDir() {
		return nil, st, fmt.Errorf("%s is a folder; use list_dir", p)
	}
	if !st.Mode().IsRegular() {
		return nil, st, errNotRegular(p, st.Mode())
	}
	if st.Size() > max {
		return nil, st, fmt.Errorf("%s is too large to read (%d bytes)", p, st.Size())
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, st, w.explain(p, err)
	}
	if int64(len(b)) > max {
		return nil, st, fmt.Errorf("%s is too large to read (more than %d bytes)", p, max)
	}
	return b, st, nil
}

// writeRegular replaces the content of the file rel, creating it with perm
// when it is not there; what is there must be a regular file.
func (w *Workspace) writeRegular(p, rel string, content []byte, perm fs.FileMode) error {
	// No O_TRUNC until the file is known to be regular; O_NONBLOCK makes
	// a FIFO with no reader fail at once instead of waiting for one.
	f, err := w.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, perm)
	if errors.Is(err, syscall.ENXIO) { // a FIFO with no reader
		return errNotRegular(p, fs.ModeNamedPipe)
	}
	if err != nil {
		return w.explain(p, err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = errNotRegular(p, st.Mode())
	}
	if err == nil {
		err = f.Truncate(0)
	}
	if err == nil {
		_, err = f.Write(content)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return w.explain(p, err)
}

// maxIgnoreFile bounds a .gitignore: a workspace's is anyone's.
const maxIgnoreFile = 1 << 20

// readRegularFS reads p of fsys when it is a regular file (a symlink to
// one is followed) of at most max bytes: a .gitignore that is a FIFO would
// hang every search, one of a gigabyte fill the memory.
func readRegularFS(fsys fs.FS, p string, max int64) ([]byte, error) {
	st, err := fs.Stat(fsys, p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errNotRegular(p, st.Mode())
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, max)
	}
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}
