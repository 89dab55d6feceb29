package workflow

import (
	"fmt"
	"regexp"
	"slices"
	"text/template"
)

var (
	// A reference starts a field chain ($.steps or .steps, not .json.steps
	// of a step's output).
	stepRef  = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.)\]])\$?\.steps\.([A-Za-z][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?`)
	inputRef = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.)\]])\$?\.inputs\.([A-Za-z_][A-Za-z0-9_]*)`)
)

// stepFields are what a template may read of a step.
var stepFields = []string{"output", "json", "status"}

// sources are the texts of the step's templates, as parsed.
func (st *Step) sources() []string {
	var srcs []string
	for _, t := range []*template.Template{st.Task, st.If, st.Foreach} {
		if t != nil && t.Tree != nil {
			srcs = append(srcs, t.Tree.Root.String())
		}
	}
	for _, t := range st.argTmpl {
		if t.Tree != nil {
			srcs = append(srcs, t.Tree.Root.String())
		}
	}
	return srcs
}

// refs are the steps the step's templates read.
func (st *Step) refs() []string {
	var out []string
	for _, src := range st.sources() {
		for _, m := range stepRef.FindAllStringSubmatch(src, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// checkRefs checks, when the file is read, what the templates refer to:
// steps that exist and that the step needs, a step's fields (output, json,
// status) and the declared inputs.
func (w *Workflow) checkRefs(file string) error {
	declared := map[string]bool{}
	for _, in := range w.Inputs {
		declared[in.Name] = true
	}
	check := func(field string, line int, srcs []string) error {
		for _, src := range srcs {
			for _, m := range stepRef.FindAllStringSubmatch(src, -1) {
				if m[2] != "" && slices.Contains(shellFields, m[2]) {
					if s := w.byID[m[1]]; s != nil && !s.IsShell() {
						return &Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf("a template reads .steps.%s.%s: only a run_shell step has stdout, stderr and exit; a step has output, json and status", m[1], m[2])}
					}
				} else if m[2] != "" && !slices.Contains(stepFields, m[2]) {
					return &Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf("a template reads .steps.%s.%s: a step has output, json and status (and a run_shell step stdout, stderr and exit)", m[1], m[2])}
				}
			}
			for _, m := range inputRef.FindAllStringSubmatch(src, -1) {
				if !declared[m[1]] {
					return &Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf("a template reads the input %s, and the workflow declares none by that name", m[1])}
				}
			}
		}
		return nil
	}
	for _, st := range w.Steps {
		if err := check("steps."+st.ID, st.Line, st.sources()); err != nil {
			return err
		}
		before := w.before(st.ID)
		for _, ref := range st.refs() {
			if w.byID[ref] == nil {
				return &Error{File: file, Line: st.Line, Field: "steps." + st.ID, Msg: fmt.Sprintf("a template refers to step %s, and there is none", ref)}
			}
			if !before[ref] {
				// Its output would be read before it exists, and an if could
				// change its mind later.
				return &Error{File: file, Line: st.Line, Field: "steps." + st.ID + ".needs",
					Msg: fmt.Sprintf("a template refers to step %s, which this step does not need: add it to needs", ref)}
			}
		}
	}
	if w.Output != nil && w.Output.Tree != nil {
		src := []string{w.Output.Tree.Root.String()}
		if err := check("output", 0, src); err != nil {
			return err
		}
		for _, m := range stepRef.FindAllStringSubmatch(src[0], -1) {
			if w.byID[m[1]] == nil {
				return &Error{File: file, Field: "output", Msg: fmt.Sprintf("the output refers to step %s, and there is none", m[1])}
			}
		}
	}
	return nil
}
