//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// groupOf starts cmd in a process group of its own, which its cancel
// kills whole: what the hook started dies with it.
func groupOf(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
