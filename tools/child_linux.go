//go:build linux

package tools

import "syscall"

// childAttr is how a tool's child process (a shell command's guard, a
// stdio MCP server) is started: in a process group of its own, which a
// timeout or a cancel kills whole, and killed by the kernel when agentty
// dies (a crash, kill -9). The signal reaches that process only, not what
// it starts: a shell command's own children are the lifeline's
// (lifeline.go). (The signal comes when the thread that started the child
// exits; Go's threads live as long as the process.)
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
