package engine

import "testing"

// TestHistoryDoublesBelowTheMark: below the mark (an eighth of the room
// the run's step limit bounds) a full history doubles, never grows by
// append's quarter, which would copy a long history over and over; past
// the mark it takes all the room at once; and the token counts keep up.
func TestHistoryDoublesBelowTheMark(t *testing.T) {
	s := NewSession("grow")
	const limit = 80_000 // the mark: 10,000
	s.reserve(limit, 8)
	m := Message{Role: RoleUser, Content: "x"}
	grew, last := 0, cap(s.History)
	for i := range 9_000 {
		s.appendHistory(&m)
		if c := cap(s.History); c != last {
			if c < 2*last {
				t.Fatalf("message %d: the history grew from %d to %d, want at least double below the mark", i+1, last, c)
			}
			grew, last = grew+1, c
		}
	}
	if grew > 11 { // 8 → 9,000 by doubling
		t.Errorf("the history grew %d times for 9,000 messages, want at most 11", grew)
	}
	for range 11_000 { // past the mark, full again: all the room the limit bounds, once
		s.appendHistory(&m)
	}
	if c := cap(s.History); c < limit || c > limit+limit/8 {
		t.Errorf("past the mark the history has room for %d, want the limit's %d", c, limit)
	}
	if len(s.tokens) != len(s.History)+1 {
		t.Errorf("%d token counts for %d messages", len(s.tokens), len(s.History))
	}
}
