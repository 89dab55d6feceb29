package engine

import (
	"encoding/json"
	"slices"
)

// flatSchema is a tool schema simple enough to check arguments against
// without decoding them: an object whose properties are strings (perhaps
// of an enum), integers, numbers or booleans, some of them required, with
// or without additionalProperties: false. Most tools' schemas are so.
//
// It only ever says "valid": arguments it is not sure of (an escape where
// it compares text, a nested value, a fraction for an integer) or finds
// invalid go to the JSON Schema validator, which decides and words the
// error. FuzzFlatSchema holds it to that: whatever it calls valid, the
// validator accepts.
type flatSchema struct {
	props    []flatProp
	required uint64 // bit i: props[i] is required
	closed   bool   // additionalProperties: false
}

type flatProp struct {
	name string
	kind byte // 's' string, 'i' integer, 'n' number, 'b' boolean
	enum []string
}

// compileFlat returns the flat form of schema, or nil when it is not flat.
func compileFlat(schema json.RawMessage) *flatSchema {
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil {
		return nil
	}
	f := &flatSchema{}
	var props map[string]map[string]json.RawMessage
	var required []string
	for k, v := range top {
		switch k {
		case "type":
			if string(v) != `"object"` {
				return nil
			}
		case "properties":
			if json.Unmarshal(v, &props) != nil {
				return nil
			}
		case "required":
			if json.Unmarshal(v, &required) != nil {
				return nil
			}
		case "additionalProperties":
			switch string(v) {
			case "false":
				f.closed = true
			case "true":
			default:
				return nil
			}
		case "description", "title", "$schema":
		default:
			return nil
		}
	}
	if _, typed := top["type"]; !typed || len(props) > 64 {
		return nil
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p, ok := compileFlatProp(name, props[name])
		if !ok {
			return nil
		}
		f.props = append(f.props, p)
	}
	for _, r := range required {
		i := f.index(r)
		if i < 0 {
			return nil // required but not a property: let the validator judge
		}
		f.required |= 1 << i
	}
	return f
}

// compileFlatProp is the property name of a flat schema, or false when it
// is not one: a string (maybe an enum), an integer, a number or a boolean.
func compileFlatProp(name string, fields map[string]json.RawMessage) (flatProp, bool) {
	p := flatProp{name: name}
	for k, v := range fields {
		switch k {
		case "type":
			switch string(v) {
			case `"string"`:
				p.kind = 's'
			case `"integer"`:
				p.kind = 'i'
			case `"number"`:
				p.kind = 'n'
			case `"boolean"`:
				p.kind = 'b'
			default:
				return p, false
			}
		case "enum":
			if json.Unmarshal(v, &p.enum) != nil || p.enum == nil {
				return p, false
			}
		case "description", "title":
		default:
			return p, false
		}
	}
	if p.kind == 0 || (p.enum != nil && p.kind != 's') {
		return p, false
	}
	return p, true
}

func (f *flatSchema) index(name string) int {
	for i := range f.props {
		if f.props[i].name == name {
			return i
		}
	}
	return -1
}

// valid reports whether args is certainly valid JSON matching f; false
// means invalid or unsure.
func (f *flatSchema) valid(args []byte) bool {
	s := scanner{b: args}
	s.space()
	if !s.eat('{') {
		return false
	}
	var seen uint64
	s.space()
	if s.eat('}') {
		return f.required == 0 && s.end()
	}
	for {
		s.space()
		key, plain, ok := s.str()
		if !ok || !plain {
			return false
		}
		i := -1
		for j := range f.props {
			if f.props[j].name == string(key) { // no allocation: compared, not kept
				i = j
				break
			}
		}
		if i < 0 {
			return false // unknown: the validator knows whether it may be there
		}
		s.space()
		if !s.eat(':') {
			return false
		}
		s.space()
		if !s.value(&f.props[i]) {
			return false
		}
		seen |= 1 << i
		s.space()
		if s.eat(',') {
			continue
		}
		if !s.eat('}') {
			return false
		}
		return seen&f.required == f.required && s.end()
	}
}

// scanner reads the JSON of one flat object.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// str reads a string: its raw content, whether it has no escapes (plain),
// and whether it is a valid JSON string.
func (s *scanner) str() (content []byte, plain, ok bool) {
	if !s.eat('"') {
		return nil, false, false
	}
	start, plain := s.i, true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], plain, true
		case c < 0x20:
			return nil, false, false
		case c == '\\':
			plain = false
			s.i++
			if s.i >= len(s.b) {
				return nil, false, false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if s.i+4 >= len(s.b) {
					return nil, false, false
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return nil, false, false
					}
				}
				s.i += 5
			default:
				return nil, false, false
			}
		default:
			s.i++
		}
	}
	return nil, false, false
}

// value reads a value of p's kind.
func (s *scanner) value(p *flatProp) bool {
	switch p.kind {
	case 's':
		content, plain, ok := s.str()
		if !ok {
			return false
		}
		if p.enum == nil {
			return true
		}
		return plain && slices.Contains(p.enum, string(content))
	case 'b':
		return s.word("true") || s.word("false")
	case 'i', 'n':
		return s.number(p.kind == 'i')
	}
	return false
}

func (s *scanner) word(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// number reads a JSON number; an integer must have no fraction or
// exponent (one that does is left to the validator).
func (s *scanner) number(integer bool) bool {
	s.eat('-')
	switch {
	case s.eat('0'):
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
			s.i++
		}
	default:
		return false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		if integer {
			return false
		}
		if s.eat('.') && !s.digits() {
			return false
		}
		if s.eat('e') || s.eat('E') {
			if !s.eat('+') {
				s.eat('-')
			}
			if !s.digits() {
				return false
			}
		}
	}
	return true
}

func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}
