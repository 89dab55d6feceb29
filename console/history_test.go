package console

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The workspace's history keeps what was sent, without a secret agentty
// knows, 0600, its last maxHistory messages; each workspace has its own;
// a draft is kept per session and removed once empty.
func TestInputHistoryAndDraft(t *testing.T) {
	home := t.TempDir()
	redact := func(s string) string { return strings.ReplaceAll(s, "sk-secret-1234", "[redacted KEY]") }
	h, lines := openHistory(home, "/work/a", redact)
	if len(lines) != 0 {
		t.Fatalf("a new history: %q", lines)
	}
	for _, s := range []string{"first", "use sk-secret-1234 here", "multi\nline"} {
		if err := h.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	_, lines = openHistory(home, "/work/a", redact)
	if strings.Join(lines, "|") != "first|use [redacted KEY] here|multi\nline" {
		t.Errorf("read back %q", lines)
	}
	if st, err := os.Stat(h.path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the history file: %v %v", st, err)
	}
	if _, other := openHistory(home, "/work/b", redact); len(other) != 0 {
		t.Errorf("another workspace's history: %q", other)
	}
	big := strings.Repeat("x", 4<<10)
	for range 300 { // past maxHistoryFile: trimmed to the last maxHistory
		h.Add(big)
	}
	if _, lines = openHistory(home, "/work/a", redact); len(lines) > maxHistory || lines[len(lines)-1] != big {
		t.Errorf("after trimming: %d lines", len(lines))
	}
	if err := saveDraft(home, "s1", "half sk-secret-1234", redact); err != nil || readDraft(home, "s1") != "half [redacted KEY]" {
		t.Errorf("draft: %q, %v", readDraft(home, "s1"), err)
	}
	if err := saveDraft(home, "s1", "  ", redact); err != nil || readDraft(home, "s1") != "" {
		t.Errorf("an empty draft is not removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "drafts", "s1")); !os.IsNotExist(err) {
		t.Errorf("the draft file stays: %v", err)
	}
	// A history that is a FIFO is not waited on: the console starts
	// with none.
	fifoHome := t.TempDir()
	fh, _ := openHistory(fifoHome, "/work/c", redact)
	os.MkdirAll(filepath.Dir(fh.path), 0o700)
	if err := syscall.Mkfifo(fh.path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 1)
	go func() { _, l := openHistory(fifoHome, "/work/c", redact); done <- l }()
	select {
	case l := <-done:
		if len(l) != 0 {
			t.Errorf("a FIFO history: %q", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the history FIFO was waited on")
	}
}
