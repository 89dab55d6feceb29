//go:build unix && !linux

package tools

import "syscall"

// childAttr is how a tool's child process is started: in a process group
// of its own, which a timeout or a cancel kills whole. (No parent-death
// signal outside Linux.)
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
