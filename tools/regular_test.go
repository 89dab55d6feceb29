package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
)

// TestFileToolsRefuseFIFOs: read_file, write_file and edit_file refuse a
// named pipe at once (a read used to block for the whole tool timeout,
// stuck in open; a write said it succeeded), and the next call on a
// regular file works.
func TestFileToolsRefuseFIFOs(t *testing.T) {
	w, base := tree(t)
	dir := filepath.Join(base, "ws")
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, tc := range []struct {
		name, args string
		tool       engine.Tool
	}{
		{"read_file", `{"path":"pipe"}`, w.ReadFile()},
		{"write_file", `{"path":"pipe","content":"x"}`, w.WriteFile()},
		{"edit_file", `{"path":"pipe","old":"a","new":"b"}`, w.EditFile()},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := tc.tool.Func(context.Background(), &engine.Call{Args: json.RawMessage(tc.args), Memory: &engine.MemoryView{}})
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "named pipe") {
				t.Errorf("%s on a FIFO: %v; want a refusal naming the pipe", tc.name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s on a FIFO hangs", tc.name)
		}
	}
	if out, err := call(t, w.ReadFile(), `{"path":"README.md","end_line":1}`); err != nil || !strings.Contains(out, "# demo") {
		t.Errorf("the next read: %q, %v", out, err)
	}
	if out, err := call(t, w.WriteFile(), `{"path":"new.txt","content":"hello"}`); err != nil || !strings.Contains(out, "created") {
		t.Errorf("the next write: %q, %v", out, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new.txt")); string(b) != "hello" {
		t.Errorf("new.txt holds %q", b)
	}
}

// TestSearchSkipsAFIFOGitignore: a .gitignore that is a named pipe is
// skipped, not waited on, and the search goes on.
func TestSearchSkipsAFIFOGitignore(t *testing.T) {
	w, base := tree(t)
	dir := filepath.Join(base, "ws", "src") // its .gitignore hid deep/
	os.Remove(filepath.Join(dir, ".gitignore"))
	if err := syscall.Mkfifo(filepath.Join(dir, ".gitignore"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan string, 1)
	go func() {
		out, _ := w.SearchFiles().Func(context.Background(), &engine.Call{Args: json.RawMessage(`{"pattern":"needle"}`), Memory: &engine.MemoryView{}})
		done <- out
	}()
	select {
	case out := <-done:
		if !strings.Contains(out, "util.go") {
			t.Errorf("the search after the FIFO: %q", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a FIFO .gitignore hangs the search")
	}
}

// TestWriteRefusesAFIFOWithAReader: with a reader at the other end, a
// FIFO opens for writing without waiting; what refuses it then is the
// check of the opened file, and the reader gets nothing.
func TestWriteRefusesAFIFOWithAReader(t *testing.T) {
	w, base := tree(t)
	fifo := filepath.Join(base, "ws", "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	done := make(chan error, 1)
	go func() {
		_, err := w.WriteFile().Func(context.Background(), &engine.Call{Args: json.RawMessage(`{"path":"pipe","content":"SENT"}`), Memory: &engine.MemoryView{}})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || err.Error() != "refused: pipe is a named pipe (FIFO), not a regular file" {
			t.Errorf("write_file on a FIFO with a reader: %v; want it refused as a named pipe", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("write_file on a FIFO with a reader hangs")
	}
	buf := make([]byte, 16)
	if n, _ := reader.Read(buf); n > 0 {
		t.Errorf("the FIFO's reader got %q", buf[:n])
	}
}
