package sessions

import "testing"

// A title is the message as typed, not the files attached to it.
func TestTitleLeavesAttachmentsOut(t *testing.T) {
	if got := Title("summarise @notes.md\n\n<attached path=\"notes.md\">\n1\tx\n</attached>"); got != "summarise @notes.md" {
		t.Errorf("Title = %q", got)
	}
}
