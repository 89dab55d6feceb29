package engine

import (
	"fmt"
	"strconv"
)

// PromptHash fingerprints what a request is asked with, besides its
// messages: the system prompt, the project instructions and the tools'
// schemas (names, descriptions, parameters). model_request carries it, so
// that a recording can tell a request that changed since it was made (a
// prompt of the same length, a tool described otherwise) from one that did
// not (engine/replay).
func PromptHash(system, instructions string, tools []ToolSchema) Hash {
	return Hash(mixHashes(hashString(system), hashString(instructions), hashTools(tools)))
}

// Hash is a fingerprint (PromptHash). In JSON it is a string of its
// decimal digits: a number above 2^53 would be rounded by JavaScript and
// jq. A number is read too (journals written before it was a string).
type Hash uint64

// MarshalJSON writes h as a string of its digits.
func (h Hash) MarshalJSON() ([]byte, error) { return h.appendJSON(nil), nil }

func (h Hash) appendJSON(b []byte) []byte {
	b = append(b, '"')
	b = strconv.AppendUint(b, uint64(h), 10)
	return append(b, '"')
}

// UnmarshalJSON reads a string of digits, or a number.
func (h *Hash) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("a hash: want a string of digits, got %s", b)
	}
	*h = Hash(n)
	return nil
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashString(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func hashTools(ts []ToolSchema) uint64 {
	h := uint64(fnvOffset)
	for _, t := range ts {
		for _, part := range [3]string{t.Name, t.Description, string(t.Parameters)} {
			h = (h ^ hashString(part)) * fnvPrime
		}
	}
	return h
}

func mixHashes(a, b, c uint64) uint64 {
	return ((uint64(fnvOffset)^a)*fnvPrime^b)*fnvPrime ^ c
}

// promptHash is PromptHash of the run's next request, computed again only
// when the system prompt, the instructions or the tool set changed.
func (r *run) promptHash(set *toolSet) Hash {
	if r.hashSet != set || r.hashSys != r.prof.system || r.hashInstr != r.instructions {
		r.hashSet, r.hashSys, r.hashInstr = set, r.prof.system, r.instructions
		r.hash = Hash(mixHashes(hashString(r.prof.system), hashString(r.instructions), set.toolsHash))
	}
	return r.hash
}
