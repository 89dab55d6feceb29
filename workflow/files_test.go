package workflow

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWorkflowFilesStayInTheWorkspace: a workspace's workflow file that is
// a symlink out of it, or a FIFO, is an error (the FIFO at once); the
// next file of the folder still loads.
func TestWorkflowFilesStayInTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".agentty", "workflows")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.yaml")
	os.WriteFile(outside, []byte("name: secret\nsteps:\n  - id: ask\n    task: OUTSIDE\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "good.yaml"), []byte("name: good\nsteps:\n  - id: ask\n    task: what is 6*7?\n"), 0o600)
	if err := os.Symlink(outside, filepath.Join(dir, "out.yaml")); err != nil {
		t.Skip(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o600); err != nil {
		t.Skip(err)
	}
	cfg := filepath.Join(t.TempDir(), "config.json") // no user workflows
	getenv := func(k string) string {
		if k == "AGENTTY_CONFIG" {
			return cfg
		}
		return ""
	}
	var files []File
	var errs []error
	done := make(chan struct{})
	go func() {
		defer close(done)
		files, errs = LoadFiles(ws, getenv)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("LoadFiles is still waiting (on the FIFO?)")
	}
	if len(files) != 1 || files[0].W.Name != "good" {
		t.Errorf("workflows %+v, want good alone", files)
	}
	var all []string
	for _, e := range errs {
		all = append(all, e.Error())
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{"out.yaml: leads to " + outside + ", outside " + realDir(ws) + "; refusing to read it", "pipe.yaml is a named pipe (FIFO), not a regular file"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors:\n%s\nwant %q", got, want)
		}
	}
}
