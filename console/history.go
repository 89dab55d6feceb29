package console

// What the console's input keeps across restarts, in the data folder: the
// messages sent in each workspace (history/<hash of its path>.jsonl, one
// JSON string a line), walked with ↑/↓, and the draft left in each
// session's input (drafts/<session>), back when the session is opened
// again. Files are 0600 in 0700 folders, and hold no secret agentty knows.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentty/agentty/config"
)

// maxHistory is how many of a workspace's messages ↑ walks back through;
// maxHistoryFile bounds the file read (it is trimmed when it passes it).
const (
	maxHistory     = 500
	maxHistoryFile = 1 << 20
)

// inputHistory is a workspace's sent messages. Add is safe to call from
// any goroutine (the console calls it from a command).
type inputHistory struct {
	mu     sync.Mutex
	path   string
	redact func(string) string
}

// openHistory returns the history of workspace in the data folder home,
// and the messages it holds, oldest first. A history that cannot be read
// is empty: the console starts all the same.
func openHistory(home, workspace string, redact func(string) string) (*inputHistory, []string) {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		abs = workspace
	}
	sum := sha256.Sum256([]byte(abs))
	h := &inputHistory{path: filepath.Join(home, "history", hex.EncodeToString(sum[:8])+".jsonl"), redact: redact}
	b, _, err := config.ReadAtMost(h.path, maxHistoryFile)
	if err != nil {
		return h, nil
	}
	var lines []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		var s string
		if json.Unmarshal(l, &s) == nil && s != "" {
			lines = append(lines, s)
		}
	}
	return h, lines[max(len(lines)-maxHistory, 0):]
}

// Add keeps a sent message, without the secrets agentty knows; the file
// is trimmed to the last maxHistory messages once it passes its size.
func (h *inputHistory) Add(task string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	line, err := json.Marshal(h.redact(task))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	st, serr := f.Stat()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && serr == nil && st.Size() > maxHistoryFile {
		err = h.trim()
	}
	return err
}

// trim keeps the last maxHistory messages of the file.
func (h *inputHistory) trim() error {
	b, err := os.ReadFile(h.path)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	lines = lines[max(len(lines)-maxHistory, 0):]
	return config.WriteFileAtomic(h.path, []byte(strings.Join(lines, "\n")+"\n"))
}

// draftPath is where the draft of session id is kept in home.
func draftPath(home, id string) string { return filepath.Join(home, "drafts", id) }

// readDraft returns the draft left in session id's input ("" for none).
func readDraft(home, id string) string {
	if id == "" || id != filepath.Base(id) {
		return ""
	}
	b, _, err := config.ReadAtMost(draftPath(home, id), maxHistoryFile)
	if err != nil {
		return ""
	}
	return string(b)
}

// saveDraft keeps draft as session id's, without the secrets agentty knows,
// or removes the one kept when draft is empty.
func saveDraft(home, id, draft string, redact func(string) string) error {
	if id == "" || id != filepath.Base(id) {
		return nil
	}
	p := draftPath(home, id)
	if strings.TrimSpace(draft) == "" {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return config.WriteFileAtomic(p, []byte(redact(draft)))
}
