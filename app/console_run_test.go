package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/ui"
)

func TestWriteCrash(t *testing.T) {
	home := t.TempDir()
	pe := &ui.PanicError{Value: errors.New("index out of range [0]"), Stack: []byte("goroutine 1 [running]:\nui.(*chat).scroll")}
	path, err := writeCrash(home, pe, &readOnlyBackend{id: "0abc"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != filepath.Join(home, "crashes") {
		t.Errorf("crash file %s is not in %s/crashes", path, home)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{"session: 0abc", "panic: index out of range [0]", "ui.(*chat).scroll"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the crash file lacks %q:\n%s", want, b)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("crash file mode %v, want 0600", fi.Mode().Perm())
	}
}
