package agents

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentty/agentty/engine"
)

func writeAgent(t *testing.T, dir, file, body string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, file)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func agentFile(name, extra, body string) string {
	return "---\nname: " + name + "\ndescription: the " + name + " agent\n" + extra + "---\n" + body + "\n"
}

func (a Files) byName() map[string]Def {
	m := map[string]Def{}
	for _, d := range a.Defs {
		m[d.Name] = d
	}
	return m
}

func problems(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}

func TestAgentPrecedence(t *testing.T) {
	env := agentEnv(t)
	getenv := func(k string) string { return env[k] }
	ws := t.TempDir()
	wsA, wsC := filepath.Join(ws, ".agentty", "agents"), filepath.Join(ws, ".claude", "agents")
	userA := filepath.Join(filepath.Dir(env["AGENTTY_CONFIG"]), "agents")
	userC := filepath.Join(env["HOME"], ".claude", "agents")
	writeAgent(t, wsA, "shared.md", agentFile("shared", "", "workspace agentty"))
	writeAgent(t, wsC, "shared.md", agentFile("shared", "", "workspace claude"))
	writeAgent(t, wsC, "claudeonly.md", agentFile("claudeonly", "", "workspace claude"))
	writeAgent(t, userA, "shared.md", agentFile("shared", "", "user agentty"))
	writeAgent(t, userA, "claudeonly.md", agentFile("claudeonly", "", "user agentty"))
	writeAgent(t, userA, "mine.md", agentFile("mine", "", "user agentty"))
	writeAgent(t, userC, "mine.md", agentFile("mine", "", "user claude"))
	writeAgent(t, userC, "theirs.md", agentFile("theirs", "", "user claude"))
	writeAgent(t, wsA, "a-twin.md", agentFile("twin", "", "first"))
	writeAgent(t, wsA, "b-twin.md", agentFile("twin", "", "second"))
	writeAgent(t, wsA, "broken.md", "---\nname: broken\n")
	writeAgent(t, wsA, "README.txt", "not an agent")

	got := Load(Places(ws, ws, true, getenv))
	want := map[string]string{"shared": "workspace agentty", "claudeonly": "workspace claude", "mine": "user agentty", "theirs": "user claude", "twin": "first"}
	defs := got.byName()
	if len(defs) != len(want) {
		t.Errorf("agents %v, want %v", slices.Sorted(maps.Keys(defs)), want)
	}
	for name, body := range want {
		if defs[name].System != body {
			t.Errorf("%s: body %q from %s, want %q", name, defs[name].System, defs[name].File, body)
		}
	}
	if d := defs["shared"]; d.Scope != "workspace" || d.claude || defs["theirs"].Scope != "user" || !defs["theirs"].claude {
		t.Errorf("scopes: shared %+v, theirs %+v", d, defs["theirs"])
	}
	errs := problems(got.Errors)
	if !strings.Contains(errs, filepath.Join(wsA, "b-twin.md")+":2: name: agent \"twin\" is also defined in "+filepath.Join(wsA, "a-twin.md")) {
		t.Errorf("the twin is not an error naming both files:\n%s", errs)
	}
	if !strings.Contains(errs, filepath.Join(wsA, "broken.md")+":1: front matter: no closing --- line") {
		t.Errorf("the broken file is not an error:\n%s", errs)
	}
	notes := problems(got.Notes)
	for _, shadowed := range []string{filepath.Join(wsC, "shared.md"), filepath.Join(userA, "shared.md"), filepath.Join(userA, "claudeonly.md"), filepath.Join(userC, "mine.md")} {
		if !strings.Contains(notes, shadowed+": name: agent ") || !strings.Contains(notes, "which wins; this file is used only if that one cannot be") {
			t.Errorf("no note that %s is shadowed:\n%s", shadowed, notes)
		}
	}

	// With no HOME there is no ~/.claude: nothing is read from the
	// process's own home.
	delete(env, "HOME")
	if defs := Load(Places(ws, ws, true, getenv)).byName(); defs["theirs"].Name != "" {
		t.Errorf("~/.claude/agents read with no HOME: %+v", defs["theirs"])
	}
}

func TestAgentFileErrors(t *testing.T) {
	const file = ".agentty/agents/x.md"
	tests := []struct{ name, body, want string }{
		{"no front matter", "name: x\n", file + ":1: front matter: an agent file begins with a --- line"},
		{"no closing fence", "---\nname: x\ndescription: y\nbody\n", file + ":1: front matter: no closing --- line"},
		{"bad yaml", "---\nname: x y z\n  description: [y: z\n---\n", file + ":3: front matter: "},
		{"tab indent", "---\nname: x\n\tdescription: y\n---\n", file + ":3: front matter: found a tab character"},
		{"not a mapping", "---\n- a\n- b\n---\n", file + ":2: front matter: want fields (name: …, description: …), got a list"},
		{"max_steps a word", "---\nname: x\ndescription: y\nmax_steps: many\n---\n", file + `:4: max_steps: want a positive integer, got "many"`},
		{"max_steps zero", "---\nname: x\ndescription: y\nmax_steps: 0\n---\n", file + `:4: max_steps: want a positive integer, got "0"`},
		{"max_steps list", "---\nname: x\ndescription: y\nmax_steps: [1]\n---\n", file + `:4: max_steps: want a positive integer, got a list`},
		{"max_cost a word", "---\nname: x\ndescription: y\nmax_cost: lots\n---\n", file + `:4: max_cost: want a cost in US dollars such as 0.50, got "lots"`},
		{"max_cost negative", "---\nname: x\ndescription: y\nmax_cost: -1\n---\n", file + `:4: max_cost: want a cost in US dollars`},
		{"max_tokens a float", "---\nname: x\ndescription: y\nmax_tokens: 1.5\n---\n", file + `:4: max_tokens: want a positive number of tokens, got "1.5"`},
		{"name a list", "---\nname: [x]\ndescription: y\n---\n", file + `:2: name: want a string, got a list`},
		{"tools a mapping", "---\nname: x\ndescription: y\ntools:\n  a: b\n---\n", file + `:4: tools: want a list of tool names, got a mapping`},
		{"tool a mapping", "---\nname: x\ndescription: y\ntools:\n  - calculator\n  - {a: b}\n---\n", file + `:6: tools: want a tool name, got a mapping`},
		{"bad glob", "---\nname: x\ndescription: y\ntools: ['fs__[']\n---\n", file + `:4: tools: "fs__[" is not a valid pattern`},
		{"missing name", "---\ndescription: y\n---\n", file + ":1: name: missing"},
		{"missing description", "---\nname: x\n---\n", file + ":1: description: missing"},
		{"empty front matter", "---\n---\nbody\n", file + ":1: name: missing"},
		{"bad name", "---\nname: Bad*Name\ndescription: y\n---\n", file + `:2: name: "Bad*Name" is not a valid agent name`},
		{"long name", "---\nname: " + strings.Repeat("a", 60) + "\ndescription: y\n---\n", file + `:2: name: "aaaa`},
		{"bad mode", "---\nname: x\ndescription: y\nmode: solo\n---\n", file + `:4: mode: want delegate or handoff, got "solo"`},
		{"field twice", "---\nname: x\ndescription: y\nname: z\n---\n", file + `:4: name: given twice (first on line 2)`},
		{"both step limits", "---\nname: x\ndescription: y\nmax_steps: 3\nmaxTurns: 4\n---\n", file + `:5: maxTurns: give max_steps or maxTurns, not both`},
		{"a typo of agentty's own field", "---\nname: x\ndescription: y\noutput_shema: {type: object}\n---\n", file + `:4: output_shema: not a field of an agent: did you mean output_schema?`},
		{"no field at all", "---\nname: x\ndescription: y\nfavourite: blue\n---\n", file + `:4: favourite: not a field of an agent (name, description, tools, disallowed_tools, model, mode, max_steps, max_tokens, max_cost, output_schema, guardrails)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, prob := Parse(file, []byte(tt.body), Place{scope: "workspace"})
			if prob == nil {
				t.Fatalf("no error; want %q", tt.want)
			}
			if !strings.HasPrefix(prob.String(), tt.want) {
				t.Errorf("error %q\nwant  %q…", prob, tt.want)
			}
		})
	}
}

func TestAgentFileFields(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.md")
	def, notes, prob := Parse(file, []byte("\ufeff---\r\nname: x\r\ndescription: >\r\n  Looks things up.\r\nmode: handoff\r\nmodel: script:turns.json\r\nmax_steps: 7\r\nmax_cost: 0.25\r\nmax_tokens: 9000\r\ntools:\r\ncolor: blue\r\n---\r\n\r\nYou look things up.\r\n"), Place{scope: "user"})
	if prob != nil {
		t.Fatal(prob)
	}
	if def.Name != "x" || def.Description != "Looks things up." || def.Mode != Handoff || def.MaxSteps != 7 || def.MaxCost != 0.25 || def.MaxTokens != 9000 ||
		def.Model != "script:"+filepath.Join(dir, "turns.json") || def.Tools != nil || def.System != "You look things up." {
		t.Errorf("def = %+v", def)
	}
	if s := problems(notes); !strings.Contains(s, file+":11: color: ignored: a Claude Code field agentty does not use") {
		t.Errorf("notes:\n%s", s)
	}
	// An empty body is noted; an empty tools list is no tools.
	def, notes, _ = Parse(file, []byte("---\nname: x\ndescription: y\ntools: []\n---\n"), Place{})
	if def.Tools == nil || len(def.Tools) != 0 || !strings.Contains(problems(notes), "the body after the front matter is empty") {
		t.Errorf("tools %#v, notes %v", def.Tools, notes)
	}
}

// An agent's tool list is its whole list: it delegates (is offered the
// tool agent) only when the list names agent, or when it lists no tools.
func TestAgentDelegatesWhenItsListSaysSo(t *testing.T) {
	for fm, want := range map[string]bool{"": true, "tools: [read_file]": false, "tools: [read_file, agent]": true, "tools: Read, Grep": false, "tools: ['*']": true, "disallowedTools: [agent]": false} {
		def, _, prob := Parse("x.md", []byte("---\nname: x\ndescription: y\n"+fm+"\n---\nbody\n"), Place{})
		if prob != nil {
			t.Fatal(prob)
		}
		if def.Delegates() != want {
			t.Errorf("%q: delegates %v, want %v", fm, def.Delegates(), want)
		}
	}
}

func TestAgentTools(t *testing.T) {
	names := []string{"calculator", "read_file", "fs__read", "fs__write", "web__get"}
	tests := []struct {
		name, fm string
		claude   bool
		want     []string
		err      string
		note     string
	}{
		{name: "all", fm: "", want: nil},
		{name: "glob", fm: "tools: ['fs__*', calculator]", want: []string{"calculator", "fs__read", "fs__write"}},
		{name: "comma string", fm: "tools: calculator, fs__read", want: []string{"calculator", "fs__read"}},
		{name: "deny", fm: "tools: ['*']\ndisallowedTools: [fs__write]", want: []string{"calculator", "read_file", "fs__read", "web__get"}},
		{name: "deny only", fm: "disallowedTools: 'fs__*'", want: []string{"calculator", "read_file", "web__get"}},
		{name: "unknown tool", fm: "tools:\n  - calculator\n  - frobnicate", err: `x.md:4: tools: "frobnicate" matches no tool (agentty tools lists them)`},
		{name: "a tool the session does not offer", fm: "tools: [calculator, run_shell]", want: []string{"calculator"}, note: "x.md:4: tools: run_shell needs --allow-shell"},
		{name: "claude names anywhere", fm: "tools: Read, Bash, WebFetch, WebSearch", want: []string{"read_file"}, note: "x.md:4: tools: Bash (run_shell) needs --allow-shell"},
		{name: "claude's WebFetch", fm: "tools: Read, WebFetch", want: []string{"read_file"}, note: "WebFetch (http_get) needs http.allow_hosts in the config"},
		{name: "a whole MCP server", fm: "tools: Read, mcp__fs", want: []string{"read_file", "fs__read", "fs__write"}},
		{name: "an MCP server not configured", fm: "tools: [calculator, mcp__nope]", want: []string{"calculator"}, note: "mcp__nope: no MCP server nope is configured"},
		{name: "a server's tool not there now", fm: "tools: [down__search, calculator]", want: []string{"calculator"}, note: "x.md:4: tools: down__search matches no tool of the MCP server down now"},
		{name: "the engine's tool", fm: "tools: [agent, calculator]", want: []string{"calculator"}},
		{name: "a handoff by name", fm: "tools: [transfer_to_x, calculator]", want: []string{"calculator"}, note: "transfer_to_x is the engine's own"},
		{name: "claude names", fm: "tools: Read, mcp__fs__write, WebSearch", claude: true, want: []string{"read_file", "fs__write"}, note: "x.md:4: tools: WebSearch: agentty has no such tool; left out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, _, prob := Parse("x.md", []byte("---\nname: x\ndescription: y\n"+tt.fm+"\n---\nbody\n"), Place{claude: tt.claude})
			if prob != nil {
				t.Fatal(prob)
			}
			got, notes, prob := def.ResolveTools(names, map[string]bool{"down": true, "fs": true})
			if tt.err != "" {
				if prob == nil || prob.String() != tt.err {
					t.Errorf("error %v, want %q", prob, tt.err)
				}
				return
			}
			if prob != nil {
				t.Fatal(prob)
			}
			if !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("tools %#v, want %#v", got, tt.want)
			}
			if !strings.Contains(problems(notes), tt.note) {
				t.Errorf("notes %q, want %q", problems(notes), tt.note)
			}
			for _, n := range names {
				if def.allows(n) != (tt.want == nil || slices.Contains(tt.want, n)) {
					t.Errorf("allows(%s) = %v", n, def.allows(n))
				}
			}
		})
	}
}

func TestAgentSymlinkOutOfWorkspace(t *testing.T) {
	ws := t.TempDir()
	outside := writeAgent(t, t.TempDir(), "secret.md", agentFile("secret", "", "a secret prompt"))
	dir := filepath.Join(ws, ".agentty", "agents")
	os.MkdirAll(dir, 0o700)
	if err := os.Symlink(outside, filepath.Join(dir, "secret.md")); err != nil {
		t.Skip(err)
	}
	got := Load(Places(ws, realPath(t, ws), false, func(string) string { return "" }))
	if len(got.Defs) != 0 || !strings.Contains(problems(got.Errors), "outside "+realPath(t, ws)+"; refusing to read it") {
		t.Errorf("defs %+v, errors %v", got.Defs, got.Errors)
	}
}

func TestAgentToolsRefresh(t *testing.T) {
	tool := func(name string) engine.Tool {
		return engine.Tool{Name: name, Func: func(context.Context, *engine.Call) (string, error) { return "", nil }}
	}
	def, _, prob := Parse("x.md", []byte("---\nname: x\ndescription: y\ntools: ['fs__*', calculator]\ndisallowedTools: [fs__write]\n---\n"), Place{})
	if prob != nil {
		t.Fatal(prob)
	}
	reg, _ := engine.NewRegistry(Allowed([]engine.Tool{tool("calculator"), tool("fs__read")}, &def)...)
	var a Set
	a.regs = append(a.regs, agentReg{def: &def, reg: reg})
	a.Refresh([]engine.Tool{tool("calculator"), tool("clock"), tool("fs__read"), tool("fs__list"), tool("fs__write")})
	if got := reg.Names(); !slices.Equal(got, []string{"calculator", "fs__read", "fs__list"}) {
		t.Errorf("after the refresh: %v", got)
	}
}

func agentEnv(t *testing.T) map[string]string {
	t.Helper()
	return map[string]string{"AGENTTY_HOME": t.TempDir(), "AGENTTY_CONFIG": filepath.Join(t.TempDir(), "config.json"), "HOME": t.TempDir()}
}

func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A name with a dot or capitals is made an agent's name, noted; a Claude
// model id inherits the session's model, noted.
func TestAgentNamesAndModelsFromClaude(t *testing.T) {
	def, notes, prob := Parse("x.md", []byte("---\nname: dotnet-framework-4.8-Expert\ndescription: y\nmodel: claude-sonnet-4-5\n---\nbody\n"), Place{})
	if prob != nil {
		t.Fatal(prob)
	}
	if def.Name != "dotnet-framework-4-8-expert" || def.Model != Inherit {
		t.Errorf("name %q, model %q", def.Name, def.Model)
	}
	for _, want := range []string{`x.md:2: name: "dotnet-framework-4.8-Expert" is used as "dotnet-framework-4-8-expert"`, "x.md:4: model: claude-sonnet-4-5 is a Claude model id: the agent inherits"} {
		if !strings.Contains(problems(notes), want) {
			t.Errorf("no note %q in\n%s", want, problems(notes))
		}
	}
	if _, _, prob := Parse("x.md", []byte("---\nname: ...\ndescription: y\n---\nbody\n"), Place{}); prob == nil {
		t.Error("a name of dots only loaded")
	}
}

// TestLenientFrontMatter: front matter that is not valid YAML, as Claude
// Code users write it (a description holding ": " unquoted, over several
// lines), is read one key: value a line, with a note; fields keep their
// types and lines; what is no agent even so keeps the YAML's error.
func TestLenientFrontMatter(t *testing.T) {
	src := "---\nname: ai-engineer\ndescription: Use this agent when adding AI features. Examples: <example>Context: a chat app\n  user: \"Add a summary\" assistant: \"I'll use the ai-engineer\"</example>\ntools: Read, Write, Bash\nmax_steps: 12\ncolor: purple\n---\nYou build AI features.\n"
	def, notes, prob := Parse("x.md", []byte(src), Place{claude: true})
	if prob != nil {
		t.Fatal(prob)
	}
	if def.Name != "ai-engineer" || !strings.HasPrefix(def.Description, "Use this agent when adding AI features. Examples: <example>Context: a chat app") ||
		!strings.HasSuffix(def.Description, "</example>") || def.MaxSteps != 12 || len(def.Tools) != 3 || def.System != "You build AI features." {
		t.Errorf("def = %+v", def)
	}
	s := problems(notes)
	for _, want := range []string{"x.md:3: the front matter is not valid YAML (", "read as one key: value a line", "x.md:7: color: ignored: a Claude Code field"} {
		if !strings.Contains(s, want) {
			t.Errorf("no note %q in\n%s", want, s)
		}
	}
	// A name with spaces and a slash is made an agent's name, with a note.
	def, notes, prob = Parse("x.md", []byte("---\nname: \"Python DevOps/CI-CD Expert\"\ndescription: y\n---\nbody\n"), Place{})
	if prob != nil || def.Name != "python-devops-ci-cd-expert" || !strings.Contains(problems(notes), `is used as "python-devops-ci-cd-expert"`) {
		t.Errorf("name %q, %v, notes %s", def.Name, prob, problems(notes))
	}
	// No front matter, no name: still refused.
	for _, bad := range []string{"no fields here\n", "---\ndescription: y: z\n---\nbody\n", "---\nname: x\n\tdescription: y\n---\n"} {
		if _, _, prob := Parse("x.md", []byte(bad), Place{}); prob == nil {
			t.Errorf("%q loaded", bad)
		}
	}
}

// TestShadowedAgentTrustHint: the note of an untrusted workspace's agent
// that the person's own shadows names the workspace to trust, not "".
func TestShadowedAgentTrustHint(t *testing.T) {
	ws, user := t.TempDir(), t.TempDir()
	for _, d := range []string{filepath.Join(ws, ".agentty", "agents"), user} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "helper.md"), []byte("---\nname: helper\ndescription: y\n---\nbody\n"), 0o644)
	}
	files := Load([]Place{{dir: filepath.Join(ws, ".agentty", "agents"), scope: "workspace", root: ws, untrusted: true}, {dir: user, scope: "user"}})
	s := problems(files.Notes)
	if !strings.Contains(s, "to use it: agentty trust "+ws) || strings.Contains(s, "trust ''") {
		t.Errorf("notes:\n%s", s)
	}
}

// TestGuardCyclesThroughOutputJudges: judges of the answer (output) lead
// back as judges of the task (input) do, alone or mixed; an agent whose
// judges reach a cycle is named too; a chain that ends is no cycle.
func TestGuardCyclesThroughOutputJudges(t *testing.T) {
	in := func(name, judge string) engine.Guardrail {
		return engine.Guardrail{Name: name + "-by-" + judge, Agent: judge}
	}
	def := func(name string, input, output []engine.Guardrail) Def {
		return Def{Name: name, Guardrails: engine.Guardrails{Input: input, Output: output}}
	}
	for _, tc := range []struct {
		name string
		defs []Def
		want map[string]string
	}{
		{"output both ways", []Def{def("alpha", nil, []engine.Guardrail{in("alpha", "beta")}), def("beta", nil, []engine.Guardrail{in("beta", "alpha")})},
			map[string]string{"alpha": "form a cycle", "beta": "form a cycle"}},
		{"input there, output back", []Def{def("alpha", []engine.Guardrail{in("alpha", "beta")}, nil), def("beta", nil, []engine.Guardrail{in("beta", "alpha")})},
			map[string]string{"alpha": "form a cycle", "beta": "form a cycle"}},
		{"reaching one", []Def{def("top", nil, []engine.Guardrail{in("top", "alpha")}), def("alpha", nil, []engine.Guardrail{in("alpha", "beta")}), def("beta", nil, []engine.Guardrail{in("beta", "alpha")})},
			map[string]string{"top": "reach a cycle", "alpha": "form a cycle", "beta": "form a cycle"}},
		{"a chain", []Def{def("alpha", nil, []engine.Guardrail{in("alpha", "beta")}), def("beta", nil, nil)}, map[string]string{}},
	} {
		got := GuardCycles(tc.defs)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		for name, want := range tc.want {
			if !strings.Contains(got[name], want) {
				t.Errorf("%s: %s: %q, want %q", tc.name, name, got[name], want)
			}
		}
	}
}
