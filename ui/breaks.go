package ui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentty/agentty/engine"
)

// Breakpoints implements engine.Breaker: the console's breakpoints, for
// every session it runs.
func (g *Gate) Breakpoints(string) *engine.Breakpoints { return g.breaks.Load() }

// SetBreaks replaces the breakpoints (--break, /break).
func (g *Gate) SetBreaks(list []engine.Break) {
	g.breaks.Store(&engine.Breakpoints{List: slices.Clone(list), StepOf: stepOfPending})
}

// Breaks lists the breakpoints.
func (g *Gate) Breaks() []engine.Break {
	if bs := g.breaks.Load(); bs != nil {
		return bs.List
	}
	return nil
}

// AddBreak adds a breakpoint, unless there is one of the same condition;
// it reports whether it was added.
func (g *Gate) AddBreak(b engine.Break) bool {
	list := g.Breaks()
	for _, o := range list {
		if o.String() == b.String() {
			return false
		}
	}
	g.SetBreaks(append(slices.Clone(list), b))
	return true
}

// allowKey is what an approval for the session covers: the tool, or for
// run_shell the exact command.
func allowKey(c *engine.ToolCall) (key, what string) {
	if c.Name == "run_shell" {
		var a struct {
			Command string `json:"command"`
		}
		json.Unmarshal(c.Args, &a)
		return c.Name + "\x00" + a.Command, "run_shell: " + a.Command
	}
	return c.Name, c.Name
}

// Allow approves p's call (its tool, or run_shell's exact command) for the
// rest of p's session, and says what it allowed.
func (g *Gate) Allow(p engine.Pending) string {
	k, what := allowKey(p.ToolCall)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.allowed == nil {
		g.allowed = map[string][]string{}
	}
	if !slices.Contains(g.allowed[p.Session], k) {
		g.allowed[p.Session] = append(g.allowed[p.Session], k)
	}
	return what
}

// Allowed reports whether p's call was allowed for its session.
func (g *Gate) Allowed(p engine.Pending) bool {
	if p.ToolCall == nil {
		return false
	}
	k, _ := allowKey(p.ToolCall)
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Contains(g.allowed[p.Session], k)
}

// Permissions lists what was allowed for session, as the person reads it
// (and Settings.Allowed keeps it).
func (g *Gate) Permissions(session string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, len(g.allowed[session]))
	for i, k := range g.allowed[session] {
		name, cmd, shell := strings.Cut(k, "\x00")
		out[i] = name
		if shell {
			out[i] = "run_shell: " + cmd
		}
	}
	return out
}

// SetPermissions makes list (as Permissions says it) what is allowed for
// session: a resumed session's approvals.
func (g *Gate) SetPermissions(session string, list []string) {
	keys := make([]string, 0, len(list))
	for _, what := range list {
		if cmd, ok := strings.CutPrefix(what, "run_shell: "); ok {
			what = "run_shell\x00" + cmd
		}
		if what != "" && !slices.Contains(keys, what) {
			keys = append(keys, what)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.allowed == nil {
		g.allowed = map[string][]string{}
	}
	g.allowed[session] = keys
}

// Revoke takes back the n-th permission (from 1) of session and says what
// it was.
func (g *Gate) Revoke(session string, n int) (string, error) {
	list := g.Permissions(session)
	if n < 1 || n > len(list) {
		return "", fmt.Errorf("there is no permission %d (there are %d)", n, len(list))
	}
	g.mu.Lock()
	g.allowed[session] = slices.Delete(g.allowed[session], n-1, n)
	g.mu.Unlock()
	return list[n-1], nil
}

// breakCommand is /break: COND adds a breakpoint, "clear" removes them,
// "list" (or nothing) lists them.
func (m *Model) breakCommand(arg string) {
	switch arg {
	case "", "list":
		list := m.gate.Breaks()
		if len(list) == 0 {
			m.notify("No breakpoints. /break COND sets one: " + engine.BreakSyntax + "; b on a Timeline row breaks on its tool or agent.")
			return
		}
		names := make([]string, len(list))
		for i, b := range list {
			names[i] = b.String()
		}
		m.notify("Breakpoints: " + strings.Join(names, " · ") + " (/break clear removes them)")
	case "clear":
		n := len(m.gate.Breaks())
		m.gate.SetBreaks(nil)
		m.notify(fmt.Sprintf("%d %s removed.", n, engine.Plural(n, "breakpoint")))
	default:
		b, err := engine.ParseBreak(arg)
		if err != nil {
			m.notify("/break: " + err.Error())
			return
		}
		if m.gate.AddBreak(b) {
			m.notify("Breakpoint set: the run pauses at " + b.String() + ".")
		} else {
			m.notify("There is a breakpoint " + b.String() + " already.")
		}
	}
}

// permissionsCommand is /permissions: the approvals given for the session
// (a at an approval); "revoke N" takes one back.
func (m *Model) permissionsCommand(arg string) {
	if n, ok := strings.CutPrefix(arg, "revoke"); ok {
		var i int
		if _, err := fmt.Sscan(strings.TrimSpace(n), &i); err != nil {
			m.notify("/permissions revoke N: N is the permission's number in /permissions")
			return
		}
		what, err := m.gate.Revoke(m.sessionID(), i)
		if err != nil {
			m.notify("/permissions: " + err.Error())
			return
		}
		m.notify("Revoked: " + what + " asks again.")
		return
	}
	list := m.gate.Permissions(m.sessionID())
	if len(list) == 0 {
		m.notify("Nothing is allowed for this session: a at an approval allows its tool (run_shell: its command) for the rest of the session.")
		return
	}
	for i := range list {
		list[i] = fmt.Sprintf("%d. %s", i+1, list[i])
	}
	m.notify("Allowed for this session: " + strings.Join(list, " · ") + " (/permissions revoke N takes one back)")
}

// breakLines list the breakpoints, for the step details ("" for none).
func (m *Model) breakLines(w int) []string {
	list := m.gate.Breaks()
	if len(list) == 0 {
		return nil
	}
	out := []string{"", "Breakpoints (b on a row sets one, /break clear removes them):"}
	for _, b := range list {
		out = append(out, hangRows("  "+flatten(Sanitize(b.String())), w)...)
	}
	return out
}

// breakOnRow is b on a Timeline row: a breakpoint on its tool, or on the
// agent of an agent call's row.
func (m *Model) breakOnRow(r *row) {
	cond := ""
	switch {
	case r.agent != "":
		cond = "agent=" + r.agent
	case r.phase == engine.Act && r.text != "":
		cond = "tool=" + r.text
	default:
		m.notify("b sets a breakpoint on a tool call's or an agent call's row; this row is neither (/break COND sets any).")
		return
	}
	m.breakCommand(cond)
}

// sessionID is the id of the session the console is on ("" for none).
func (m *Model) sessionID() string {
	if m.backend == nil {
		return ""
	}
	return m.backend.SessionID()
}
