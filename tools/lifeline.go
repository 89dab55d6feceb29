package tools

import (
	"os"
	"os/exec"
)

// A shell command's processes die with agentty. The kernel's parent-death
// signal (childAttr) reaches only agentty's own child; a command's own
// children (a subshell, make's jobs, a nested sh) would go on acting on
// the workspace after a kill -9 of agentty. So the command runs under a
// guard: a sh that holds the read end of a pipe whose write end only
// agentty holds (the lifeline) and starts a watcher beside the command.
// When agentty dies, however it dies, the pipe reads end-of-file and the
// watcher kills the whole process group. A command that ends normally
// ends the watcher with it.

// shellGuard is the guard: $1 is the command, fd 3 the lifeline. The
// watcher is the background job; the command runs in the foreground, so
// its signals are as they would be (a background job of a sh ignores
// SIGINT and SIGQUIT, and so would everything it starts).
const shellGuard = `(read _ <&3; kill -KILL 0) &
w=$!
exec 3<&-
sh -c "$1"; s=$?
kill "$w" 2>/dev/null
exit "$s"`

// guardedShell returns the command that runs command under shellGuard,
// and the lifeline's write end, which the caller keeps open until the
// command has ended (closing it early kills the command) and then closes.
func guardedShell(command string) (*exec.Cmd, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command("sh", "-c", shellGuard, "agentty-shell", command)
	cmd.ExtraFiles = []*os.File{r} // fd 3; w is close-on-exec: no child holds it
	return cmd, w, nil
}
