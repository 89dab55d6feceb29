package cli

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/importer"
	"github.com/agentty/agentty/sessions"
)

// importOptions are the flags and arguments of agentty sessions import.
type importOptions struct {
	*factory
	From  string
	Files []string
}

// newSessionsImportCmd is `agentty sessions import [FILE…] [--from claude|codex]`.
func newSessionsImportCmd(f *factory) *cobra.Command {
	opts := &importOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "import [FILE…] [--from claude|codex]",
		Short: "Make agentty sessions of Claude Code transcripts and Codex rollouts",
		Example: `  agentty sessions import --from claude      this folder's Claude Code sessions
  agentty sessions import --from codex       this folder's Codex sessions
  agentty sessions import ~/.claude/projects/-home-you-proj/0c1d….jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			return exit(importRun(cmd.Context(), opts))
		},
	}
	cmd.Flags().StringVar(&opts.From, "from", "", "find this folder's transcripts of claude (Claude Code) or codex")
	cmd.RegisterFlagCompletionFunc("from", cobra.FixedCompletions([]cobra.Completion{"claude", "codex"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// importRun imports the files given, or the workspace's transcripts of
// --from; each one that cannot be read is said, and the others go on.
func importRun(ctx context.Context, opts *importOptions) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(opts.Err, "agentty sessions import:", err)
		return code
	}
	if (opts.From == "") == (len(opts.Files) == 0) {
		return fail(app.ExitUsage, errors.New("give transcript files, or --from claude|codex (not both)"))
	}
	ws, err := filepath.Abs(cmp.Or(opts.App.Workspace, "."))
	if err != nil {
		return fail(app.ExitError, err)
	}
	files := opts.Files
	switch opts.From {
	case "", "claude", "codex":
	default:
		return fail(app.ExitUsage, fmt.Errorf("--from %q: say claude or codex", opts.From))
	}
	if opts.From != "" {
		if files, err = transcriptsOf(opts.From, ws, opts.Getenv); err != nil {
			return fail(app.ExitError, err)
		}
		if len(files) == 0 {
			fmt.Fprintf(opts.Out, "no %s sessions of %s found\n", opts.From, ws)
			return 0
		}
	}
	store, err := opts.App.Store(opts.Getenv)
	if err != nil {
		return fail(app.ExitError, err)
	}
	defer store.Close()
	code := 0
	for _, f := range files {
		if err := importFile(ctx, opts, store, f); err != nil {
			fmt.Fprintf(opts.Err, "agentty sessions import: %s: %v\n", f, err)
			code = app.ExitError
		}
	}
	return code
}

// importFile imports one transcript, unless it was imported already.
func importFile(ctx context.Context, opts *importOptions, store *sessions.Store, path string) error {
	f, err := config.OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	codex, err := codexFile(f)
	if err != nil {
		return err
	}
	var t *importer.Transcript
	if codex {
		t, err = importer.ReadCodex(f, path)
	} else {
		t, err = importer.ReadClaude(f, path)
	}
	if err != nil {
		return err
	}
	again, other := imported(store, t)
	if again != "" {
		fmt.Fprintf(opts.Out, "%s was imported already, as %s\n", path, again)
		return nil
	}
	if other != "" {
		fmt.Fprintf(opts.Err, "agentty sessions import: note: %s holds session %s, imported from another file as %s (a copy that went on, or a fork): this one is imported too\n", path, t.ID, other)
	}
	id, err := importer.Import(ctx, store, t)
	for _, n := range t.Notes {
		fmt.Fprintln(opts.Err, "agentty sessions import: note:", n)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "imported %s as %s (%d %s)\n", path, id, t.Runs, engine.Plural(t.Runs, "run"))
	return nil
}

// imported is the session a transcript was imported as before (again: ""
// none), or the session its id was imported as from another file (other):
// the title ends with the source and the transcript's id, and the origin
// names the file's fingerprint (an import from before fingerprints is
// taken for the same file).
func imported(store *sessions.Store, t *importer.Transcript) (again, other string) {
	if t.ID == "" {
		return "", ""
	}
	list, _ := store.List()
	mark := "[" + t.Source + " " + t.ID[:min(len(t.ID), 8)] + "]"
	for _, l := range list {
		if !strings.HasSuffix(l.Title, mark) || !strings.HasPrefix(l.Origin, "import:"+t.Source) {
			continue
		}
		if l.Origin == t.Origin() || l.Origin == "import:"+t.Source {
			return l.ID, ""
		}
		other = l.ID
	}
	return "", other
}

// codexFile reports whether a transcript is a Codex rollout: its first
// line has a payload, or is the older format's session line ({id,
// timestamp} and no type). It reads the first line and seeks f back.
func codexFile(f io.ReadSeeker) (bool, error) {
	line, _ := bufio.NewReaderSize(io.LimitReader(f, 1<<20), 64<<10).ReadString('\n')
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	var l struct {
		Payload   json.RawMessage `json:"payload"`
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		Timestamp string          `json:"timestamp"`
	}
	if json.Unmarshal([]byte(line), &l) != nil {
		return false, nil
	}
	return len(l.Payload) > 0 || l.Type == "" && l.ID != "" && l.Timestamp != "", nil
}

// transcriptsOf finds ws's transcripts of from: Claude Code's in
// ~/.claude/projects/<the folder, its / and . made ->, Codex's in
// $CODEX_HOME/sessions (else ~/.codex/sessions) whose session_meta names ws.
func transcriptsOf(from, ws string, getenv func(string) string) ([]string, error) {
	home := getenv("HOME")
	if from == "claude" {
		dir := filepath.Join(home, ".claude", "projects", nonWord.ReplaceAllString(ws, "-"))
		files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		return files, err
	}
	root := filepath.Join(cmp.Or(getenv("CODEX_HOME"), filepath.Join(home, ".codex")), "sessions")
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		if d.Type().IsRegular() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), ".jsonl") && rolloutOf(p) == ws {
			files = append(files, p)
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}

// nonWord is what Claude Code makes - in a folder's name under projects.
var nonWord = regexp.MustCompile(`[^A-Za-z0-9]`)

// rolloutOf is the folder a rollout's session_meta names ("" for none).
func rolloutOf(path string) string {
	f, err := config.OpenRegular(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReaderSize(io.LimitReader(f, 1<<20), 64<<10).ReadString('\n')
	var l struct {
		Type    string `json:"type"`
		Payload struct {
			Cwd string `json:"cwd"`
		} `json:"payload"`
	}
	if json.Unmarshal([]byte(line), &l) != nil || l.Type != "session_meta" {
		return ""
	}
	return l.Payload.Cwd
}
