package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentty/agentty/engine"
)

// NormalizeKey makes memory keys forgiving: lower case, spaces collapsed,
// and a leading "my " or "the " dropped ("My Name" and "name" are one fact).
func NormalizeKey(k string) string {
	k = strings.ToLower(strings.Join(strings.Fields(k), " "))
	for _, p := range []string{"my ", "the ", "our "} {
		k = strings.TrimPrefix(k, p)
	}
	return k
}

// Remember stores a fact in the session memory.
func Remember() engine.Tool {
	return engine.Tool{
		Name:        "remember",
		Description: "Store a fact in long-term memory as key = value; it is shown in every later request. Writing an existing key replaces its value.",
		Schema: []byte(`{"type":"object","properties":{"key":{"type":"string","minLength":1},"value":{"type":"string"}},` +
			`"required":["key","value"],"additionalProperties":false}`),
		Inline:     true,
		Repeatable: true,
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Key, Value string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			k := NormalizeKey(in.Key)
			if k == "" {
				return "", fmt.Errorf("the key is empty")
			}
			old, had := c.Memory.Get(k)
			c.Memory.Set(k, in.Value)
			if had {
				return fmt.Sprintf("remembered %s = %s (was %s)", k, in.Value, old), nil
			}
			return fmt.Sprintf("remembered %s = %s", k, in.Value), nil
		},
	}
}

// Recall reads facts from the session memory: one key, or all of them.
func Recall() engine.Tool {
	return engine.Tool{
		Name:        "recall",
		Description: "Read a fact from memory by key, or every fact when no key is given.",
		Schema:      []byte(`{"type":"object","properties":{"key":{"type":"string"}},"additionalProperties":false}`),
		Inline:      true,
		Repeatable:  true,
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Key string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			if k := NormalizeKey(in.Key); k != "" {
				v, ok := c.Memory.Get(k)
				if !ok {
					return "", fmt.Errorf("nothing is remembered under %q", k)
				}
				return fmt.Sprintf("%s = %s", k, v), nil
			}
			facts := c.Memory.All()
			if len(facts) == 0 {
				return "memory is empty", nil
			}
			var b strings.Builder
			for _, f := range facts {
				fmt.Fprintf(&b, "%s = %s\n", f.Key, f.Value)
			}
			return strings.TrimSuffix(b.String(), "\n"), nil
		},
	}
}

// Forget removes a fact from the session memory.
func Forget() engine.Tool {
	return engine.Tool{
		Name:        "forget",
		Description: "Remove a fact from memory by key.",
		Schema: []byte(`{"type":"object","properties":{"key":{"type":"string","minLength":1}},` +
			`"required":["key"],"additionalProperties":false}`),
		Inline:     true,
		Repeatable: true,
		Func: func(_ context.Context, c *engine.Call) (string, error) {
			var in struct{ Key string }
			if err := c.Bind(&in); err != nil {
				return "", err
			}
			k := NormalizeKey(in.Key)
			if !c.Memory.Delete(k) {
				return "", fmt.Errorf("nothing is remembered under %q", k)
			}
			return "forgot " + k, nil
		},
	}
}
