package tools_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/tools"
)

// fakeKnowledge records what it was asked and answers hits.
type fakeKnowledge struct {
	query, scope string
	k            int
	hits         []tools.KnowledgeHit
	err          error
}

var _ tools.Knowledge = (*fakeKnowledge)(nil)

func (f *fakeKnowledge) Search(_ context.Context, query, scope string, k int) ([]tools.KnowledgeHit, error) {
	f.query, f.scope, f.k = query, scope, k
	if len(f.hits) > k {
		return f.hits[:k], f.err
	}
	return f.hits, f.err
}

func TestSearchKnowledge(t *testing.T) {
	long := strings.Repeat("word ", 1000)
	for _, c := range []struct {
		name      string
		args      string
		hits      []tools.KnowledgeHit
		err       error
		wantScope string
		wantK     int
		want      []string
		wantErr   string
	}{
		{name: "defaults", args: `{"query":"retry policy"}`, wantScope: "all", wantK: 5,
			hits: []tools.KnowledgeHit{{Source: "workspace", Where: "notes.md:1-4", Score: 3.14159, Text: "  The retry policy.\n"}},
			want: []string{"[1] workspace notes.md:1-4 (score 3.14)\nThe retry policy."}},
		{name: "scope and k", args: `{"query":"x","scope":"sessions","k":2}`, wantScope: "sessions", wantK: 2,
			hits: []tools.KnowledgeHit{{Source: "sessions", Where: "session a, run-1, step 2, answer", Text: "one"}, {Source: "sessions", Where: "session b, run-1, step 1, user", Text: "two"}},
			want: []string{"[1] sessions session a, run-1, step 2, answer (score 0.00)\none\n\n[2] sessions session b"}},
		{name: "k capped", args: `{"query":"x","k":500}`, wantScope: "all", wantK: 20, want: []string{`nothing found for "x" in the workspace's files and the past sessions`}},
		{name: "nothing in sessions", args: `{"query":"x","scope":"sessions"}`, wantScope: "sessions", wantK: 5, want: []string{`nothing found for "x" in the past sessions`}},
		{name: "long chunk clipped", args: `{"query":"word"}`, wantScope: "all", wantK: 5,
			hits: []tools.KnowledgeHit{{Source: "workspace", Where: "big.txt:1-40", Text: long}}},
		{name: "not the run itself", args: `{"query":"x","k":1}`, wantScope: "all", wantK: 1,
			hits: []tools.KnowledgeHit{{Source: "sessions", Where: "session s, run-2, step 5, user", Text: "x?", Session: "s", Run: "run-2"},
				{Source: "sessions", Where: "session s, run-1, step 1, answer", Text: "x is 1", Session: "s", Run: "run-1"}},
			want: []string{"[1] sessions session s, run-1, step 1, answer (score 0.00)\nx is 1"}},
		{name: "blank query", args: `{"query":"   "}`, wantErr: "query: empty"},
		{name: "bad scope", args: `{"query":"x","scope":"web"}`, wantErr: `scope: "web" is not workspace, sessions or all`},
		{name: "index error", args: `{"query":"x"}`, err: errors.New("search: disk full"), wantErr: "search: disk full"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeKnowledge{hits: c.hits, err: c.err}
			tool := tools.SearchKnowledge(f)
			out, err := tool.Func(context.Background(), &engine.Call{Args: []byte(c.args), Session: "s", Run: "run-2"})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("args %s: err %v, want %q", c.args, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("args %s: %v", c.args, err)
			}
			// It asks for 8 more than it gives, for those of the run itself.
			if f.scope != c.wantScope || f.k != c.wantK+8 {
				t.Errorf("args %s: asked scope %q k %d, want %q %d", c.args, f.scope, f.k, c.wantScope, c.wantK+8)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("args %s: result %q, want it to hold %q", c.args, out, w)
				}
			}
			if len(out) > 2000 {
				t.Errorf("args %s: result of %d bytes: a chunk should be clipped", c.args, len(out))
			}
		})
	}
}
