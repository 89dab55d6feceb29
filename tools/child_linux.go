//go:build linux

package tools

import "syscall"

// childAttr is how a tool's child process (a shell command, a stdio MCP
// server) is started: in a process group of its own, which a timeout or a
// cancel kills whole, and killed by the kernel when agentty dies (a crash,
// kill -9), so that nothing it started goes on acting on the workspace
// after it. (The signal comes when the thread that started the child
// exits; Go's threads live as long as the process.)
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
