package bus_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/bus"
)

// The steering key file: made once, 0600, the same key read back; a FIFO
// in its place is refused at once (not waited on); a file that is not a
// key agentty made is an error naming it; and the next good folder works.
func TestSteeringKeyFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := bus.LoadSigner(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no key yet: %v", err)
	}
	made, err := bus.LoadOrMakeSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, bus.KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v %v", fi.Mode(), err)
	}
	again, err := bus.LoadOrMakeSigner(dir)
	if err != nil || again.Public() != made.Public() {
		t.Fatalf("read back: %v, same key %v", err, again != nil && again.Public() == made.Public())
	}

	fifo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifo, bus.KeyFile), 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := bus.LoadOrMakeSigner(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waited on a FIFO")
	}

	junk := t.TempDir()
	os.WriteFile(filepath.Join(junk, bus.KeyFile), []byte(strings.Repeat("A", 1<<20)), 0o600)
	if _, err := bus.LoadOrMakeSigner(junk); err == nil || !strings.Contains(err.Error(), filepath.Join(junk, bus.KeyFile)) {
		t.Errorf("junk: %v", err)
	}
	if _, err := bus.LoadOrMakeSigner(t.TempDir()); err != nil {
		t.Errorf("the next good folder: %v", err)
	}
}
