package config

import (
	"encoding/json"

	"github.com/agentty/agentty/engine"
)

// ReadOutputSchema reads a JSON Schema file for a run's answer
// (--output-schema), checked as the engine checks one.
func ReadOutputSchema(path string) (json.RawMessage, error) {
	b, err := ReadSmall(path)
	if err != nil {
		return nil, err
	}
	if err := engine.CheckOutputSchema(b); err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}
