package eval

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/agentty/agentty/engine"
	"github.com/agentty/agentty/sessions"
)

// NeedsJudge says where a case of cases asks for a judge, an error naming
// the file, line and field; nil when none does.
func NeedsJudge(file string, cases []*Case) error {
	for _, c := range cases {
		for _, a := range c.Asserts {
			if j := a.find("judge"); j != nil {
				return fmt.Errorf("%s:%d: %s: judge needs --judge-model", file, j.Line, j.Field)
			}
		}
	}
	return nil
}

// find returns the assertion of kind within a (a itself, or what it
// negates), or nil.
func (a *assertion) find(kind string) *assertion {
	for x := a; x != nil; x = x.not {
		if x.Kind == kind {
			return x
		}
	}
	return nil
}

// Gate never pauses; it approves tools that ask with --yes, and denies
// them otherwise (the denial is in the journal, for the assertions); it
// answers the questions its case's answers: have answers to.
type Gate struct {
	Yes     bool
	Answers map[string]string // a question's text to its answer
}

func (g Gate) Stop(engine.Pending) bool { return false }

func (g Gate) Wait(_ context.Context, p engine.Pending) (engine.Verdict, error) {
	if q := p.Question; q != nil {
		if a, ok := g.Answers[q.Question]; ok {
			return engine.Verdict{Action: engine.Proceed, Answer: a, By: "the case's answers"}, nil
		}
		return engine.Verdict{}, fmt.Errorf("nobody answers questions in an eval: the case has no answer to %q (answers: in the suite)", q.Question)
	}
	if g.Yes {
		return engine.Verdict{Action: engine.Proceed}, nil
	}
	return engine.Verdict{Action: engine.Deny}, nil
}

// sessionFacts are what a case is made of: the tasks of a session's
// top-level runs, the tools its decisions called, the memory set before
// its first run, and how its last top-level run finished.
func sessionFacts(events []engine.Event) (tasks, tools []string, memory []kv, last *engine.RunFinished) {
	ran := false
	for _, ev := range events {
		switch d := ev.Data.(type) {
		case *engine.RunStarted:
			if ev.ParentRun == "" {
				tasks = append(tasks, d.Task)
				ran = true
			}
		case *engine.MemoryChanged:
			if !ran && d.Op == engine.MemorySet {
				memory = append(memory, kv{d.Key, d.Value})
			}
		case *engine.Decided:
			for _, c := range d.ToolCalls {
				if !slices.Contains(tools, c.Name) {
					tools = append(tools, c.Name)
				}
			}
		case *engine.RunFinished:
			if ev.ParentRun == "" {
				last = d
			}
		}
	}
	return tasks, tools, memory, last
}

// CaseFromSession writes a case (YAML, a list item to paste under cases:)
// from a session: its tasks, the facts given before its first run, and
// assertions on a distinctive part of the last answer, the tools it used
// and its steps.
//
// A session run as an agent says so (the case's agent:),
// and when schemaOf gives that agent's output schema and the answer meets
// it, the case asserts it with answer_json_schema.
func CaseFromSession(store *sessions.Store, id string, schemaOf func(agent string) json.RawMessage) (string, error) {
	l, err := store.Load(id)
	if l == nil {
		return "", err
	}
	tasks, tools, memory, last := sessionFacts(l.Events)
	agent := firstAgent(l.Events)
	if len(tasks) == 0 {
		return "", fmt.Errorf("session %s has no runs to make a case of", id)
	}
	if last == nil || last.StopReason != engine.StopAnswered {
		return "", fmt.Errorf("session %s's last run did not answer: there is nothing to assert on", id)
	}
	name := l.Meta.Title
	if _, after, ok := strings.Cut(name, " / "); ok && strings.HasPrefix(name, "eval: ") {
		name = after
	}
	c := &yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, v *yaml.Node) {
		c.Content = append(c.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	}
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
	add("name", str(cmp.Or(engine.OneLine(name, 60), id)))
	if agent != "" {
		add("agent", str(agent)) // the case runs as its session did, whatever the suite's agent
	}
	if len(tasks) == 1 {
		add("task", str(tasks[0]))
	} else {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, t := range tasks {
			seq.Content = append(seq.Content, str(t))
		}
		add("turns", seq)
	}
	if len(memory) > 0 {
		m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		for _, f := range memory {
			m.Content = append(m.Content, str(f.Key), str(f.Value))
		}
		add("memory", m)
	}
	asserts := &yaml.Node{Kind: yaml.SequenceNode}
	one := func(kind string, v *yaml.Node) {
		asserts.Content = append(asserts.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{str(kind), v}})
	}
	if part := distinctive(last.Answer, tasks[len(tasks)-1]); part != "" {
		one("answer_contains", &yaml.Node{Kind: yaml.ScalarNode, Value: part, Style: yaml.DoubleQuotedStyle})
	}
	if schema := schemaFor(last.Answer, agent, schemaOf); schema != "" {
		one("answer_json_schema", &yaml.Node{Kind: yaml.ScalarNode, Value: schema, Style: yaml.SingleQuotedStyle})
	}
	for _, t := range tools {
		one("tool_called", str(t))
	}
	one("max_steps", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(max(1, l.Session.Steps))})
	add("assert", asserts)
	doc := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{c}}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# a case from session %s: paste it under cases: in a suite (or >> a suite whose cases come last)\n", id)
	if agent != "" {
		a := engine.OneLine(agent, 60)
		fmt.Fprintf(&b, "# it ran as agent %s: the case says so (agent: %s)\n", a, a)
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	enc.Close()
	// Indented as a suite's cases are (two spaces), so that it can be
	// appended to one as it is.
	var out strings.Builder
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			out.WriteString("  " + line)
		}
	}
	return out.String(), nil
}

// distinctive picks a part of an answer to assert on: its last number, or
// else its longest word that is not in the task and not a common one, or
// else the answer's first line.
func distinctive(answer, task string) string {
	words := strings.FieldsFunc(answer, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' && r != '-' && r != '_'
	})
	for i := range words {
		words[i] = strings.Trim(words[i], ".-_")
	}
	for i := len(words) - 1; i >= 0; i-- {
		w := words[i]
		if w != "" && strings.IndexFunc(w, unicode.IsDigit) >= 0 && !strings.Contains(task, w) {
			return w
		}
	}
	lower := strings.ToLower(task)
	best := ""
	for _, w := range words {
		if len([]rune(w)) < 3 || commonWords[strings.ToLower(w)] || strings.Contains(lower, strings.ToLower(w)) {
			continue
		}
		if len(w) > len(best) {
			best = w
		}
	}
	if best != "" {
		return best
	}
	first, _, _ := strings.Cut(strings.TrimSpace(answer), "\n")
	return engine.Clip(strings.TrimSpace(first), 60)
}

// commonWords are words too common to tell one answer from another.
var commonWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for are but not you your yours all any can her was one our out has have had
		him his how its may new now see who did get let put say she too use that this with from they them then than there
		their what when where which will would could should about into over also just only some such very here is it be
		i am as at by of on or to we he me my no so up us an a in do if got know remembered remember`) {
		m[w] = true
	}
	return m
}()

// schemaFor is the output schema of agent, as compact JSON, when schemaOf
// gives one and answer meets it; "" otherwise.
func schemaFor(answer, agent string, schemaOf func(string) json.RawMessage) string {
	if agent == "" || schemaOf == nil {
		return ""
	}
	raw := schemaOf(agent)
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	check, err := engine.SchemaCheck(raw)
	if err != nil || check == nil || json.Compact(&b, raw) != nil {
		return ""
	}
	if ok, _ := check(answer); !ok {
		return ""
	}
	return b.String()
}

// firstAgent is the agent the session's first top-level run started as
// (a handoff later changes who answers, not whom a case starts with).
func firstAgent(events []engine.Event) string {
	for _, ev := range events {
		if _, ok := ev.Data.(*engine.RunStarted); ok && ev.ParentRun == "" {
			return ev.Agent
		}
	}
	return ""
}
