package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// "@" attaches a workspace file's text or a folder's listing, bounded, and
// refuses what read_file refuses: a path or a link that leads out, a FIFO
// (at once). Files lists the workspace's files as .gitignore leaves them.
func TestAttachAndFiles(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("OUTSIDE"), 0o600)
	os.MkdirAll(filepath.Join(dir, "docs"), 0o700)
	os.WriteFile(filepath.Join(dir, "docs", "a.md"), []byte("# A\nhello\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "big.txt"), []byte(strings.Repeat("x", MaxAttach*2)), 0o600)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("ignored/\n"), 0o600)
	os.MkdirAll(filepath.Join(dir, "ignored"), 0o700)
	os.WriteFile(filepath.Join(dir, "ignored", "x.txt"), []byte("x"), 0o600)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link.txt"))
	syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600)
	w, err := OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	if out, err := w.Attach(ctx, "docs/a.md"); err != nil || !strings.Contains(out, "hello") {
		t.Errorf("a file: %q, %v", out, err)
	}
	if out, err := w.Attach(ctx, "docs"); err != nil || !strings.Contains(out, "a.md") {
		t.Errorf("a folder: %q, %v", out, err)
	}
	if out, err := w.Attach(ctx, "big.txt"); err != nil || len(out) > MaxAttach+100 || !strings.Contains(out, "[cut at 64 KiB]") {
		t.Errorf("a large file: %d bytes, %v", len(out), err)
	}
	for _, p := range []string{"../" + filepath.Base(outside) + "/secret.txt", filepath.Join(outside, "secret.txt"), "link.txt", "pipe"} {
		if out, err := w.Attach(ctx, p); err == nil || strings.Contains(out, "OUTSIDE") {
			t.Errorf("%s was attached: %q", p, out)
		}
	}
	files := strings.Join(w.Files(ctx, 100), " ")
	if !strings.Contains(files, "docs/a.md") || strings.Contains(files, "ignored/") || strings.Contains(files, "pipe") {
		t.Errorf("files: %s", files)
	}
}
