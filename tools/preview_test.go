package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
)

// A preview shows what an approval would let happen: the diff of a file
// written or edited, a new file whole, a command and its folder; and says
// when an edit would fail or a path is refused.
func TestPreview(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Notes\none\ntwo\nthree\n"), 0o644)
	w, err := OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, tt := range []struct {
		name, args string
		want       []string
	}{
		{"write_file", `{"path":"notes.md","content":"# Notes\none\n2\nthree\n"}`, []string{"--- a/notes.md", "+++ b/notes.md", "-two", "+2", " one"}},
		{"write_file", `{"path":"new/x.go","content":"package x\n"}`, []string{"--- /dev/null", "+++ b/new/x.go", "+package x"}},
		{"write_file", `{"path":"../outside","content":"x"}`, []string{"(no preview:", "outside"}},
		{"edit_file", `{"path":"notes.md","old":"three","new":"3"}`, []string{"-three", "+3"}},
		{"edit_file", `{"path":"notes.md","old":"nine","new":"9"}`, []string{"not in notes.md; the call will fail"}},
		{"edit_file", `{"path":"notes.md","old":"o","new":"0"}`, []string{"occurs 3 times"}},
		{"run_shell", `{"command":"rm -rf build && make"}`, []string{"$ rm -rf build && make", "(in " + dir}},
	} {
		got, ok := w.Preview(&engine.ToolCall{Name: tt.name, Args: []byte(tt.args)})
		if !ok {
			t.Errorf("%s %s: no preview", tt.name, tt.args)
		}
		for _, s := range tt.want {
			if !strings.Contains(got, s) {
				t.Errorf("%s %s: want %q in\n%s", tt.name, tt.args, s, got)
			}
		}
	}
	if _, ok := w.Preview(&engine.ToolCall{Name: "read_file", Args: []byte(`{"path":"notes.md"}`)}); ok {
		t.Error("read_file has a preview")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.md")); string(b) != "# Notes\none\ntwo\nthree\n" {
		t.Errorf("a preview changed the file: %q", b)
	}
}
