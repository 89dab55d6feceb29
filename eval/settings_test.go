package eval

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The per-case example of docs/evals.md is a suite that loads, each case
// with the settings the page says, the suite's as defaults.
func TestDocsPerCaseExampleLoads(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "evals.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n# evals/release.yaml")
	if !ok {
		t.Fatal("docs/evals.md has no example suite evals/release.yaml")
	}
	text, _, _ := strings.Cut(rest, "```")
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "fixtures", "repo"), 0o700)
	suite := filepath.Join(dir, "release.yaml")
	if err := os.WriteFile(suite, []byte("#"+text), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(suite)
	if err != nil {
		t.Fatalf("the example does not load: %v", err)
	}
	if s.Defaults.MaxTokens != 20000 || s.Model != "gpt-4o-mini" || len(s.Cases) != 3 {
		t.Fatalf("suite: %+v", s.Defaults)
	}
	got := []Settings{s.Cases[0].Settings, s.Cases[1].Settings, s.Cases[2].Settings}
	want := []Settings{
		{Agent: "classifier", Workspace: "fixtures/repo"},
		{Agent: "writer", Answers: map[string]string{"Which version?": "1.4.0"}},
		{Agent: "classifier", MaxTokens: 2000, Model: "script:" + filepath.Join(dir, "loop.json")},
	}
	for i := range got {
		got[i].Lines = nil
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("case %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if eff := s.Cases[2].Settings.Over(s.Defaults); eff.MaxTokens != 2000 || eff.Agent != "classifier" {
		t.Errorf("a case's own over the suite's: %+v", eff)
	}
	if eff := s.Cases[0].Settings.Over(s.Defaults); eff.MaxTokens != 20000 || eff.Model != "gpt-4o-mini" {
		t.Errorf("the suite's under a case's: %+v", eff)
	}
}

// Each setting's bad value is an error at its line and field.
func TestSettingErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "file.txt"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`["not", "a", "mapping"]`), 0o600)
	tests := map[string]string{
		"max_tokens: 0":         "cases[0].max_tokens: want a whole number of at least 1",
		"max_cost: free":        "cases[0].max_cost: want a cost in US dollars",
		"max_steps: [1]":        "cases[0].max_steps: want a whole number",
		"workspace: file.txt":   "cases[0].workspace: file.txt is not a folder",
		"workspace: nowhere":    "cases[0].workspace: no folder nowhere beside the suite",
		"answers: bad.json":     "cases[0].answers: bad.json: want a JSON object of questions and their answers",
		"answers: {q: [1, 2]}":  "cases[0].answers.q: want a string",
		"agent: [a, b]":         "cases[0].agent: want a string",
		"workspaces: fixtures/": "cases[0].workspaces: unknown field",
	}
	for line, want := range tests {
		p := filepath.Join(dir, "s.yaml")
		os.WriteFile(p, []byte("cases:\n  - name: a\n    task: t\n    "+line+"\n"), 0o600)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), "s.yaml:4: "+want) {
			t.Errorf("%s: got %v, want s.yaml:4: %s", line, err, want)
		}
	}
}
