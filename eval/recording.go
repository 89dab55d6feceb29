package eval

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// maxRecording bounds a recording: a journal of a case's runs.
const maxRecording = 256 << 20

// readRecording reads a recorded journal: a regular file of at most
// maxRecording bytes (a recording is a file of the workspace: a FIFO or a
// device is refused at once, never waited on or read without end).
func readRecording(path string) ([]engine.Event, error) {
	b, more, err := config.ReadAtMost(path, maxRecording)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no recording at %s (record it with --record)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("recording %s: %w", path, err)
	}
	if more {
		return nil, fmt.Errorf("recording %s: larger than %d MiB", path, maxRecording>>20)
	}
	l := sessions.Read(b, path, "recording")
	if l.Corrupt != nil {
		return nil, fmt.Errorf("recording: %v", l.Corrupt)
	}
	return l.Events, nil
}

// copyFile copies src to dst, replacing dst atomically.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".rec-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
