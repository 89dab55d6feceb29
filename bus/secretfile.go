package bus

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// readSecret reads a file that holds a secret of the person's (the
// steering key, serve's users): a regular file, not a symlink, owned by
// the user who runs agentty and readable by no one else, or an error that
// says which and how to mend it. It never waits on a FIFO and reads at
// most max bytes. A missing file is an error wrapping fs.ErrNotExist.
func readSecret(what, path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s %s is a symlink: keys are regular files; put the file itself there (cp --remove-destination \"$(readlink -f %s)\" %s; chmod 600 %s)", what, path, path, path, path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s: not a regular file", what, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("%s %s is owned by user %d, not you (%d): a key of yours is yours alone; remove it to make a new one, or chown it", what, path, st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s %s can be read or written by others (%#o): chmod 600 %s", what, path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s %s: larger than %d bytes; not one agentty made", what, path, max)
	}
	return b, nil
}
