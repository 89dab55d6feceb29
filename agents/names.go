package agents

import (
	"regexp"
	"strings"

	"github.com/agentty/agentty/engine"
)

// agentName is what a name may be: it becomes the tool transfer_to_NAME.
var agentName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// normalizeName makes def's name an agent's name when only case, dots,
// spaces or slashes keep it from being one, noting it (its line is line).
func normalizeName(def *Def, line int, note func(int, string, string, ...any)) {
	if n := NormalName(def.Name); n != def.Name && agentName.MatchString(n) && len(n) <= maxAgentName {
		note(line, "name", "%q is used as %q (an agent's name becomes the tool %sNAME: lower-case letters, digits, - and _)", def.Name, n, engine.TransferPrefix)
		def.Name = n
	}
}

// NormalName is name as an agent's name: lower case, each run of dots,
// spaces and slashes made one -, as Claude Code's names may have them
// (dotnet-framework-4.8-expert → dotnet-framework-4-8-expert, "Python
// DevOps/CI-CD Expert" → python-devops-ci-cd-expert). Other characters are
// left for checkDef to refuse.
func NormalName(name string) string {
	return strings.Trim(nameSeparators.ReplaceAllString(strings.ToLower(strings.TrimSpace(name)), "-"), "-")
}

// nameSeparators are what NormalName makes a -.
var nameSeparators = regexp.MustCompile(`[-.\s/]*[.\s/][-.\s/]*`)

// maxAgentName keeps transfer_to_NAME within the 64 characters that model
// APIs allow a tool name.
const maxAgentName = 64 - len(engine.TransferPrefix)

// checkDef says what an agent file lacks: a valid name (on line
// nameLine), a description.
func checkDef(file string, def Def, nameLine int) *Problem {
	switch {
	case def.Name == "":
		return problem(file, 1, "name", "missing: every agent needs a name (lower-case letters, digits, - and _)")
	case !agentName.MatchString(def.Name) || len(def.Name) > maxAgentName:
		return problem(file, nameLine, "name", "%q is not a valid agent name: use lower-case letters, digits, - and _, starting with a letter or digit, at most %d characters (it becomes the tool name %sNAME)", def.Name, maxAgentName, engine.TransferPrefix)
	case def.Description == "":
		return problem(file, 1, "description", "missing: every agent needs a description (the model reads it to choose the agent)")
	}
	return nil
}
