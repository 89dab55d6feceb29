package eval

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEvalSchemaRefLoadsNothing: an answer_json_schema whose $ref leads
// out of the suite (a FIFO here, which would block for ever) is a bad
// schema at once.
func TestEvalSchemaRefLoadsNothing(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	suite := "cases:\n  - name: x\n    task: t\n    assert:\n      - answer_json_schema: {$ref: \"file://" + fifo + "\"}\n"
	done := make(chan error, 1)
	go func() {
		_, err := parseSuite("t.yaml", []byte(suite))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "agentty loads no schema from outside the document") {
			t.Errorf("parse: %v, want the $ref refused", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the suite's parse is still waiting: the $ref was followed")
	}
}
