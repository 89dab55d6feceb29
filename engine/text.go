package engine

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Ellipsis marks where Clip cut text.
const Ellipsis = "…"

// Clip returns s cut to at most n runes: s itself when it has n runes or
// fewer, else its first n-1 runes and Ellipsis (n runes in all). It cuts
// between runes, never inside one, so multi-byte text (Chinese, emoji) stays
// valid UTF-8; a byte that is not UTF-8 counts as one rune and is kept as it
// is. n counts runes, not bytes and not terminal cells: a wide character
// counts one, and a sequence of runes drawn as one character (a flag, an
// emoji with modifiers) may be cut between its runes. For a width in cells,
// cut in the terminal's layer. n < 1 gives "".
//
// It is the one way agentty shortens text for a person or a log line.
// Clip does not allocate when s fits.
func Clip(s string, n int) string {
	if n < 1 {
		return ""
	}
	if len(s) <= n { // n bytes hold at most n runes
		return s
	}
	count, cut := 0, 0
	for i := range s {
		if count == n-1 {
			cut = i
		} else if count == n {
			return s[:cut] + Ellipsis
		}
		count++
	}
	return s
}

// OneLine returns s on one line, its runs of white space (newlines
// included) made single spaces and the ends trimmed, clipped to n runes as
// Clip does.
func OneLine(s string, n int) string {
	return Clip(strings.Join(strings.Fields(s), " "), n)
}

// runeFloor returns the largest i <= n at which s can be cut without
// splitting a UTF-8 sequence: i is len(s), or s[i] starts a rune, or the
// bytes before i are not a rune's start (invalid UTF-8 is cut anywhere).
func runeFloor(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	// A rune is at most utf8.UTFMax bytes: look back that far for the
	// start of the rune that s[n] belongs to.
	for i := n; i >= 0 && i > n-utf8.UTFMax; i-- {
		if !utf8.RuneStart(s[i]) {
			continue
		}
		if r, size := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || size > 1 {
			if i+size > n {
				return i // s[n] is inside the rune at i
			}
		}
		return n
	}
	return n
}

// truncate caps s at n bytes, on a rune boundary, saying what was cut. It
// is Clip for tool results, whose cap is a size in bytes.
func truncate(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := runeFloor(s, n)
	return s[:cut] + "\n[truncated: " + strconv.Itoa(cut) + " of " + strconv.Itoa(len(s)) + " bytes of this result shown]", true
}

// ShowSpaces returns s with what a person could not see made visible: a
// run of four or more spaces becomes "⟨N spaces⟩", a tab "⟨tab⟩", and a
// carriage return "⟨CR⟩", so that text padded to push its end out of view
// (a command, a config value to approve) shows that it was.
func ShowSpaces(s string) string {
	if !strings.Contains(s, "    ") && !strings.ContainsAny(s, "\t\r") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\t':
			b.WriteString("⟨tab⟩")
			i++
		case c == '\r':
			b.WriteString("⟨CR⟩")
			i++
		case c == ' ':
			j := i
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j-i >= 4 {
				b.WriteString("⟨" + strconv.Itoa(j-i) + " spaces⟩")
			} else {
				b.WriteString(s[i:j])
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// Wrap cuts s into lines of at most width runes, after the last space or
// comma in the second half of the width when there is one, else mid-word.
// Nothing of s is dropped (a space it breaks at ends its line), so the
// lines joined give s again. Existing newlines are kept. width < 1 is 1.
func Wrap(s string, width int) []string {
	width = max(width, 1)
	var out []string
	for _, para := range strings.Split(s, "\n") {
		r := []rune(para)
		for len(r) > width {
			cut := width
			for i := width; i > width/2; i-- {
				if r[i-1] == ' ' || r[i-1] == ',' {
					cut = i
					break
				}
			}
			out = append(out, string(r[:cut]))
			r = r[cut:]
		}
		out = append(out, string(r))
	}
	return out
}

// Plural is word for one, else word with an s: "1 case", "2 cases".
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// AttachedMarker begins a file attached to a message (the console's
// @path): the message as typed comes before it, each file after it in an
// <attached path="…"> block. Titles and lists show the message alone.
const AttachedMarker = "\n\n<attached path=\""
