package engine

import "slices"

// reserve makes room for the next run, which adds at most about n
// messages (its step limit's decisions and results): room for first of
// them now, and the mark (grow) past which the history is grown to all of
// them.
func (s *Session) reserve(n, first int) {
	n = min(max(n, 0), maxReserve+1) // a step limit of a billion, or one that overflowed
	s.bound = len(s.History) + n
	s.History = slices.Grow(s.History, min(n, first))
	s.growTokens()
}

// growTokens makes tokens (History's token counts, one longer) as long as
// History's room allows.
func (s *Session) growTokens() {
	if len(s.tokens) == 0 {
		s.tokens = append(s.tokens, 0)
	}
	s.tokens = slices.Grow(s.tokens, max(cap(s.History)+1-len(s.tokens), 0))
}

// firstReserve and maxReserve bound what reserve and grow set aside
// ahead of use, in messages (88 bytes each): a run's start takes room for
// a short run, and only a run that has used an eighth of what its step
// limit allows takes room for the rest, up to maxReserve (23 MB). A run
// with a step limit of a million that ends after ten steps reserves
// 1,024 messages, not the million's.
const (
	firstReserve = 1 << 10
	maxReserve   = 1 << 18
)

// grow makes room for one more message. The history doubles when full
// (append grows a long slice by a quarter, which copies a long run's
// history over and over) until the run has used an eighth of the room its
// step limit bounds; then it takes all of that room at once. A copy of a
// long history is cheap; what is not is that the copy's new array, late in
// a long run, makes the collector mark the whole history again and again
// (issue 42: 1.7 µs a step at 50,000 steps, against 1.3 without it).
func (s *Session) grow() {
	n := len(s.History)
	want := max(n, 8)
	if s.bound <= maxReserve && n >= s.bound/8 && s.bound > n {
		want = s.bound - n
	}
	s.History = slices.Grow(s.History, want)
	s.growTokens()
}

// appendHistory appends *m to the history, with its tokens.
func (s *Session) appendHistory(m *Message) {
	if len(s.History) == cap(s.History) {
		s.grow()
	} else if len(s.tokens) == 0 || len(s.tokens) == cap(s.tokens) {
		s.growTokens()
	}
	s.History = append(s.History, *m)
	s.tokens = append(s.tokens, s.tokens[len(s.tokens)-1]+estimateMessage(m))
}
