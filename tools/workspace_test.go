package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
)

// tree makes a workspace with files, a secret outside it, and symlinks
// that point out.
func tree(t *testing.T) (*Workspace, string) {
	t.Helper()
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{ws, outside, filepath.Join(ws, "src", "deep"), filepath.Join(ws, "build"), filepath.Join(ws, ".git")} {
		os.MkdirAll(d, 0o755)
	}
	files := map[string]string{
		"ws/README.md":            "# demo\nline two\nline three\n",
		"ws/src/main.go":          "package main\n\nfunc main() { println(\"needle\") }\n",
		"ws/src/deep/util.go":     "package deep\n// needle in a deep file\n",
		"ws/build/out.txt":        "needle in a build output\n",
		"ws/debug.log":            "needle in a log\n",
		"ws/.git/config":          "needle in git\n",
		"ws/.gitignore":           "build/\n*.log\n!keep.log\n",
		"ws/keep.log":             "needle kept\n",
		"ws/src/.gitignore":       "deep/\n!deep/util.go\n",
		"outside/secret.txt":      "top secret\n",
		"outside/dir/another.txt": "also secret\n",
	}
	for p, c := range files {
		full := filepath.Join(base, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(ws, "image.png"), []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "link-out.txt"))
	os.Symlink(filepath.Join(outside, "dir"), filepath.Join(ws, "linkdir"))
	os.Symlink("README.md", filepath.Join(ws, "link-in.md"))
	w, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, base
}

func call(t *testing.T, tool engine.Tool, args string) (string, error) {
	t.Helper()
	if err := mustRegistry(t, tool).Validate(tool.Name, json.RawMessage(args)); err != nil {
		t.Fatalf("%s(%s) does not validate: %v", tool.Name, args, err)
	}
	return tool.Func(context.Background(), &engine.Call{Args: json.RawMessage(args), Memory: &engine.MemoryView{}})
}

func mustRegistry(t *testing.T, tools ...engine.Tool) *engine.Registry {
	r, err := engine.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWorkspaceRefusals(t *testing.T) {
	w, base := tree(t)
	tests := []struct {
		name string
		tool engine.Tool
		args string
		want string
	}{
		{"dot-dot", w.ReadFile(), `{"path":"../outside/secret.txt"}`, "outside the workspace: it climbs out of it with \"..\""},
		{"deep dot-dot", w.ReadFile(), `{"path":"src/../../outside/secret.txt"}`, "outside the workspace"},
		{"etc passwd", w.ReadFile(), `{"path":"../../etc/passwd"}`, "outside the workspace"},
		{"absolute elsewhere", w.ReadFile(), `{"path":"/etc/passwd"}`, "/etc/passwd is outside the workspace"},
		{"absolute outside sibling", w.ReadFile(), `{"path":"` + filepath.Join(base, "outside", "secret.txt") + `"}`, "outside the workspace"},
		{"symlink out", w.ReadFile(), `{"path":"link-out.txt"}`, "a symlink on the way leads out"},
		{"symlinked parent", w.ReadFile(), `{"path":"linkdir/another.txt"}`, "a symlink on the way leads out"},
		{"list symlinked dir", w.ListDir(), `{"path":"linkdir"}`, "a symlink on the way leads out"},
		{"list dot-dot", w.ListDir(), `{"path":".."}`, "outside the workspace"},
		{"search outside", w.SearchFiles(), `{"pattern":"secret","path":"../outside"}`, "outside the workspace"},
		{"write dot-dot", w.WriteFile(), `{"path":"../outside/new.txt","content":"x"}`, "outside the workspace"},
		{"write through symlinked dir", w.WriteFile(), `{"path":"linkdir/new.txt","content":"x"}`, "leads out"},
		{"write over symlink out", w.WriteFile(), `{"path":"link-out.txt","content":"pwned"}`, "leads out"},
		{"edit outside", w.EditFile(), `{"path":"/etc/hostname","old":"a","new":"b"}`, "outside the workspace"},
		{"binary", w.ReadFile(), `{"path":"image.png"}`, "binary file"},
		{"missing", w.ReadFile(), `{"path":"nope.txt"}`, "nope.txt does not exist"},
		{"folder", w.ReadFile(), `{"path":"src"}`, "is a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := call(t, tt.tool, tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s(%s) = %q, %v; want an error containing %q", tt.tool.Name, tt.args, out, err, tt.want)
			}
		})
	}
	// Nothing outside was touched.
	for _, p := range []string{"outside/new.txt", "outside/dir/new.txt"} {
		if _, err := os.Stat(filepath.Join(base, p)); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(base, "outside", "secret.txt")); string(b) != "top secret\n" {
		t.Errorf("the secret was changed: %q", b)
	}
}

func TestReadFile(t *testing.T) {
	w, _ := tree(t)
	tests := []struct{ args, want string }{
		{`{"path":"README.md"}`, "README.md (lines 1-3 of 3)\n     1\t# demo\n     2\tline two\n     3\tline three"},
		{`{"path":"README.md","start_line":2,"end_line":2}`, "README.md (lines 2-2 of 3)\n     2\tline two"},
		{`{"path":"./src/../README.md","start_line":3}`, "README.md (lines 3-3 of 3)\n     3\tline three"},
		{`{"path":"link-in.md","end_line":1}`, "link-in.md (lines 1-1 of 3)\n     1\t# demo"},
	}
	for _, tt := range tests {
		got, err := call(t, w.ReadFile(), tt.args)
		if err != nil || got != tt.want {
			t.Errorf("read_file %s = %q, %v; want %q", tt.args, got, err, tt.want)
		}
	}
	if _, err := call(t, w.ReadFile(), `{"path":"README.md","start_line":9}`); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Errorf("start past the end: %v", err)
	}
}

func TestListAndSearch(t *testing.T) {
	w, _ := tree(t)
	out, err := call(t, w.ListDir(), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"src/", "README.md (27 bytes)", "keep.log", "link-out.txt -> ", "linkdir -> "} {
		if !strings.Contains(out, want) {
			t.Errorf("list_dir lacks %q:\n%s", want, out)
		}
	}
	out, err = call(t, w.SearchFiles(), `{"pattern":"needle"}`)
	if err != nil {
		t.Fatal(err)
	}
	// As in git, !deep/util.go cannot bring back a file whose folder is
	// ignored.
	want := "keep.log:1: needle kept\nsrc/main.go:3: func main() { println(\"needle\") }"
	if out != want {
		t.Errorf("search (gitignore respected) =\n%s\nwant\n%s", out, want)
	}
	out, _ = call(t, w.SearchFiles(), `{"pattern":"needle","glob":"*.md"}`)
	if !strings.HasPrefix(out, "no matches") {
		t.Errorf("glob *.md: %q", out)
	}
	if _, err := call(t, w.SearchFiles(), `{"pattern":"("}`); err == nil || !strings.Contains(err.Error(), "bad pattern") {
		t.Errorf("bad regexp: %v", err)
	}
}

func TestWriteAndEdit(t *testing.T) {
	w, _ := tree(t)
	if w.WriteFile().Policy != engine.PolicyAsk || w.EditFile().Policy != engine.PolicyAsk {
		t.Errorf("write_file and edit_file must ask")
	}
	out, err := call(t, w.WriteFile(), `{"path":"notes/today.md","content":"one\ntwo two\n"}`)
	if err != nil || out != "created notes/today.md (12 bytes)" {
		t.Fatalf("write: %q %v", out, err)
	}
	if _, err := call(t, w.EditFile(), `{"path":"notes/today.md","old":"two","new":"2"}`); err == nil || !strings.Contains(err.Error(), "occurs 2 times") {
		t.Errorf("ambiguous edit: %v", err)
	}
	if _, err := call(t, w.EditFile(), `{"path":"notes/today.md","old":"three","new":"3"}`); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing text: %v", err)
	}
	out, err = call(t, w.EditFile(), `{"path":"notes/today.md","old":"two","new":"2","replace_all":true}`)
	b, _ := os.ReadFile(filepath.Join(w.Dir(), "notes", "today.md"))
	if err != nil || string(b) != "one\n2 2\n" || !strings.Contains(out, "2 replacement(s)") {
		t.Errorf("edit: %q %v, file %q", out, err, b)
	}
}

// TestListDirRespectsGitignore: list_dir leaves out what .gitignore files
// (the top's and the folders' on the way) ignore, and says how many; a
// folder asked for by name is listed even when it is ignored.
func TestListDirRespectsGitignore(t *testing.T) {
	dir := t.TempDir()
	for p, text := range map[string]string{
		".gitignore":     "secret.env\nbuild/\n*.log\n",
		"secret.env":     "KEY=x",
		"main.go":        "package main",
		"app.log":        "log",
		"build/out.bin":  "bin",
		"sub/.gitignore": "local.txt\n",
		"sub/local.txt":  "l",
		"sub/kept.txt":   "k",
		"sub/debug.log":  "d",
	} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644)
	}
	w, err := OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args       string
		want, hide []string
	}{
		{`{}`, []string{"main.go", "sub/", ".gitignore", "[3 more that .gitignore ignores, not shown]"}, []string{"secret.env", "build/", "app.log"}},
		{`{"path":"sub"}`, []string{"kept.txt", "[2 more that .gitignore ignores"}, []string{"local.txt", "debug.log"}},
		{`{"path":"build"}`, []string{"out.bin"}, nil},
	} {
		out, err := call(t, w.ListDir(), tc.args)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tc.want {
			if !strings.Contains(out, s) {
				t.Errorf("list_dir %s lacks %q:\n%s", tc.args, s, out)
			}
		}
		for _, s := range tc.hide {
			if strings.Contains(out, s) {
				t.Errorf("list_dir %s shows %q, which .gitignore ignores:\n%s", tc.args, s, out)
			}
		}
	}
}
