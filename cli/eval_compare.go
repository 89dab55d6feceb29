package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/agentty/agentty/app"
	"github.com/agentty/agentty/config"
	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/eval"
)

// comparing reports whether eval compares runs instead of running once.
func (o *evalOptions) comparing() bool { return o.Compare || len(o.Variants) > 0 }

// evalCompareUsage checks the flags of a comparison.
func evalCompareUsage(opts *evalOptions) error {
	switch {
	case !opts.comparing():
		return nil
	case opts.Compare && opts.ReplayDir == "":
		return errors.New("--compare runs the recorded cases again live: it needs --replay DIR")
	case opts.RecordDir != "":
		return errors.New("--record and --compare/--variants go apart: record once, then compare")
	case opts.JUnitFile != "" || opts.JSONFile != "":
		return errors.New("--junit and --json report one run of the suite, not a comparison")
	case len(opts.Variants) == 1:
		return errors.New("--variants wants two prompt files or more, comma-separated (to hold one prompt against the recordings: --replay DIR --compare)")
	}
	opts.prompts = make([]string, len(opts.Variants))
	for i, v := range opts.Variants { // read once, before anything runs; a FIFO is refused, not waited on
		b, err := config.ReadSmall(v)
		if err != nil {
			return fmt.Errorf("--variants %s: %v", v, err)
		}
		opts.prompts[i] = bodyOf(string(b))
	}
	return nil
}

// evalCompare runs the suite as recorded (with --replay) and live, once
// or once per prompt variant, each live run with the tool results of its
// recording where the calls match, and shows the verdicts side by side.
// Exit 1 when a live column has a case that did not pass.
func evalCompare(ctx context.Context, opts *evalOptions, base *eval.Runner, cfg engine.Config) int {
	var cols []eval.Column
	run := func(name string, r eval.Runner) {
		fmt.Fprintf(opts.Out, "running %s…\n", name)
		r.Report = eval.NewPlainReporter(io.Discard)
		cols = append(cols, eval.Column{Name: name, Results: r.Run(ctx)})
	}
	if opts.ReplayDir != "" {
		r := *base
		r.ReplayDir = opts.ReplayDir
		run("recorded", r)
	}
	variants := []string{""}
	if len(opts.Variants) > 0 {
		variants = opts.Variants
	}
	for i, v := range variants {
		r := *base
		r.ToolsFrom, r.ReplayDir, r.Config = opts.ReplayDir, "", cfg
		name := "now"
		if v != "" {
			name = filepath.Base(v)
			r.Config = withPrompt(cfg, opts.prompts[i])
		}
		if r.ToolsFrom == "" { // no recordings: the cases run live, tools and all
			r.Engine = engine.New(r.Config)
			if err := r.Engine.Err(); err != nil {
				fmt.Fprintf(opts.Err, "agentty eval: %s: %v\n", name, err)
				return app.ExitError
			}
		}
		run(name, r)
	}
	fmt.Fprintln(opts.Out)
	changed := eval.WriteComparison(opts.Out, cols)
	fmt.Fprintf(opts.Out, "\n%d of %d %s differ between the columns\n", changed, len(base.Cases), engine.Plural(len(base.Cases), "case"))
	if ctx.Err() != nil {
		return app.ExitCancelled
	}
	for _, col := range cols {
		if col.Name == "recorded" {
			continue
		}
		for _, c := range col.Results {
			if c.Status != eval.Passed {
				return app.ExitError
			}
		}
	}
	return 0
}

// bodyOf is a prompt file's text, after its front matter when it has one
// (an agent's file gives its prompt).
func bodyOf(text string) string {
	rest, ok := strings.CutPrefix(strings.ReplaceAll(text, "\r\n", "\n"), "---\n")
	if !ok {
		return text
	}
	if _, body, ok := strings.Cut(rest, "\n---\n"); ok {
		return strings.TrimLeft(body, "\n")
	}
	return text
}

// withPrompt is cfg with the system prompt of the agent the runs run as
// (or the engine's, when none) replaced.
func withPrompt(cfg engine.Config, prompt string) engine.Config {
	if cfg.Agent == "" {
		cfg.System = prompt
		return cfg
	}
	cfg.Agents = append([]engine.Agent(nil), cfg.Agents...)
	for i := range cfg.Agents {
		if cfg.Agents[i].Name == cfg.Agent {
			cfg.Agents[i].System = prompt
		}
	}
	return cfg
}
