package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Policy says whether a tool may run without asking.
type Policy string

// Tool policies. PolicyAsk consults the Gate for approval before every call.
const (
	PolicyAllow Policy = "allow"
	PolicyAsk   Policy = "ask"
	PolicyDeny  Policy = "deny"
)

// Tool is one capability the model may call. Func receives arguments that
// have already been validated against Schema. Errors returned by Func are
// shown to the model as the tool result; they do not end the run.
type Tool struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the arguments object. Empty means any
	// object.
	Schema json.RawMessage
	// Policy is PolicyAllow when empty.
	Policy Policy
	// Timeout bounds one call; zero means the engine's default.
	Timeout time.Duration
	// Retryable tools are retried with backoff when Func fails with an
	// error for which IsRetryable holds.
	Retryable bool
	// Inline tools promise to return promptly and to honour ctx: they are
	// run on the run's goroutine with no watchdog. A call that overruns
	// Timeout still counts as timed out, but it cannot be abandoned while
	// it runs, so only pure, in-memory tools (arithmetic, memory, clock)
	// should set it. Any other tool is isolated: a call that overruns its
	// Timeout, or is running when the run is cancelled, is abandoned (its
	// context cancelled) and the run goes on without it. A step's only
	// isolated call runs on the run's goroutine too, watched, and the run
	// moves to a new goroutine if it is abandoned; calls of a step that has
	// several run in parallel, each on its own goroutine.
	Inline bool
	// Repeatable tools may be run again when a process died while they
	// ran (a worker continuing a dead worker's run does, without asking):
	// running them twice does no harm. The pure built-ins set it.
	Repeatable bool
	// Changes marks a tool that may change the workspace (writing files,
	// the shell, an MCP tool not marked read-only): a step that calls
	// one is checkpointed first (Config.Checkpoint).
	Changes bool
	Func    func(ctx context.Context, call *Call) (string, error)

	builtin builtin // a tool the engine answers itself (agents)
}

// Call is one tool call as a tool's Func sees it.
type Call struct {
	ID   string
	Args json.RawMessage
	Step int
	// Session and Run are the session and the run that made the call.
	Session, Run string
	Memory       *MemoryView

	turn int // the decisions of the run that made the call, when it did

	structured json.RawMessage // SetStructured's
}

// SetStructured gives the call's result a structured form beside its
// text, as MCP's structuredContent does: v as JSON, kept in the call's
// tool_finished event (Structured) and in the history's message, where a
// program reads it (a workflow's templates read run_shell's stdout, stderr
// and exit). No model is sent it: the text stays what the model reads. It
// is kept when the call succeeds, and dropped when it returns an error.
func (c *Call) SetStructured(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("engine: structured result of %s: %w", c.ID, err)
	}
	c.structured = b
	return nil
}

// Bind decodes the call's arguments into v.
func (c *Call) Bind(v any) error {
	if err := json.Unmarshal(c.Args, v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

// MemoryView lets a tool read the session's memory and write to it. Writes
// are applied, in call order, when the tool finishes, and each becomes a
// memory_changed event; the view itself sees its own writes at once.
// A MemoryView belongs to one call and is not safe for concurrent use.
type MemoryView struct {
	base    []Fact
	changes []MemoryChanged
}

// Get returns the value of key.
func (m *MemoryView) Get(key string) (string, bool) {
	for i := len(m.changes) - 1; i >= 0; i-- {
		if c := m.changes[i]; c.Key == key {
			return c.Value, c.Op == MemorySet
		}
	}
	for _, f := range m.base {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// Set writes key = value.
func (m *MemoryView) Set(key, value string) {
	m.changes = append(m.changes, MemoryChanged{Op: MemorySet, Key: key, Value: value, Source: "tool"})
}

// Delete removes key, reporting whether it was there.
func (m *MemoryView) Delete(key string) bool {
	_, ok := m.Get(key)
	if ok {
		m.changes = append(m.changes, MemoryChanged{Op: MemoryDelete, Key: key, Source: "tool"})
	}
	return ok
}

// All returns the facts as the view sees them, in order.
func (m *MemoryView) All() []Fact {
	out := slices.Clone(m.base)
	for _, c := range m.changes {
		i := slices.IndexFunc(out, func(f Fact) bool { return f.Key == c.Key })
		switch {
		case c.Op == MemoryDelete && i >= 0:
			out = slices.Delete(out, i, i+1)
		case c.Op == MemorySet && i >= 0:
			out[i].Value = c.Value
		case c.Op == MemorySet:
			out = append(out, Fact{Key: c.Key, Value: c.Value})
		}
	}
	return out
}

// Registry holds the tools an engine offers, in the order they were added.
// It is safe for concurrent use: Replace swaps in a new set at once (an MCP
// server's tool list changed), and each step of a run sees one set.
type Registry struct {
	snap atomic.Pointer[toolSet]
}

// toolSet is one immutable set of tools.
type toolSet struct {
	tools      []registered
	byName     map[string]int
	schemas    []ToolSchema
	toolTokens int    // estimated tokens of schemas
	toolsHash  uint64 // of the schemas, for PromptHash
	isolated   bool   // some tool is not Inline
}

type registered struct {
	Tool
	schema *jsonschema.Schema
	flat   *flatSchema // nil when the schema is not flat
}

// NewRegistry returns a registry holding tools. It fails on a tool with no
// name or function, a duplicate name, or a schema that does not compile.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{}
	if err := r.Replace(tools...); err != nil {
		return nil, err
	}
	return r, nil
}

// Replace makes tools the registry's tools, or changes nothing and fails as
// NewRegistry does.
func (r *Registry) Replace(tools ...Tool) error {
	set := &toolSet{byName: map[string]int{}}
	for _, t := range tools {
		if err := set.add(t); err != nil {
			return err
		}
	}
	set.toolTokens, set.toolsHash = estimateTools(set.schemas), hashTools(set.schemas)
	r.snap.Store(set)
	return nil
}

func (r *Registry) set() *toolSet {
	if r == nil {
		return &toolSet{}
	}
	if s := r.snap.Load(); s != nil {
		return s
	}
	return &toolSet{}
}

var anyObject = json.RawMessage(`{"type":"object"}`)

func (r *toolSet) add(t Tool) error {
	if t.Name == "" || t.Func == nil {
		return fmt.Errorf("engine: tool %q: a name and a function are required", t.Name)
	}
	if _, dup := r.byName[t.Name]; dup {
		return fmt.Errorf("engine: tool %q registered twice", t.Name)
	}
	if len(t.Schema) == 0 {
		t.Schema = anyObject
	}
	if t.Policy == "" {
		t.Policy = PolicyAllow
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.Schema))
	if err != nil {
		return fmt.Errorf("engine: tool %q: schema: %w", t.Name, err)
	}
	c := NewSchemaCompiler()
	url := "tool:" + t.Name
	if err := c.AddResource(url, doc); err != nil {
		return fmt.Errorf("engine: tool %q: schema: %w", t.Name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return fmt.Errorf("engine: tool %q: schema: %w", t.Name, err)
	}
	r.put(registered{Tool: t, schema: sch, flat: compileFlat(t.Schema)})
	return nil
}

func (r *toolSet) put(t registered) {
	r.isolated = r.isolated || !t.Inline
	r.byName[t.Name] = len(r.tools)
	r.tools = append(r.tools, t)
	r.schemas = append(r.schemas, ToolSchema{Name: t.Name, Description: t.Description, Parameters: t.Schema})
}

// Lookup returns the tool called name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	s := r.set()
	i, ok := s.byName[name]
	if !ok {
		return Tool{}, false
	}
	return s.tools[i].Tool, true
}

// lookup is Lookup without the copy: the registered tool itself, which
// must not be changed (a set is immutable).
func (r *Registry) lookup(name string) (*Tool, bool) {
	s := r.set()
	i, ok := s.byName[name]
	if !ok {
		return nil, false
	}
	return &s.tools[i].Tool, true
}

// Tools returns every tool, in the order added.
func (r *Registry) Tools() []Tool {
	s := r.set()
	out := make([]Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.Tool
	}
	return out
}

// Schemas returns what the model is told about the tools. Tools with policy
// PolicyDeny are still listed: the model is told they are denied if it
// calls them. The slice must not be modified.
func (r *Registry) Schemas() []ToolSchema { return r.set().schemas }

// Tokens returns the estimated tokens the tool schemas cost in a request.
func (r *Registry) Tokens() int { return r.set().toolTokens }

// Names returns the tools' names, in order.
func (r *Registry) Names() []string {
	s := r.set()
	out := make([]string, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.Name
	}
	return out
}

// Validate checks args against the named tool's schema. The error is short
// and meant for the model to read.
func (r *Registry) Validate(name string, args json.RawMessage) error {
	set := r.set()
	i, ok := set.byName[name]
	if !ok {
		return fmt.Errorf("unknown tool %q", name)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	if f := set.tools[i].flat; f != nil && f.valid(args) {
		return nil // certainly valid: nothing to decode or report
	}
	var inst any
	if err := json.Unmarshal(args, &inst); err != nil {
		return fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if err := set.tools[i].schema.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New("arguments do not match the schema: " + flattenValidation(ve))
		}
		return fmt.Errorf("arguments do not match the schema: %v", err)
	}
	return nil
}

// flattenValidation turns the library's multi-line report into one line,
// leaving out the schema's URL.
func flattenValidation(ve *jsonschema.ValidationError) string {
	lines := strings.Split(ve.Error(), "\n")
	var parts []string
	for _, l := range lines[1:] {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "-"))
		if l != "" {
			parts = append(parts, l)
		}
	}
	if len(parts) == 0 {
		return lines[0]
	}
	return strings.Join(parts, "; ")
}
