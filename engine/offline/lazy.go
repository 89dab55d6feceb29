package offline

import (
	"regexp"
	"sync"
)

// lazyRe is a regular expression compiled on first use, not when the
// program starts: every program that links the offline model (every
// agentty command) would otherwise pay for its 34 expressions at start.
type lazyRe struct {
	once sync.Once
	src  string
	re   *regexp.Regexp
}

func lazyRegexp(src string) *lazyRe { return &lazyRe{src: src} }

func (l *lazyRe) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

func (l *lazyRe) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }
func (l *lazyRe) FindStringIndex(s string) []int       { return l.get().FindStringIndex(s) }
func (l *lazyRe) MatchString(s string) bool            { return l.get().MatchString(s) }
func (l *lazyRe) ReplaceAllString(s, with string) string {
	return l.get().ReplaceAllString(s, with)
}
func (l *lazyRe) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return l.get().FindAllStringSubmatchIndex(s, n)
}
