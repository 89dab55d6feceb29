package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/eval"
	"github.com/agentty/agentty/sessions"
)

// BenchmarkEvalOverhead runs 100 offline cases with --concurrency 8, and
// the same 100 runs through the engine directly (each in a journaled
// session, 8 at once): the difference per case is what the eval runner
// adds (parsing, the setup, titling each session, the assertions, the
// report). Compare the two side by side in one go (-bench EvalOverhead).
func BenchmarkEvalOverhead(b *testing.B) {
	const cases, concurrency = 100, 8
	const task = "what is 17*23?"
	var suite strings.Builder
	suite.WriteString("model: offline\ncases:\n")
	for i := range cases {
		fmt.Fprintf(&suite, "  - name: case %d\n    task: %q\n    assert:\n      - answer_contains: \"391\"\n      - tool_called: calculator\n      - max_steps: 3\n", i, task)
	}
	file := filepath.Join(b.TempDir(), "bench.yaml")
	if err := os.WriteFile(file, []byte(suite.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	env := func(home string) func(string) string {
		m := map[string]string{"AGENTTY_HOME": home, "AGENTTY_CONFIG": filepath.Join(home, "none.json"), "HOME": home}
		return func(k string) string { return m[k] }
	}

	b.Run("direct", func(b *testing.B) {
		home := b.TempDir()
		getenv := env(home)
		o := app.Options{Model: "offline", MaxSteps: engine.DefaultMaxSteps, Temperature: -1}
		st, err := app.Build(context.Background(), o, eval.Gate{}, getenv)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		store, err := sessions.Open(home)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for b.Loop() {
			jobs := make(chan int)
			var wg sync.WaitGroup
			for range concurrency {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range jobs {
						j, err := store.Create()
						if err != nil {
							b.Error(err)
							return
						}
						s := engine.NewSession(j.ID)
						res := st.Engine.Run(context.Background(), s, task, engine.Sinks{j})
						j.Close()
						if !strings.Contains(res.Answer, "391") {
							b.Errorf("answer %q", res.Answer)
						}
					}
				}()
			}
			for i := range cases {
				jobs <- i
			}
			close(jobs)
			wg.Wait()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*cases), "ns/case")
	})

	b.Run("eval", func(b *testing.B) {
		getenv := env(b.TempDir())
		b.ResetTimer()
		for b.Loop() {
			if code := Execute(context.Background(), []string{"eval", file, "--concurrency", fmt.Sprint(concurrency)}, strings.NewReader(""), io.Discard, io.Discard, getenv); code != 0 {
				b.Fatalf("exit %d", code)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*cases), "ns/case")
	})
}
