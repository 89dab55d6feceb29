package tools

import (
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
	"testing"
	"time"
)

// slowMatch is the obvious recursive matcher (exponential in the number of
// **): the reference globMatch must agree with on small inputs.
func slowMatch(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(name); i++ {
			if slowMatch(pat[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], name[0])
	return ok && slowMatch(pat[1:], name[1:])
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pat, name string
		want      bool
	}{
		{"**/build", "build", true},
		{"**/build", "a/b/build", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"a/**", "a/x/y", true},
		{"a/**", "b/x", false},
		{"*.log", "x.log", true},
		{"*.log", "d/x.log", false},
		{"**", "", true},
		{"a/*/c", "a/b/c", true},
		{"a/*/c", "a/b/d/c", false},
	} {
		if got := globMatch(tc.pat, tc.name); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pat, tc.name, got, tc.want)
		}
	}
	// Random small patterns and names: the same answers as the reference.
	r := rand.New(rand.NewPCG(1, 2))
	segs := []string{"**", "*", "a", "b", "a*", "?"}
	names := []string{"a", "b", "ab", "c"}
	for range 20000 {
		pat := make([]string, 1+r.IntN(5))
		for i := range pat {
			pat[i] = segs[r.IntN(len(segs))]
		}
		name := make([]string, r.IntN(6))
		for i := range name {
			name[i] = names[r.IntN(len(names))]
		}
		p, n := strings.Join(pat, "/"), strings.Join(name, "/")
		if got, want := globMatch(p, n), slowMatch(strings.Split(p, "/"), strings.Split(n, "/")); got != want {
			t.Fatalf("globMatch(%q, %q) = %v, the reference says %v", p, n, got, want)
		}
	}
}

// hostilePattern is n "**/" then a name that is never there.
func hostilePattern(n int) (pattern, name string) {
	return strings.Repeat("**/", n) + "never-there", strings.Repeat("d/", 40) + "file.go"
}

// TestGlobMatchHostile: a .gitignore line of 30 "**/" against a path 40
// folders deep (minutes of CPU for a recursive matcher, which tried every
// way of sharing the folders among the **) is answered at once. The
// deadline only catches a hang; the benchmark below measures.
func TestGlobMatchHostile(t *testing.T) {
	pat, name := hostilePattern(30)
	done := make(chan bool, 1)
	go func() { done <- globMatch(pat, name) }()
	select {
	case got := <-done:
		if got {
			t.Errorf("globMatch(%q, %q) = true", pat, name)
		}
	case <-time.After(time.Minute):
		t.Fatal("a pattern of 30 ** did not finish in a minute")
	}
}

// BenchmarkGlobMatchHostile: one hostile .gitignore line against one path.
func BenchmarkGlobMatchHostile(b *testing.B) {
	for _, n := range []int{8, 12, 30} {
		pat, name := hostilePattern(n)
		b.Run(fmt.Sprintf("doublestars=%d", n), func(b *testing.B) {
			for b.Loop() {
				globMatch(pat, name)
			}
		})
	}
}
