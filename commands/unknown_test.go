package commands

import (
	"strings"
	"testing"
)

// A mistyped command, or a plugin's command that is not here, is refused
// rather than sent to the model as the task; a task that merely starts
// with a / (a path) is not.
func TestUnknown(t *testing.T) {
	s := &Set{Commands: []Command{{Name: "review"}, {Name: "git:commit"}}}
	for name, want := range map[string]string{
		"reveiw":    "did you mean /review?",
		"git:comit": "did you mean /git:commit?",
		"myplug:x":  "is its plugin added?",
		"etc":       "",
		"tmp/notes": "",
	} {
		err := s.Unknown(name)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("Unknown(%q) = %v, want %q", name, err, want)
		}
	}
}
