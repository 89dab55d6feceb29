package tools

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agentty/agentty/engine"
)

// Knowledge is what search_knowledge asks: the best chunks of the
// workspace's files and the past sessions for a query. main passes the
// search package's index; Search may build or refresh the index first.
// It must be safe for concurrent use.
type Knowledge interface {
	Search(ctx context.Context, query, scope string, k int) ([]KnowledgeHit, error)
}

// KnowledgeHit is one chunk found: where it came from (Source is
// "workspace" or "sessions"; Where is "path:12-40" or "session S, run R,
// step N"), its score (higher is better) and its text.
type KnowledgeHit struct {
	Source string
	Where  string
	Score  float64
	Text   string
	// Session and Run are a session chunk's (empty for a file's).
	Session, Run string
}

// Limits of search_knowledge: k at most maxKnowledgeK, each chunk's text
// cut to maxHitBytes, so that a result stays well under the engine's cap.
const (
	defaultKnowledgeK = 5
	maxKnowledgeK     = 20
	maxHitBytes       = 1500
)

// SearchKnowledge searches the workspace's text files and every past
// session (user messages, answers, tool results, memory facts) by
// relevance, through k.
func SearchKnowledge(k Knowledge) engine.Tool {
	return engine.Tool{
		Name: "search_knowledge",
		Description: "Search by relevance (BM25 over words) the workspace's text files and the past sessions " +
			"(what the user asked, the answers, tool results and remembered facts). Returns the best chunks with " +
			"their source (file and lines, or session, run and step) and score. scope: workspace, sessions or all " +
			"(default all); k: how many chunks (default 5, at most 20). Use it for \"what did we decide about …\" " +
			"and to find where something is described; use search_files for an exact pattern.",
		Schema: []byte(`{"type":"object","properties":{"query":{"type":"string","minLength":1},` +
			`"scope":{"type":"string","enum":["workspace","sessions","all"]},"k":{"type":"integer","minimum":1,"maximum":20}},` +
			`"required":["query"],"additionalProperties":false}`),
		Func: func(ctx context.Context, c *engine.Call) (string, error) {
			var in struct {
				Query string
				Scope string
				K     int
			}
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			if strings.TrimSpace(in.Query) == "" {
				return "", fmt.Errorf("query: empty")
			}
			if in.Scope == "" {
				in.Scope = "all"
			}
			switch in.Scope {
			case "workspace", "sessions", "all":
			default:
				return "", fmt.Errorf("scope: %q is not workspace, sessions or all", in.Scope)
			}
			if in.K <= 0 {
				in.K = defaultKnowledgeK
			}
			in.K = min(in.K, maxKnowledgeK)
			found, err := k.Search(ctx, in.Query, in.Scope, in.K+8)
			if err != nil {
				return "", err
			}
			// The run searching is not its own past: its task (the query,
			// often) and its results would only echo the question.
			var hits []KnowledgeHit
			for _, h := range found {
				if (h.Session != c.Session || h.Run != c.Run || h.Session == "") && len(hits) < in.K {
					hits = append(hits, h)
				}
			}
			if len(hits) == 0 {
				return fmt.Sprintf("nothing found for %q in %s", in.Query, scopeWords(in.Scope)), nil
			}
			var b strings.Builder
			for i, h := range hits {
				if i > 0 {
					b.WriteString("\n\n")
				}
				fmt.Fprintf(&b, "[%d] %s %s (score %.2f)\n%s", i+1, h.Source, h.Where, h.Score, engine.Clip(strings.TrimSpace(h.Text), maxHitBytes))
			}
			return b.String(), nil
		},
	}
}

func scopeWords(scope string) string {
	switch scope {
	case "workspace":
		return "the workspace's files"
	case "sessions":
		return "the past sessions"
	}
	return "the workspace's files and the past sessions"
}

// WalkText calls fn for every regular file under fsys that search_files
// would search: .git and what .gitignore files ignore are skipped (binary
// files are for the caller to skip, with IsBinary, once it has read them).
// Unreadable folders are skipped; fn's error stops the walk and is
// returned, as is the context's.
func WalkText(ctx context.Context, fsys fs.FS, fn func(p string, d fs.DirEntry) error) error {
	ign := newIgnorer(fsys)
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: skip
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if d.Name() == ".git" || (p != "." && ign.ignored(p, true)) {
				return fs.SkipDir
			}
			ign.load(p)
			return nil
		}
		if !d.Type().IsRegular() || ign.ignored(p, false) {
			return nil
		}
		return fn(p, d)
	})
	if err == fs.SkipAll {
		return nil
	}
	return err
}

// IsBinary reports whether b looks like a binary file (a NUL byte or
// invalid UTF-8 in its first 8000 bytes), as read_file and search_files
// decide.
func IsBinary(b []byte) bool { return isBinary(b) }
