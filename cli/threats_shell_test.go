package cli

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// hostileShellRows: what a command's output supplies to a workflow.
func hostileShellRows() []hostile {
	const wf = "name: w\nsteps:\n  - id: log\n    tool: run_shell\n    args: {command: \"%s\"}\n  - id: each\n    foreach: '{{ lines .steps.log.stdout }}'\n    tool: remember\n    args: {key: '{{ .item }}', value: seen}\n"
	return []hostile{{
		name: "a commit subject holding template actions",
		setup: func(t *testing.T, f *fixture) {
			for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "{{ range 1000000000 }}x{{ end }} {{ .inputs }}"}} {
				cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
				cmd.Dir = f.ws
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			f.write(t, ".agentty/workflows/w.yaml", strings.Replace(wf, "%s", "git log --format=%s", 1))
		},
		args: []string{"workflow", "run", "w", "--allow-shell", "--yes", "--model", "offline"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 0 || r.took > 20*time.Second || !strings.Contains(f.journals(t), `"key":"{{ range 1000000000 }}x{{ end }} {{ .inputs }}"`) {
				t.Errorf("exit %d after %v\n%s%s", r.code, r.took, r.stdout, r.stderr)
			}
		},
	}, {
		name: "a command printing 150 lines",
		setup: func(t *testing.T, f *fixture) {
			f.write(t, ".agentty/workflows/w.yaml", strings.Replace(wf, "%s", "seq 150", 1))
		},
		args: []string{"workflow", "run", "w", "--allow-shell", "--yes", "--model", "offline"},
		check: func(t *testing.T, f *fixture, r hostileResult) {
			if r.code != 1 || !strings.Contains(r.stderr, "150 items, more than 100") || strings.Contains(f.journals(t), "memory_changed") {
				t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		},
	}}
}
