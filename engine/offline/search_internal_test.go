package offline

import (
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
)

func TestKnowledgeDecisions(t *testing.T) {
	offered := &engine.Request{Tools: []engine.ToolSchema{{Name: searchTool}}}
	for _, c := range []struct{ task, want string }{
		{"search for the retry policy", `{"query":"the retry policy","scope":"all"}`},
		{"Search retry policy", `{"query":"retry policy","scope":"all"}`},
		{"what did we say about the retry policy?", `{"query":"the retry policy","scope":"sessions"}`},
		{"What did we decide on compaction", `{"query":"compaction","scope":"sessions"}`},
		{"find notes about circuit breakers.", `{"query":"circuit breakers","scope":"all"}`},
		{"search in the workspace for jitter", `{"query":"jitter","scope":"workspace"}`},
		{"search in the sessions for jitter", `{"query":"jitter","scope":"sessions"}`},
		{"look up \"token bucket\"", `{"query":"token bucket","scope":"all"}`},
		{"find files", ""},
		{"what is 2+2", ""},
		{"remember that my name is Ada", ""},
	} {
		d, ok := knowledge(c.task, offered)
		got := ""
		if ok {
			if len(d.ToolCalls) != 1 || d.ToolCalls[0].Name != searchTool {
				t.Fatalf("%q: decision %+v", c.task, d)
			}
			got = string(d.ToolCalls[0].Args)
		}
		if got != c.want {
			t.Errorf("%q: args %s, want %s", c.task, got, c.want)
		}
	}
	if _, ok := knowledge("search for the retry policy", &engine.Request{}); ok {
		t.Error("planned a search with search_knowledge not offered")
	}
}

func TestKnowledgeAnswer(t *testing.T) {
	if got := knowledgeAnswer(`nothing found for "x" in the past sessions`); got != `Nothing found for "x" in the past sessions.` {
		t.Errorf("nothing found: %q", got)
	}
	res := "[1] workspace a.md:1-3 (score 2.00)\nretry\n\n[2] sessions session s, run-1, step 2, answer (score 1.00)\njitter"
	if got := knowledgeAnswer(res); !strings.HasPrefix(got, "Found 2 passage(s), best first:") || !strings.Contains(got, "a.md:1-3") {
		t.Errorf("two hits: %q", got)
	}
	// A file with fences of its own stays inside the quote: the fence is
	// longer than any run of backticks in it.
	res = "[1] workspace notes.md:1-6 (score 1.00)\n# Notes\n\n```go\nx := 1\n```"
	got := knowledgeAnswer(res)
	if !strings.Contains(got, "\n````\n[1] workspace") || !strings.HasSuffix(got, "```\n````") {
		t.Errorf("a file with its own fences: %q", got)
	}
}
