package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentty/agentty/engine"
)

// TestSchemaRefLoadsNothing: a schema's $ref to anything outside the
// document (here a FIFO, which would block a read forever) is refused at
// once, in a tool's schema, an output schema and a guardrail's schema;
// refs inside the document and a standard $schema still work.
func TestSchemaRefLoadsNothing(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	hostile := json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"file://` + fifo + `"}}}`)
	stdin := json.RawMessage(`{"$ref":"file:///dev/stdin"}`)
	tool := func(schema json.RawMessage) error {
		_, err := engine.NewRegistry(engine.Tool{Name: "t", Schema: schema, Func: func(context.Context, *engine.Call) (string, error) { return "", nil }})
		return err
	}
	guard := func(schema json.RawMessage) error {
		_, err := engine.SchemaCheck(schema)
		return err
	}
	for _, tc := range []struct {
		name    string
		compile func(json.RawMessage) error
		schema  json.RawMessage
	}{
		{"tool, fifo", tool, hostile},
		{"tool, stdin", tool, stdin},
		{"output, fifo", engine.CheckOutputSchema, hostile},
		{"output, stdin", engine.CheckOutputSchema, stdin},
		{"guardrail, fifo", guard, hostile},
		{"guardrail, http", guard, json.RawMessage(`{"$ref":"http://127.0.0.1:9/s.json"}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- tc.compile(tc.schema) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "agentty loads no schema from outside the document") {
					t.Errorf("compile %s: err %v, want a refusal of the $ref", tc.schema, err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("compile %s is still waiting: the $ref was followed", tc.schema)
			}
		})
	}

	inside := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
		"$defs":{"n":{"type":"integer","minimum":3}},"properties":{"n":{"$ref":"#/$defs/n"}}}`)
	if err := tool(inside); err != nil {
		t.Errorf("a tool schema with a ref inside it: %v", err)
	}
	check, err := engine.SchemaCheck(inside)
	if err != nil {
		t.Fatalf("a guardrail schema with a ref inside it: %v", err)
	}
	if ok, why := check(`{"n":2}`); ok {
		t.Errorf("the ref inside the document was not applied: %q passed (%s)", `{"n":2}`, why)
	}
	if ok, why := check(`{"n":4}`); !ok {
		t.Errorf(`{"n":4} refused: %s`, why)
	}
}

// TestNewSchemaCompiler: the compiler engine hands out refuses a $ref out
// of the document, naming it.
func TestNewSchemaCompiler(t *testing.T) {
	c := engine.NewSchemaCompiler()
	if err := c.AddResource("s:", map[string]any{"$ref": "file:///etc/passwd"}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Compile("s:")
	if err == nil || !strings.Contains(err.Error(), "schema $ref file:///etc/passwd: agentty loads no schema") {
		t.Errorf("compile = %v, want the $ref refused", err)
	}
}
