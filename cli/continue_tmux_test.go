package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContinueFromASubfolder: a session worked on at a repository's root
// is the one --continue opens in a subfolder of it, in a console started
// there as a person would (cd, then agentty --continue); in a folder with
// no session up to its repository's root, the chat says it is a new one
// (issue 50, 6).
func TestContinueFromASubfolder(t *testing.T) {
	home := t.TempDir()
	repo := t.TempDir()
	sub := filepath.Join(repo, "cmd", "tool")
	os.MkdirAll(sub, 0o755)
	os.Mkdir(filepath.Join(repo, ".git"), 0o755)
	env := map[string]string{"AGENTTY_HOME": home, "AGENTTY_CONFIG": filepath.Join(home, "no-config.json")}
	if code, _, errs := runCLI(t, context.Background(), env, "run", "--workspace", repo, "--model", "offline", "what is 12*12?"); code != 0 {
		t.Fatalf("run at the root: %s", errs)
	}
	for _, tc := range []struct{ dir, want string }{
		{sub, "12*12 = 144"},
		{t.TempDir(), "no session of this folder"},
	} {
		tm := newTmux(t)
		cmd := "AGENTTY_HOME=" + home + " AGENTTY_CONFIG=" + env["AGENTTY_CONFIG"] + " TERM=xterm-256color " + binary + " --continue"
		tm.run("new-session", "-d", "-s", tm.name, "-x", "120", "-y", "35", "-c", tc.dir, cmd)
		tm.wait("the console with "+tc.want, func(s string) bool {
			return strings.Contains(s, "Input") && strings.Contains(chatPane(s), tc.want)
		})
		tm.keys("C-d")
		tm.waitGone()
	}
}
