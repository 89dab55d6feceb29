package engine

import (
	"bytes"
	"encoding/json"
)

// PropertyOrder returns the names of a JSON Schema's top-level properties
// in the order the schema writes them (a tool's author puts the path
// before the content): nil when it has none or is not JSON.
func PropertyOrder(schema json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(schema))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil
		}
		if k != "properties" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		return objectKeys(dec)
	}
	return nil
}

// objectKeys reads the object dec is at and returns its keys in order.
func objectKeys(dec *json.Decoder) []string {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		name, ok := k.(string)
		if err != nil || !ok {
			return keys
		}
		keys = append(keys, name)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}
