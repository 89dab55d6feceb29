package console

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/sessions"
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

// TestSayWhereToGoOn: leaving the console names the session it showed and
// how to come back to it, when it has a run; a session never used is not
// named (nothing was saved).
func TestSayWhereToGoOn(t *testing.T) {
	store, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j, err := store.Create()
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Config{Model: enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
		return engine.Decision{Text: "hi"}, nil
	})})
	if res := e.Run(context.Background(), engine.NewSession(j.ID), "hello", j); res.StopReason != engine.StopAnswered {
		t.Fatalf("run: %+v", res)
	}
	j.Close()
	var out strings.Builder
	if code := consoleEnded(nil, store, &out, &readOnlyBackend{id: j.ID}); code != 0 || !strings.Contains(out.String(), "agentty --resume "+j.ID) {
		t.Errorf("after a used session: %d %q", code, out.String())
	}
	out.Reset()
	if code := consoleEnded(nil, store, &out, &readOnlyBackend{id: sessions.NewID()}); code != 0 || out.Len() != 0 {
		t.Errorf("after a session never used: %d %q", code, out.String())
	}
}
