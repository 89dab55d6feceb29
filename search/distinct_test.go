package search

import "testing"

// A hit whose text another, better one holds whole, or that holds a
// better one whole (an answer quoting the file it found), is shown once,
// at its best rank, however either is spaced.
func TestDistinctHits(t *testing.T) {
	file := "# Notes\n\n1. the retry policy is three tries\n2. backoff doubles"
	hits := []Hit{
		{Path: "notes.md", Text: file},
		{Session: "s1", Kind: KindAnswer, Text: "Found 1 passage(s):\n\n```\n[1] workspace notes.md\n# Notes\n1.  the retry policy is three tries\n2. backoff doubles\n```"},
		{Path: "copy.md", Text: file},
		{Session: "s2", Kind: KindUser, Text: "search for retry policy"},
		{Path: "short.md", Text: "retry"},
	}
	got := distinct(hits)
	var where []string
	for _, h := range got {
		where = append(where, h.Path+h.Session)
	}
	if len(got) != 3 || got[0].Path != "notes.md" || got[1].Session != "s2" || got[2].Path != "short.md" {
		t.Errorf("distinct kept %v", where)
	}
}
