package hooks_test

import "syscall"

// alive reports whether the process pid runs (and is not a zombie left
// for its parent).
func alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}
