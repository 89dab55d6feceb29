// Package offline is agentty's built-in model: a small, deterministic,
// rule-based planner that needs no key and no network. It really uses the
// built-in tools (calculator, remember, recall, forget, clock) and answers
// from what they return, so a new user sees the whole loop work. Where agents
// are defined it delegates to them ("ask the researcher agent to …") and
// hands off to them ("transfer to billing"), so the nested runs can be seen
// with no key too. For anything else it says plainly that it is offline and
// how to connect a real model.
package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentty/agentty/engine"
)

// Name is the model name that selects this model.
const Name = "offline"

// Help is the answer to anything the planner cannot do.
const Help = "I am agentty's built-in **offline** model: a small rule-based planner, not a language model, " +
	"so I can only do a few things: arithmetic (\"what is 17*23?\"), remembering facts " +
	"(\"remember that my name is Ada\"), answering from memory (\"what is my name?\"), forgetting " +
	"(\"forget my name\"), telling the time (\"what time is it?\"), looking at files " +
	"(\"list files\", \"read README.md\"), and, where agents are defined, delegating to them " +
	"(\"ask the researcher agent to …\") or handing off to them (\"transfer to billing\"), and searching " +
	"the workspace and past sessions (\"search for retry policy\", \"what did we say about the cache?\").\n\n" +
	"To use a real model, set `OPENAI_API_KEY` (and `--model`, default gpt-4o-mini), or point " +
	"`--base-url` (or `OPENAI_BASE_URL`) at a local OpenAI-compatible server such as Ollama " +
	"(`http://localhost:11434/v1`), llama.cpp server or vLLM."

// Model is the offline planner. It keeps no state; it is safe for concurrent
// use.
type Model struct{}

var _ engine.Model = Model{}

// Decide plans the next move from the last user message and the tool
// results that followed it.
func (Model) Decide(_ context.Context, req *engine.Request) (engine.Decision, error) {
	if req.Summarize {
		return engine.Decision{Text: Extract(req)}, nil
	}
	u := req.LastUser()
	if u < 0 {
		return engine.Decision{Text: Help}, nil
	}
	task := req.Messages[u].Content
	if results := req.Messages[u+1:]; len(results) > 0 && results[len(results)-1].Role == engine.RoleTool {
		if name, ok := handedTo(results); ok {
			return takeOver(name, task, req), nil
		}
		if d, ok := remembered(task, results, req); ok {
			return d, nil
		}
		return engine.Decision{Text: summarize(task, sinceHandoff(results))}, nil
	}
	return plan(task, req), nil
}

var (
	rememberRe = lazyRegexp(`(?i)^\s*(?:please\s+)?remember(?:\s+that)?\s+(.+?)\s+(?:is|are|=)\s+(.+?)\s*[.!]?\s*$`)
	statingRe  = lazyRegexp(`(?i)^\s*(my\s+.+?)\s+(?:is|are)\s+(.+?)\s*[.!]?\s*$`)
	forgetRe   = lazyRegexp(`(?i)^\s*(?:please\s+)?forget(?:\s+about)?\s+(.+?)\s*[.!]?\s*$`)
	askRe      = lazyRegexp(`(?i)^\s*(?:what|who|where|when)(?:\s+is|\s+are|'s|\s+was)\s+(.+?)\s*\??\s*$`)
	listMemRe  = lazyRegexp(`(?i)what do you (?:remember|know)|what have you remembered|show (?:me )?(?:your )?memory|^\s*recall\s*\??\s*$`)
	listRe     = lazyRegexp(`(?i)^\s*(?:please\s+)?(?:list|show)(?:\s+(?:me|all|the))*\s+files(?:\s+in\s+(\S+?))?\s*[.?!]?\s*$|^\s*ls(?:\s+(\S+))?\s*$`)
	readRe     = lazyRegexp(`(?i)^\s*(?:please\s+)?(?:read|show|open|cat)(?:\s+(?:me|the))*(?:\s+file)?\s+(\S+\.\w+|\S*/\S+)\s*[.?!]?\s*$`)
	timeRe     = lazyRegexp(`(?i)\b(?:time|date|day is it|today|clock)\b`)
	writeRe    = lazyRegexp(`(?i)^\s*(?:please\s+)?write\s+(.+?)\s+(?:to|into|in)\s+(\S+\.\w+)\s*[.!]?\s*$`)
	andRe      = lazyRegexp(`(?i) and `)
	skillRe    = lazyRegexp(`(?i)\buse the ([\w-]+) skill\b`)
	askMeRe    = lazyRegexp(`(?i)\bask me (?:for |about |what )?(?:my |your )?(.+?)(?:\s+and\s+remember(?:\s+it)?)?\s*[.?!]?\s*$`)
)

func has(req *engine.Request, tool string) bool {
	for _, t := range req.Tools {
		if t.Name == tool {
			return true
		}
	}
	return false
}

func call(req *engine.Request, name string, args map[string]string) engine.Decision {
	if !has(req, name) {
		return engine.Decision{Text: fmt.Sprintf("I would use the %s tool for this, but it is not available in this session.", name)}
	}
	b, _ := json.Marshal(args)
	return engine.Decision{ToolCalls: []engine.ToolCall{{ID: "call_" + name, Name: name, Args: b}}}
}

func plan(task string, req *engine.Request) engine.Decision {
	t := strings.TrimSpace(task)
	if m := askMeRe.FindStringSubmatch(t); m != nil {
		return call(req, engine.AskUserTool, map[string]string{"question": "What is your " + strings.TrimSpace(m[1]) + "?"})
	}
	if d, ok := delegation(t, req); ok {
		return d
	}
	if d, ok := transfer(t, req); ok {
		return d
	}
	if d, ok := knowledge(t, req); ok {
		return d
	}
	if d, ok := both(t, req); ok {
		return d
	}
	if m := writeRe.FindStringSubmatch(t); m != nil {
		return call(req, "write_file", map[string]string{"path": m[2], "content": m[1] + "\n"})
	}
	if m := skillRe.FindStringSubmatch(t); m != nil {
		return call(req, "skill", map[string]string{"name": m[1]})
	}
	if m := rememberRe.FindStringSubmatch(t); m != nil {
		return call(req, "remember", map[string]string{"key": key(m[1]), "value": m[2]})
	}
	if m := forgetRe.FindStringSubmatch(t); m != nil {
		return call(req, "forget", map[string]string{"key": key(m[1])})
	}
	if m := listRe.FindStringSubmatch(t); m != nil {
		return call(req, "list_dir", map[string]string{"path": m[1] + m[2]})
	}
	if m := readRe.FindStringSubmatch(t); m != nil {
		return call(req, "read_file", map[string]string{"path": m[1]})
	}
	if e, refusal := arithmetic(t); e != "" {
		return call(req, "calculator", map[string]string{"expression": e})
	} else if refusal != "" {
		return engine.Decision{Text: refusal}
	}
	if listMemRe.MatchString(t) {
		return call(req, "recall", map[string]string{})
	}
	if m := askRe.FindStringSubmatch(t); m != nil {
		k := key(m[1])
		for _, f := range req.Memory {
			if f.Key == k {
				return call(req, "recall", map[string]string{"key": k})
			}
		}
		if !timeRe.MatchString(t) {
			return engine.Decision{Text: fmt.Sprintf("I have nothing remembered about %q. Tell me with \"remember that %s is …\".\n\n(%s)", k, m[1], shortHelp)}
		}
	}
	if timeRe.MatchString(t) {
		return call(req, "clock", map[string]string{})
	}
	if m := statingRe.FindStringSubmatch(t); m != nil {
		return call(req, "remember", map[string]string{"key": key(m[1]), "value": m[2]})
	}
	return engine.Decision{Text: Help}
}

const shortHelp = "I am the offline model; run with `--model` or `OPENAI_API_KEY` for a real one."

// key turns "my favourite colour" into "favourite colour", as the memory
// tools do.
func key(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(strings.Trim(s, " ?.!\"'")), " "))
	for _, p := range []string{"my ", "the ", "our "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// summarize answers from the tool results that followed the task. The
// results of agent calls are one line each ("researcher says: …"), a
// list when there are several.
func summarize(task string, msgs []engine.Message) string {
	var parts []string
	agents := false // the last part holds agent lines
	for _, m := range msgs {
		if m.Role != engine.RoleTool {
			continue
		}
		r := m.Content
		if m.Name == agentTool {
			line := agentLine(agentOf(msgs, m.ToolCallID), r)
			if agents { // a Markdown list, so that one line's * cannot pair with the next's
				last := &parts[len(parts)-1]
				if !strings.HasPrefix(*last, "- ") {
					*last = "- " + *last
				}
				*last += "\n- " + line
			} else {
				parts = append(parts, line)
			}
			agents = true
			continue
		}
		agents = false
		if strings.HasPrefix(r, "error:") {
			parts = append(parts, fmt.Sprintf("The %s tool failed: %s", m.Name, strings.TrimSpace(strings.TrimPrefix(r, "error:"))))
			continue
		}
		switch m.Name {
		case "calculator":
			parts = append(parts, r)
		case "remember":
			parts = append(parts, "Got it, I "+r+".")
		case engine.AskUserTool:
			parts = append(parts, "You answered: "+r+".")
		case "forget":
			parts = append(parts, "Done, I "+r+".")
		case "recall":
			parts = append(parts, recallAnswer(task, r))
		case "clock":
			parts = append(parts, "It is "+r+".")
		case searchTool:
			parts = append(parts, knowledgeAnswer(r))
		case "list_dir", "read_file":
			head, body, _ := strings.Cut(r, "\n")
			parts = append(parts, fmt.Sprintf("%s:\n\n```\n%s\n```", head, body))
		default:
			parts = append(parts, fmt.Sprintf("%s returned: %s", m.Name, r))
		}
	}
	return strings.Join(parts, "\n\n")
}

func recallAnswer(task, result string) string {
	k, v, ok := strings.Cut(result, " = ")
	if !ok || strings.Contains(v, "\n") {
		return "Here is what I remember:\n\n" + result
	}
	if strings.Contains(strings.ToLower(task), "my ") {
		return fmt.Sprintf("Your %s is %s.", k, v)
	}
	return fmt.Sprintf("%s is %s.", k, v)
}

// remembered is the step after the person answered what the task asked
// them ("ask me for my name and remember it"): remember the answer.
func remembered(task string, results []engine.Message, req *engine.Request) (engine.Decision, bool) {
	m := askMeRe.FindStringSubmatch(strings.TrimSpace(task))
	last := results[len(results)-1]
	if m == nil || last.Name != engine.AskUserTool || !strings.Contains(strings.ToLower(task), "remember") || strings.HasPrefix(last.Content, "error:") {
		return engine.Decision{}, false
	}
	return call(req, "remember", map[string]string{"key": key(m[1]), "value": strings.TrimSpace(last.Content)}), true
}

// both plans a task of two requests joined by "and" ("what is 17*23 and
// remember that my city is Lyon") as one decision of both calls, which
// run at once; false when either half asks for no tool.
func both(t string, req *engine.Request) (engine.Decision, bool) {
	at := andRe.FindStringIndex(t) // in t itself: a lowered copy's bytes can be elsewhere
	if at == nil {
		return engine.Decision{}, false
	}
	left, right := plan(t[:at[0]], req), plan(t[at[1]:], req)
	if len(left.ToolCalls) == 0 || len(right.ToolCalls) == 0 || left.Text != "" || right.Text != "" {
		return engine.Decision{}, false
	}
	calls := append(left.ToolCalls, right.ToolCalls...)
	for j := range calls {
		calls[j].ID = fmt.Sprintf("call_%d_%s", j+1, calls[j].Name)
	}
	return engine.Decision{ToolCalls: calls}, true
}
