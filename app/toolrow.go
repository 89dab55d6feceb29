package app

import (
	"encoding/json"

	"github.com/agentty/agentty/engine"
)

// ToolRow describes a tool for `agentty tools`.
type ToolRow struct {
	Name        string          `json:"name"`
	Source      string          `json:"source"`
	Policy      engine.Policy   `json:"policy"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}
