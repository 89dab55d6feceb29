package console

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/engine/enginetest"
	"github.com/agentty/agentty/sessions"
)

// TestContinueFindsTheProjectsSession: --continue in a subfolder of a git
// repository opens the newest session of the nearest folder up to the
// repository's root; outside a repository only the folder's own count.
func TestContinueFindsTheProjectsSession(t *testing.T) {
	data := t.TempDir()
	repo := t.TempDir()
	sub := filepath.Join(repo, "internal", "pkg")
	os.MkdirAll(sub, 0o755)
	os.Mkdir(filepath.Join(repo, ".git"), 0o755)
	store, err := sessions.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Config{Model: enginetest.ModelFunc(func(context.Context, *engine.Request) (engine.Decision, error) {
		return engine.Decision{Text: "hi"}, nil
	})})
	session := func(ws string) string {
		j, err := store.Create()
		if err != nil {
			t.Fatal(err)
		}
		s := engine.NewSession(j.ID)
		s.UseSettings(engine.Settings{Workspace: ws, Origin: "console"})
		if res := e.Run(context.Background(), s, "hello", j); res.StopReason != engine.StopAnswered {
			t.Fatalf("run: %+v", res)
		}
		j.Close()
		return j.ID
	}
	atRoot := session(repo)
	getenv := func(string) string { return "" }
	for _, tc := range []struct{ ws, want string }{
		{sub, atRoot},
		{filepath.Join(repo, "internal"), atRoot},
		{repo, atRoot},
		{t.TempDir(), ""}, // outside: nothing of another folder
	} {
		if id, err := LatestHere(app.Options{DataDir: data, Workspace: tc.ws}, getenv); err != nil || id != tc.want {
			t.Errorf("--continue in %s: %q %v, want %q", tc.ws, id, err, tc.want)
		}
	}
	inSub := session(sub)
	if id, _ := LatestHere(app.Options{DataDir: data, Workspace: sub}, getenv); id != inSub {
		t.Errorf("--continue in a subfolder with a session of its own: %q, want %q", id, inSub)
	}
	elsewhere := session(t.TempDir()) // the newest, of another folder
	list, err := picker{store: store, con: &Console{Opts: app.Options{Workspace: sub}}}.List()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, l := range list {
		order = append(order, l.ID)
	}
	if want := []string{inSub, atRoot, elsewhere}; !slices.Equal(order, want) {
		t.Errorf("the picker in the subfolder lists %v, want its own, then the root's, then another folder's %v", order, want)
	}
}
