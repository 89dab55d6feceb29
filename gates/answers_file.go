package gates

import (
	"encoding/json"
	"fmt"

	"github.com/agentty/agentty/config"
)

// ReadAnswers reads --answers FILE: a JSON object of questions and their
// answers ("" reads nothing).
func ReadAnswers(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	b, err := config.ReadSmall(path)
	if err != nil {
		return nil, err
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: want a JSON object of questions and answers: %v", path, err)
	}
	return m, nil
}
