package eval

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// readRecording reads a recorded journal.
func readRecording(path string) ([]engine.Event, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no recording at %s (record it with --record)", path)
	}
	if err != nil {
		return nil, err
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
