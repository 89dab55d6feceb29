package search

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir holds the index folder's lock file exclusively until unlock is
// called: one process at a time opens (perhaps creating or rebuilding),
// updates or rebuilds the index. Without it, two processes making a new
// index at once each took the other's half-made tables for damage and
// removed the file, and two updating at once indexed a session's new
// events twice. Searches take no lock: SQLite keeps readers consistent.
// waiting, when not nil, is called when the lock is held elsewhere, before
// the wait for it (tests synchronise on it).
func lockDir(dir string, waiting func()) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, "index.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("search: lock: %w", err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == syscall.EWOULDBLOCK {
		if waiting != nil {
			waiting()
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("search: lock %s: %w", f.Name(), err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
