// Package hooks runs Claude Code's hooks: programs the person (or a
// trusted workspace, or a plugin the person added) configured to run at
// points of a run — before and after tool calls, when a prompt is given,
// before the run answers, when a session starts and ends. It reads them
// from the files Claude Code reads them from, in the same shape, gives
// each the JSON Claude Code gives on stdin (with Claude Code's tool names
// and arguments), and reads back what it decided (its exit code, or its
// JSON). The engine asks it at each point (engine.Hooks); Recorded hands
// back what a journal says they decided, for replays.
package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentty/agentty/engine"
)

// Def is one configured hook.
type Def struct {
	Event   engine.HookEvent
	Matcher string
	Command string
	// Timeout is its own (0: DefaultTimeout).
	Timeout time.Duration
	// Source is the file it is configured in; Scope says whose it is:
	// "person", "workspace" or "plugin NAME".
	Source, Scope string
	// Root is the plugin's folder (CLAUDE_PLUGIN_ROOT), "" for others.
	Root string
	// Skip says why it is not run ("": it runs): an event or a field
	// agentty does not run, an untrusted folder.
	Skip  string
	match func(string) bool
}

// DefaultTimeout bounds a hook that sets no timeout, as in Claude Code.
const DefaultTimeout = 60 * time.Second

// runnable are the events agentty runs hooks at.
var runnable = map[engine.HookEvent]bool{
	engine.HookPreToolUse: true, engine.HookPostToolUse: true, engine.HookPostToolUseFailure: true,
	engine.HookUserPromptSubmit: true, engine.HookStop: true, engine.HookSubagentStop: true,
	engine.HookSessionStart: true, engine.HookSessionEnd: true, engine.HookPreCompact: true, engine.HookNotification: true,
}

// handlerKeys are the keys of a hook handler agentty reads; a handler
// with another (if, async, once…) is listed and not run: run without it,
// it would run where its author did not mean it to.
var handlerKeys = map[string]bool{"type": true, "command": true, "timeout": true, "description": true, "statusMessage": true}

// Parse reads the hooks key raw of the file source (Claude Code's shape:
// event → [{matcher, hooks: [{type, command, timeout}]}]), whose hooks are
// scope's. Hooks it cannot run are returned with Skip set; an entry that
// is not of the shape is a note naming the file and the event; raw that
// is not JSON is an error with its line.
func Parse(source, scope string, raw json.RawMessage) ([]Def, []string, error) {
	var events map[string]json.RawMessage
	if err := json.Unmarshal(raw, &events); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, nil, fmt.Errorf("hooks %s:%d: %v", source, 1+bytes.Count(raw[:min(int(se.Offset), len(raw))], []byte("\n")), err)
		}
		return nil, nil, fmt.Errorf("hooks %s: the hooks key must be an object of events: %v", source, err)
	}
	var defs []Def
	var notes []string
	for _, ev := range slices.Sorted(maps.Keys(events)) {
		var groups []struct {
			Matcher string            `json:"matcher"`
			Hooks   []json.RawMessage `json:"hooks"`
		}
		if err := json.Unmarshal(events[ev], &groups); err != nil {
			notes = append(notes, fmt.Sprintf("hooks %s: %s is not a list of matcher groups (Claude Code's shape); not run", source, ev))
			continue
		}
		for _, g := range groups {
			for _, h := range g.Hooks {
				d, note := parseHandler(source, scope, engine.HookEvent(ev), g.Matcher, h)
				if note != "" {
					notes = append(notes, note)
					continue
				}
				defs = append(defs, d)
			}
		}
	}
	return defs, notes, nil
}

// parseHandler reads one hook handler of event ev under matcher.
func parseHandler(source, scope string, ev engine.HookEvent, matcher string, h json.RawMessage) (Def, string) {
	var keys map[string]json.RawMessage
	var f struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Timeout *float64 `json:"timeout"`
	}
	if json.Unmarshal(h, &keys) != nil || json.Unmarshal(h, &f) != nil {
		return Def{}, fmt.Sprintf("hooks %s: a %s hook that is not an object of type and command; not run", source, ev)
	}
	d := Def{Event: ev, Matcher: matcher, Command: f.Command, Source: source, Scope: scope}
	if f.Timeout != nil && *f.Timeout > 0 {
		d.Timeout = time.Duration(*f.Timeout * float64(time.Second))
	}
	var extra []string
	for k := range keys {
		if !handlerKeys[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	switch {
	case !runnable[ev]:
		d.Skip = fmt.Sprintf("agentty does not run %s hooks", ev)
	case f.Type != "command":
		d.Skip = fmt.Sprintf("a hook of type %q: agentty runs command hooks only", f.Type)
	case strings.TrimSpace(f.Command) == "":
		d.Skip = "no command"
	case len(extra) > 0:
		d.Skip = fmt.Sprintf("%s not supported: run without it, it would run where it was not meant to", strings.Join(extra, ", "))
	}
	m, err := compileMatcher(matcher)
	if err != nil && d.Skip == "" {
		d.Skip = err.Error()
	}
	d.match = m
	return d, ""
}

// simpleMatcher is a matcher Claude Code matches exactly: names, or names
// joined by |.
var simpleMatcher = regexp.MustCompile(`^[A-Za-z0-9_|]+$`)

// compileMatcher is Claude Code's matching: "" and * match everything,
// names (Write, Edit|Write) match exactly, anything else is a regular
// expression found anywhere in the name (mcp__memory__.*).
func compileMatcher(m string) (func(string) bool, error) {
	switch {
	case m == "" || m == "*":
		return func(string) bool { return true }, nil
	case simpleMatcher.MatchString(m):
		names := strings.Split(m, "|")
		return func(s string) bool { return slices.Contains(names, s) }, nil
	}
	re, err := regexp.Compile(m)
	if err != nil {
		return func(string) bool { return false }, fmt.Errorf("its matcher %q is not a regular expression: %v", m, err)
	}
	return re.MatchString, nil
}

// Matches reports whether d runs for the event ev about name (a tool's
// name as Claude Code spells it and as agentty does; SessionStart's
// source, Notification's type).
func (d *Def) Matches(ev engine.HookEvent, names ...string) bool {
	if d.Event != ev || d.Skip != "" {
		return false
	}
	switch ev {
	case engine.HookPreToolUse, engine.HookPostToolUse, engine.HookPostToolUseFailure,
		engine.HookSessionStart, engine.HookPreCompact, engine.HookNotification:
		return slices.ContainsFunc(names, d.match)
	}
	return true // the other events have no matcher
}

// Where says where d is configured, for a person: the file, relative to
// dir when it is inside it.
func (d *Def) Where(dir string) string {
	if rel, err := filepath.Rel(dir, d.Source); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return d.Source
}
