package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine/enginetest"
)

// releaseNotesDir is the shipped release-notes example.
var releaseNotesDir = filepath.Join("..", "examples", "release-notes")

// classifierModel sorts a commit subject behind the real wire format, by
// its conventional prefix, as a real model told the classifier's prompt
// would; it answers inside {"answer": …} when response_format asks so.
func classifierModel(t *testing.T) *enginetest.Server {
	return enginetest.NewServerFunc(t, func(_ int, req enginetest.Request) enginetest.Reply {
		msgs, _ := req.Body["messages"].([]any)
		task := ""
		for _, m := range msgs {
			if mm, _ := m.(map[string]any); mm["role"] == "user" {
				task, _ = mm["content"].(string)
			}
		}
		subject := strings.TrimSpace(strings.TrimPrefix(task, "Classify this commit:"))
		prefix, rest, _ := strings.Cut(subject, ":")
		kind := "chore"
		switch strings.SplitN(prefix, "(", 2)[0] {
		case "feat":
			kind = "feature"
		case "fix":
			kind = "fix"
		case "docs":
			kind = "docs"
		}
		b, _ := json.Marshal(map[string]string{"kind": kind, "summary": strings.TrimSpace(rest)})
		return enginetest.Reply{Body: enginetest.Answer(string(b))}
	})
}

// TestReleaseNotesExample runs the shipped example as its README says: the
// classifier's suite replays its recordings with no key; the workflow, in
// a repository with the example's .agentty copied in, sorts git log's
// commits one classifier run each (the agent's schema sent as
// response_format) and groups the notes; and with the scripted model it
// runs offline.
func TestReleaseNotesExample(t *testing.T) {
	abs, err := filepath.Abs(releaseNotesDir)
	if err != nil {
		t.Fatal(err)
	}
	suite, recs := filepath.Join(abs, "evals.yaml"), filepath.Join(abs, "recordings")
	srv := classifierModel(t)
	env := func() map[string]string {
		e := testEnv(t)
		e["OPENAI_API_KEY"], e["OPENAI_BASE_URL"] = "sk-test-notes", srv.URL()
		return e
	}
	if *updateExamples {
		os.RemoveAll(recs)
		if code, out, errs := runCLI(t, context.Background(), env(), "eval", suite, "--workspace", abs, "--model", "gpt-4o-mini", "--record", recs); code != 0 {
			t.Fatalf("recording: exit %d\n%s%s", code, out, errs)
		}
	}
	code, out, errs := runCLI(t, context.Background(), testEnv(t), "eval", suite, "--workspace", abs, "--replay", recs)
	if code != 0 || strings.Count(out, "PASS") != 4 {
		t.Fatalf("the recordings replayed: exit %d\n%s%s", code, out, errs)
	}

	repo := gitRepo(t, "feat(cli): add --since to the log command", "fix: crash when the config file is empty", "docs: explain the retry policy", "ci: cache the Go modules")
	if err := os.CopyFS(filepath.Join(repo, ".agentty"), os.DirFS(filepath.Join(abs, ".agentty"))); err != nil {
		t.Fatal(err)
	}
	srv.Reset()
	code, out, errs = runCLI(t, context.Background(), env(), "workflow", "run", "release-notes", "--workspace", repo, "--allow-shell", "--yes", "--model", "gpt-4o-mini")
	if code != 0 {
		t.Fatalf("the workflow: exit %d\n%s%s", code, out, errs)
	}
	want := "## Features\n- add --since to the log command\n\n## Fixes\n- crash when the config file is empty\n\n## Documentation\n- explain the retry policy\n\n## Other\n- cache the Go modules\n"
	if strings.TrimSpace(out) != strings.TrimSpace(want) {
		t.Errorf("the workflow's notes:\n%s\nwant:\n%s", out, want)
	}
	reqs := srv.Requests()
	for _, r := range reqs {
		if rf, _ := json.Marshal(r.Body["response_format"]); !strings.Contains(string(rf), `"enum":["feature","fix","docs","chore"]`) {
			t.Errorf("a classifier request without its schema: response_format %s", rf)
		}
	}
	if len(reqs) != 4 {
		t.Errorf("%d model requests for 4 commits", len(reqs))
	}

	code, out, errs = runCLI(t, context.Background(), testEnv(t), "workflow", "run", "release-notes", "--workspace", repo, "--allow-shell", "--yes", "--model", "script:"+filepath.Join(abs, "script.json"))
	if code != 0 || strings.Count(out, "- (the scripted model sorts every commit as a chore)") != 4 {
		t.Errorf("offline, with the scripted model: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, context.Background(), testEnv(t), "workflow", "run", "release-notes", "--workspace", repo, "--model", "script:"+filepath.Join(abs, "script.json"))
	if code == 0 || !strings.Contains(out+errs, "run_shell") {
		t.Errorf("without --allow-shell: exit %d\n%s%s", code, out, errs)
	}
}
