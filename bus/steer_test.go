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

// Keys are the person's alone: a steering key or users file that is a
// symlink, that others may read, or that another user owns is refused
// with the fix, and once mended (the next good read) it works.
func TestSecretFilesAreThePersonsAlone(t *testing.T) {
	dir := t.TempDir()
	made, err := bus.LoadOrMakeSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, bus.KeyFile)

	linked := t.TempDir()
	if err := os.Symlink(key, filepath.Join(linked, bus.KeyFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.LoadSigner(linked); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Errorf("a symlinked key: %v", err)
	}

	os.Chmod(key, 0o644)
	if _, err := bus.LoadOrMakeSigner(dir); err == nil || !strings.Contains(err.Error(), "chmod 600 "+key) {
		t.Errorf("a key others may read: %v", err)
	}
	os.Chmod(key, 0o600)
	if s, err := bus.LoadSigner(dir); err != nil || s.Public() != made.Public() {
		t.Errorf("the key mended: %v", err)
	}

	if os.Geteuid() == 0 {
		os.Chown(key, 4242, 4242)
		if _, err := bus.LoadSigner(dir); err == nil || !strings.Contains(err.Error(), "owned by user 4242") {
			t.Errorf("a key another user owns: %v", err)
		}
		os.Chown(key, 0, 0)
	}

	users := t.TempDir()
	if _, _, err := bus.LoadOrMakeUsers(users); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(users, bus.UsersFile), 0o640)
	if _, _, err := bus.LoadOrMakeUsers(users); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a users file others may read: %v", err)
	}
	os.Chmod(filepath.Join(users, bus.UsersFile), 0o600)
	if _, made, err := bus.LoadOrMakeUsers(users); err != nil || made {
		t.Errorf("the users file mended: made %v, %v", made, err)
	}
}
