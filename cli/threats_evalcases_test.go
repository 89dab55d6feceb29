package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileEvalCaseRows: what a suite's per-case settings name: a case's
// workspace (a folder copied for each run) and its answers file.
func hostileEvalCaseRows() []hostile {
	good := "  - name: fine\n    workspace: fx/ok\n    task: \"what is 2+2\"\n    assert:\n      - answer_contains: \"4\"\n"
	caseIn := func(name, dir string) string {
		return "  - name: " + name + "\n    workspace: " + dir + "\n    task: \"what is 2+2\"\n"
	}
	return []hostile{{
		name: "a case's workspace with a link out, a link to /dev/zero and a FIFO",
		setup: func(t *testing.T, f *fixture) {
			f.write(t, "outside-secret.txt", "the secret of the folder above")
			secret := filepath.Join(f.outside, "secret.txt")
			if err := os.WriteFile(secret, []byte("sk-outside-the-suite"), 0o600); err != nil {
				t.Fatal(err)
			}
			f.write(t, "evals/fx/ok/notes.txt", "fine")
			f.write(t, "evals/fx/out/notes.txt", "fine")
			f.write(t, "evals/fx/up/notes.txt", "fine")
			f.write(t, "evals/fx/zero/notes.txt", "fine")
			for link, to := range map[string]string{"evals/fx/out/key.txt": secret, "evals/fx/up/key.txt": "../../../outside-secret.txt", "evals/fx/zero/zero": "/dev/zero"} {
				if err := os.Symlink(to, filepath.Join(f.ws, link)); err != nil {
					t.Fatal(err)
				}
			}
			f.fifo(t, filepath.Join(f.ws, "evals/fx/fifo/pipe"))
			f.write(t, "evals/suite.yaml", "cases:\n"+caseIn("out", "fx/out")+caseIn("up", "fx/up")+caseIn("zero", "fx/zero")+caseIn("fifo", "fx/fifo")+good)
		},
		args: []string{"eval", "evals/suite.yaml", "--model", "offline"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 1 || strings.Count(r.stdout, "refused") < 4 || !strings.Contains(r.stdout, "PASS   fine") || r.took > 10*time.Second {
				t.Errorf("exit %d after %v\n%s\n%s", r.code, r.took, r.stdout, r.stderr)
			}
			if j := f.journals(t); strings.Contains(j, "sk-outside-the-suite") || strings.Contains(j, "the secret of the folder above") {
				t.Errorf("a file outside the fixture reached a journal")
			}
		},
	}, {
		name: "a case's workspace of more than 32 MiB",
		setup: func(t *testing.T, f *fixture) {
			p := f.write(t, "evals/fx/big/big.bin", "")
			if err := os.Truncate(p, 33<<20); err != nil { // sparse: nothing written
				t.Fatal(err)
			}
			f.write(t, "evals/fx/ok/notes.txt", "fine")
			f.write(t, "evals/suite.yaml", "cases:\n"+caseIn("big", "fx/big")+good)
		},
		args: []string{"eval", "evals/suite.yaml", "--model", "offline"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 1 || !strings.Contains(r.stdout, "refused: larger than 32 MiB in all") || !strings.Contains(r.stdout, "PASS   fine") {
				t.Errorf("exit %d after %v\n%s\n%s", r.code, r.took, r.stdout, r.stderr)
			}
		},
	}, {
		name: "a case's workspace and answers outside the suite's folder, answers from a FIFO",
		setup: func(t *testing.T, f *fixture) {
			f.write(t, "evals/fx/ok/notes.txt", "fine")
			f.fifo(t, filepath.Join(f.ws, "evals", "answers.fifo"))
			f.write(t, "answers.json", `{"q": "a"}`)
			f.write(t, "evals/suite.yaml", "cases:\n"+caseIn("up", "..")+caseIn("abs", "/etc")+
				"  - name: answers\n    answers: ../answers.json\n    task: \"what is 2+2\"\n"+
				"  - name: fifo\n    answers: answers.fifo\n    task: \"what is 2+2\"\n"+good)
		},
		args: []string{"eval", "evals/suite.yaml", "--model", "offline"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			wantIn(t, "stderr", r.stderr, "suite.yaml:3: cases[0].workspace: .. is not a folder of the suite's folder",
				"suite.yaml:6: cases[1].workspace: /etc is not a folder of the suite's folder",
				"suite.yaml:9: cases[2].answers: ../answers.json is not a file of the suite's folder",
				"suite.yaml:12: cases[3].answers: answers.fifo: refused")
			if r.code != 2 || r.took > 10*time.Second || f.journals(t) != "" {
				t.Errorf("exit %d after %v, sessions made: %v\n%s", r.code, r.took, f.journals(t) != "", r.stderr)
			}
		},
	}}
}
