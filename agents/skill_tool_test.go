package agents

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestClaudeSkillTool: a published agent file whose tools list Claude
// Code's Skill gets agentty's skill and read_skill_file; with no skills
// here, it is told why Skill is left out (not "no such tool").
func TestClaudeSkillTool(t *testing.T) {
	file := "testdata/real/ralph-validator.md"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	def, _, prob := Parse(file, b, Place{claude: true, scope: "workspace"})
	if prob != nil {
		t.Fatal(prob)
	}
	names := []string{"read_file", "write_file", "search_files", "run_shell", "skill", "read_skill_file", "calculator"}
	got, notes, prob := def.ResolveTools(names, nil)
	if prob != nil {
		t.Fatal(prob)
	}
	if want := []string{"read_file", "write_file", "search_files", "run_shell", "skill", "read_skill_file"}; !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	for _, n := range notes {
		if strings.HasPrefix(n.Message, "Skill") {
			t.Errorf("Skill noted: %s", n)
		}
	}
	if !def.allows("read_skill_file") || def.allows("calculator") {
		t.Errorf("allows: read_skill_file %v, calculator %v", def.allows("read_skill_file"), def.allows("calculator"))
	}
	_, notes, _ = def.ResolveTools([]string{"read_file", "write_file", "search_files", "run_shell"}, nil)
	var said []string
	for _, n := range notes {
		said = append(said, n.Message)
	}
	if !slices.Contains(said, "Skill (skill) is offered only when there are skills (none were found here); left out") {
		t.Errorf("with no skills, the notes are %q", said)
	}
}
