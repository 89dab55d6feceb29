package engine

// PromptHash fingerprints what a request is asked with, besides its
// messages: the system prompt, the project instructions and the tools'
// schemas (names, descriptions, parameters). model_request carries it, so
// that a recording can tell a request that changed since it was made (a
// prompt of the same length, a tool described otherwise) from one that did
// not (engine/replay).
func PromptHash(system, instructions string, tools []ToolSchema) uint64 {
	return mixHashes(hashString(system), hashString(instructions), hashTools(tools))
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
func (r *run) promptHash(set *toolSet) uint64 {
	if r.hashSet != set || r.hashSys != r.prof.system || r.hashInstr != r.instructions {
		r.hashSet, r.hashSys, r.hashInstr = set, r.prof.system, r.instructions
		r.hash = mixHashes(hashString(r.prof.system), hashString(r.instructions), set.toolsHash)
	}
	return r.hash
}
