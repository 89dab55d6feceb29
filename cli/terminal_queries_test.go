package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the side a terminal emulator reads
// (master) and the side a program writes (tty).
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return master, tty
}

// TestNoTerminalQueries runs commands with stdin and stdout on a
// pseudo-terminal that never answers, as script(1), expect or a CI log
// do, and finds no escape sequence in what they wrote: Bubble Tea v1's
// init asked the terminal for its background (ESC ]11;? and ESC [6n) in
// every command, and waited 5 s for the answer (issue 50, 10).
func TestNoTerminalQueries(t *testing.T) {
	home := t.TempDir()
	for _, args := range [][]string{
		{"--version"},
		{"run", "--model", "offline", "what is 17*23?"},
		{"sessions", "ls"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			master, tty := openPTY(t)
			defer master.Close()
			cmd := exec.Command(binary, args...)
			// Not CI: termenv never asks when CI is set, and .ci/run sets it.
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TERM=xterm-256color",
				"AGENTTY_HOME=" + home, "AGENTTY_CONFIG=" + filepath.Join(home, "no-config.json")}
			cmd.Stdin, cmd.Stdout = tty, tty
			var errb bytes.Buffer
			cmd.Stderr = &errb
			// Its own session with the terminal as its controlling one, in
			// the foreground: as a shell starts a command.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			var out bytes.Buffer
			copied := make(chan struct{})
			go func() { io.Copy(&out, master); close(copied) }() // ends with EIO when the child is gone
			if err := cmd.Wait(); err != nil {
				t.Fatalf("agentty %v: %v\n%s", args, err, errb.String())
			}
			<-copied
			if out.Len() == 0 {
				t.Fatal("nothing was written")
			}
			if i := bytes.IndexByte(out.Bytes(), 0x1b); i >= 0 {
				t.Errorf("stdout has an escape sequence at byte %d: %q", i, out.String())
			}
		})
	}
}
